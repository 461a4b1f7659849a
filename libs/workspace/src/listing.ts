import { promises as fs } from 'node:fs';
import path from 'node:path';
import { fileTypeOfName } from './file-types.js';
import { errnoCode } from './paths.js';

/** One regular file of a workspace folder. */
export interface WorkspaceFileEntry {
  /** Workspace-relative POSIX path, e.g. "outputs/report.md". */
  path: string;
  /** File name (last path segment). */
  name: string;
  size: number;
  /** Last modification, ms since the epoch. */
  modifiedMs: number;
  /** Kind by extension (seed 001 §3.1). */
  type: string;
}

export interface ListFilesOptions {
  /** Only files modified at or after this time (ms since the epoch). */
  sinceMs?: number;
  /** Stop after this many files (default 10,000); `truncated` tells. */
  maxFiles?: number;
  /** Folder depth below each listed folder (default 16). */
  maxDepth?: number;
  /**
   * Directory entries read in all, files, folders and skipped ones alike
   * (default 100,000): a tree of a million empty folders costs no more than
   * this; `truncated` tells.
   */
  maxEntries?: number;
  /** Stops the walk between directory reads (throws its reason). */
  signal?: AbortSignal;
}

/** Entries read from one directory handle per batch (libuv's default is 32). */
const DIR_BUFFER = 256;

export interface FileListing {
  files: WorkspaceFileEntry[];
  truncated: boolean;
}

/**
 * Regular files under some top-level folders of a workspace (e.g. uploads/ and
 * outputs/), sorted by path. Symbolic links are neither followed nor listed,
 * and dot-files (in-progress uploads, metadata) are skipped, so nothing outside
 * the workspace can show up. `workspaceRoot` must be a real path.
 */
export async function listWorkspaceFiles(workspaceRoot: string, folders: readonly string[], opts: ListFilesOptions = {}): Promise<FileListing> {
  const maxFiles = opts.maxFiles ?? 10_000;
  const maxDepth = opts.maxDepth ?? 16;
  let entryBudget = opts.maxEntries ?? 100_000;
  const files: WorkspaceFileEntry[] = [];
  let truncated = false;
  /** maxFiles reached: nothing more is added. */
  let full = false;

  const walk = async (dirAbs: string, rel: string, depth: number): Promise<void> => {
    opts.signal?.throwIfAborted();
    // Read with a handle, not readdir(): a folder of millions of entries is read only up to the budget.
    const entries: import('node:fs').Dirent[] = [];
    let dir: import('node:fs').Dir;
    try {
      dir = await fs.opendir(dirAbs, { bufferSize: DIR_BUFFER });
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      throw err;
    }
    try {
      for (let d = await dir.read(); d !== null; d = await dir.read()) {
        if (entryBudget <= 0) {
          truncated = true;
          break;
        }
        entryBudget--;
        entries.push(d);
        if (entries.length % DIR_BUFFER === 0) opts.signal?.throwIfAborted();
      }
    } finally {
      await dir.close().catch(() => undefined);
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (full) return;
      if (entry.name.startsWith('.')) continue;
      const abs = path.join(dirAbs, entry.name);
      const childRel = `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (depth < maxDepth) await walk(abs, childRel, depth + 1);
        continue;
      }
      if (!entry.isFile()) continue; // symlinks, sockets, fifos
      const st = await fs.lstat(abs).catch(() => undefined);
      if (!st?.isFile()) continue;
      if (opts.sinceMs !== undefined && st.mtimeMs < opts.sinceMs) continue;
      if (files.length >= maxFiles) {
        truncated = full = true;
        return;
      }
      files.push({ path: childRel, name: entry.name, size: st.size, modifiedMs: Math.floor(st.mtimeMs), type: fileTypeOfName(entry.name) });
    }
  };

  for (const folder of folders) {
    if (full) break;
    if (folder.includes('/') || folder.includes('\\') || folder.startsWith('.'))
      throw new Error(`listWorkspaceFiles: "${folder}" is not a top-level folder name`);
    const abs = path.join(workspaceRoot, folder);
    // The top-level folder itself must be a real folder, not a link out of the workspace.
    const st = await fs.lstat(abs).catch(() => undefined);
    if (!st?.isDirectory()) continue;
    await walk(abs, folder, 1);
  }
  return { files, truncated };
}
