import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listWorkspaceFiles } from './listing.js';
import { createTempDir, type TempDir } from './temp-dir.js';

let tmp: TempDir;
beforeEach(async () => {
  tmp = await createTempDir();
  for (let i = 0; i < 10; i++) {
    await mkdir(path.join(tmp.path, 'outputs', `d${i}`), { recursive: true });
    await writeFile(path.join(tmp.path, 'outputs', `d${i}`, 'f.txt'), 'x');
  }
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

describe('listWorkspaceFiles bounds', () => {
  it('reads at most maxEntries directory entries, folders included, and reports the listing as truncated', async () => {
    const all = await listWorkspaceFiles(tmp.path, ['outputs']);
    expect(all).toMatchObject({ truncated: false });
    expect(all.files).toHaveLength(10);
    // 10 folders + 2 of their files = 12 entries read.
    const cut = await listWorkspaceFiles(tmp.path, ['outputs'], { maxEntries: 12 });
    expect(cut.truncated).toBe(true);
    expect(cut.files.map((f) => f.path)).toEqual(['outputs/d0/f.txt', 'outputs/d1/f.txt']);
  });

  it('stops with the reason of an aborted signal', async () => {
    const reason = new Error('budget spent');
    await expect(listWorkspaceFiles(tmp.path, ['outputs'], { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });
});
