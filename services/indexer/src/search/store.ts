import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from '@agentloop/core';
import { DocumentIndex, INDEX_FORMAT_VERSION, type IndexFile } from './doc-index.js';

export interface IndexStoreOptions {
  /** INDEX_ROOT, shared by every thread, session and replica. */
  root: string;
  /** Indexes not accessed for this long are stale: the sweeper removes them. */
  staleMs: number;
  /** Loaded indexes kept in memory. */
  cacheEntries: number;
  logger: Logger;
}

export interface OpenedIndex {
  index: DocumentIndex;
  /** True when this call built the index (no index of this content existed). */
  built: boolean;
}

/**
 * Search indexes on disk, one per content hash (seed 001 §1.2):
 *
 *   <root>/<hash[:2]>/<hash>.index.json   the index (its mtime is the last access)
 *   <root>/<hash[:2]>/<hash>.refs/<key>   one empty file per workspace path using it
 *   <root>/paths/<key>.json               {path, hash}: which content a path had when last indexed
 *
 * where key = sha256(tenant/thread/path). The same content is indexed once
 * whatever thread or session uploads it. When a path's content changes, its
 * reference to the old index is dropped, and an index no path references any
 * more (an orphan) is deleted. Every write is a rename or a single-file
 * create/unlink, so replicas sharing the folder never see a half-written index.
 */
export class IndexStore {
  private readonly cache = new Map<string, DocumentIndex>();
  private readonly building = new Map<string, Promise<DocumentIndex>>();

  constructor(private readonly opts: IndexStoreOptions) {}

  async init(): Promise<void> {
    await fs.mkdir(path.join(this.opts.root, 'paths'), { recursive: true });
  }

  indexPath(hash: string): string {
    return path.join(this.opts.root, hash.slice(0, 2), `${hash}.index.json`);
  }

  private refsDir(hash: string): string {
    return path.join(this.opts.root, hash.slice(0, 2), `${hash}.refs`);
  }

  private pathRecord(key: string): string {
    return path.join(this.opts.root, 'paths', `${key}.json`);
  }

  /**
   * The index of `hash` for the workspace file `pathId` (tenant/thread/path):
   * loaded from memory or disk, or built with `build` (once per hash at a time
   * in this process). Drops the path's reference to the index of its previous
   * content, deleting that index when it became an orphan.
   */
  async open(pathId: string, hash: string, build: () => Promise<IndexFile>): Promise<OpenedIndex> {
    const key = sha256(pathId);
    const unchanged = await this.releasePrevious(key, pathId, hash);
    let built = false;
    let index = this.cache.get(hash);
    if (index) {
      this.remember(hash, index);
      await this.touch(hash);
    } else {
      index = await this.loadFromDisk(hash);
      if (!index) {
        let pending = this.building.get(hash);
        if (!pending) {
          built = true;
          pending = this.buildAndSave(hash, build).finally(() => this.building.delete(hash));
          this.building.set(hash, pending);
        }
        index = await pending;
      }
      this.remember(hash, index);
    }
    // Same path, same content as last time: the reference and path record are already there.
    if (!unchanged || built) await this.addReference(key, pathId, hash);
    return { index, built };
  }

  /** Removes indexes not accessed within the stale period, and path records as old. Returns how many indexes went. */
  async sweepStale(now = Date.now()): Promise<number> {
    let removed = 0;
    const dirs = await fs.readdir(this.opts.root, { withFileTypes: true }).catch(() => []);
    for (const d of dirs) {
      if (!d.isDirectory() || !/^[0-9a-f]{2}$/.test(d.name)) continue;
      const dir = path.join(this.opts.root, d.name);
      for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
        const m = /^([0-9a-f]{64})\.index\.json$/.exec(name);
        if (!m?.[1]) continue;
        const st = await fs.stat(path.join(dir, name)).catch(() => undefined);
        if (st && now - st.mtimeMs > this.opts.staleMs) {
          await this.remove(m[1]);
          removed++;
        }
      }
    }
    const recordsDir = path.join(this.opts.root, 'paths');
    for (const name of await fs.readdir(recordsDir).catch(() => [] as string[])) {
      const st = await fs.stat(path.join(recordsDir, name)).catch(() => undefined);
      if (st && now - st.mtimeMs > this.opts.staleMs) await fs.rm(path.join(recordsDir, name), { force: true });
    }
    if (removed > 0) this.opts.logger.info({ removed }, 'stale indexes removed');
    return removed;
  }

  /** Drops the path's reference to its previous content's index; true when the content is unchanged. */
  private async releasePrevious(key: string, pathId: string, hash: string): Promise<boolean> {
    let previous: { path?: string; hash?: string } | undefined;
    try {
      previous = JSON.parse(await fs.readFile(this.pathRecord(key), 'utf8')) as { path?: string; hash?: string };
    } catch {
      return false;
    }
    if (previous.path !== pathId) return false;
    if (previous.hash === hash) return true;
    if (!previous.hash || !/^[0-9a-f]{64}$/.test(previous.hash)) return false;
    const old = previous.hash;
    await fs.rm(path.join(this.refsDir(old), key), { force: true });
    const left = await fs.readdir(this.refsDir(old)).catch(() => [] as string[]);
    if (left.length === 0) {
      await this.remove(old);
      this.opts.logger.info({ old_hash: old.slice(0, 12), new_hash: hash.slice(0, 12) }, 'orphan index removed (file content replaced)');
    }
    return false;
  }

  private async addReference(key: string, pathId: string, hash: string): Promise<void> {
    await fs.mkdir(this.refsDir(hash), { recursive: true });
    await fs.writeFile(path.join(this.refsDir(hash), key), '');
    await writeAtomic(this.pathRecord(key), JSON.stringify({ path: pathId, hash }));
  }

  private async remove(hash: string): Promise<void> {
    this.cache.delete(hash);
    await fs.rm(this.indexPath(hash), { force: true });
    await fs.rm(this.refsDir(hash), { recursive: true, force: true });
  }

  private async loadFromDisk(hash: string): Promise<DocumentIndex | undefined> {
    let text: string;
    try {
      text = await fs.readFile(this.indexPath(hash), 'utf8');
    } catch {
      return undefined;
    }
    try {
      const file = JSON.parse(text) as IndexFile;
      if (file.version !== INDEX_FORMAT_VERSION || file.hash !== hash || !Array.isArray(file.chunks)) return undefined;
      await this.touch(hash);
      return new DocumentIndex(file);
    } catch (err) {
      this.opts.logger.warn({ hash: hash.slice(0, 12), err: err instanceof Error ? err.message : String(err) }, 'unreadable index; rebuilding');
      return undefined;
    }
  }

  private async buildAndSave(hash: string, build: () => Promise<IndexFile>): Promise<DocumentIndex> {
    const file = await build();
    await fs.mkdir(path.dirname(this.indexPath(hash)), { recursive: true });
    await writeAtomic(this.indexPath(hash), JSON.stringify(file));
    this.opts.logger.info({ hash: hash.slice(0, 12), chunks: file.chunks.length, kind: file.kind }, 'index built');
    return new DocumentIndex(file);
  }

  /** Marks an access (the mtime is what staleness is measured from). */
  private async touch(hash: string): Promise<void> {
    const now = new Date();
    await fs.utimes(this.indexPath(hash), now, now).catch(() => undefined);
  }

  private remember(hash: string, index: DocumentIndex): void {
    this.cache.delete(hash);
    if (this.opts.cacheEntries <= 0) return;
    this.cache.set(hash, index);
    while (this.cache.size > this.opts.cacheEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
  }
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

async function writeAtomic(file: string, data: string): Promise<void> {
  const tmp = `${file}.${randomUUID()}.tmp`;
  await fs.writeFile(tmp, data);
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
}
