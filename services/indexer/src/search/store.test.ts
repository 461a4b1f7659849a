import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '@agentloop/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Extraction } from '../extract/types.js';
import { buildIndexFile, type IndexFile } from './doc-index.js';
import { IndexStore, sha256 } from './store.js';

let root: string;
let store: IndexStore;
let builds: number;

beforeEach(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'indexer-store-'));
  store = new IndexStore({ root, staleMs: 24 * 3_600_000, cacheEntries: 4, logger: silentLogger() });
  await store.init();
  builds = 0;
});
afterEach(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

function builder(text: string, hash: string) {
  return () => {
    builds++;
    const ex: Extraction = { kind: 'pdf', total: 1, units: [{ n: 1, text }], complete: true, notes: [] };
    return Promise.resolve<IndexFile>(buildIndexFile(ex, hash));
  };
}

const exists = (p: string) =>
  fs.stat(p).then(
    () => true,
    () => false,
  );

describe('IndexStore', () => {
  it('stores one index per content hash under <hash[:2]>/ and reuses it for another thread', async () => {
    const h = sha256('content-a');
    const first = await store.open('t1/th1/uploads/a.pdf', h, builder('alpha', h));
    const second = await store.open('t1/th2/uploads/copy.pdf', h, builder('alpha', h));
    expect([first.built, second.built, builds]).toEqual([true, false, 1]);
    expect(await exists(path.join(root, h.slice(0, 2), `${h}.index.json`))).toBe(true);
  });

  it('loads an index from disk in a fresh store without rebuilding', async () => {
    const h = sha256('content-b');
    await store.open('t/th/a.pdf', h, builder('alpha', h));
    const other = new IndexStore({ root, staleMs: 3_600_000, cacheEntries: 4, logger: silentLogger() });
    const again = await other.open('t/th/a.pdf', h, builder('alpha', h));
    expect(again.built).toBe(false);
    expect(again.index.search('alpha', 5).matches).toHaveLength(1);
  });

  it('deletes the orphaned index when a file is replaced by different content', async () => {
    const old = sha256('old');
    const next = sha256('new');
    await store.open('t/th/report.pdf', old, builder('old words', old));
    await store.open('t/th/report.pdf', next, builder('new words', next));
    expect(await exists(store.indexPath(old))).toBe(false);
    expect(await exists(store.indexPath(next))).toBe(true);
  });

  it('keeps the old index while another path still uses that content', async () => {
    const old = sha256('shared');
    const next = sha256('changed');
    await store.open('t/th1/report.pdf', old, builder('shared', old));
    await store.open('t/th2/report.pdf', old, builder('shared', old));
    await store.open('t/th1/report.pdf', next, builder('changed', next));
    expect(await exists(store.indexPath(old))).toBe(true);
  });

  it('sweeps indexes not accessed for the stale period and keeps recent ones', async () => {
    const stale = sha256('stale');
    const fresh = sha256('fresh');
    await store.open('t/th/s.pdf', stale, builder('s', stale));
    await store.open('t/th/f.pdf', fresh, builder('f', fresh));
    const dayAgo = new Date(Date.now() - 25 * 3_600_000);
    await fs.utimes(store.indexPath(stale), dayAgo, dayAgo);
    expect(await store.sweepStale()).toBe(1);
    expect([await exists(store.indexPath(stale)), await exists(store.indexPath(fresh))]).toEqual([false, true]);
  });
});
