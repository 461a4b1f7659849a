import { promises as fsp } from 'node:fs';
import { mkdir, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { filesChangedSinceRunStart, recordRunStart, RUN_RECORDS_DIR } from './run-outputs.js';
import { createTempDir, type TempDir } from './temp-dir.js';

let tmp: TempDir;
let ws: string;
beforeEach(async () => {
  tmp = await createTempDir('agentloop-runout-');
  ws = tmp.path;
  await mkdir(path.join(ws, 'outputs'), { recursive: true });
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

describe('run start records', () => {
  it('reports files created or changed after the run started, whatever the clocks say', async () => {
    await writeFile(path.join(ws, 'outputs', 'kept.md'), 'same');
    await writeFile(path.join(ws, 'outputs', 'edited.md'), 'v1');
    expect(await recordRunStart(ws, 'run-1', ['outputs'])).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'edited.md'), 'v2 longer');
    await writeFile(path.join(ws, 'outputs', 'new.md'), 'new');
    const changed = await filesChangedSinceRunStart(ws, 'run-1', ['outputs']);
    expect(changed?.files.map((f) => f.path)).toEqual(['outputs/edited.md', 'outputs/new.md']);
  });

  it('keeps the first record of a run (a resumed run does not forget what it wrote before)', async () => {
    expect(await recordRunStart(ws, 'run-1', ['outputs'])).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'before-crash.md'), 'x');
    expect(await recordRunStart(ws, 'run-1', ['outputs'])).toBe(false);
    expect((await filesChangedSinceRunStart(ws, 'run-1', ['outputs']))?.files.map((f) => f.name)).toEqual(['before-crash.md']);
  });

  it('an empty workspace is not listed: every file there at the end is new', async () => {
    expect(await recordRunStart(ws, 'run-e', ['outputs'], { emptyWorkspace: true })).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'a.md'), 'a');
    expect((await filesChangedSinceRunStart(ws, 'run-e', ['outputs']))?.files.map((f) => f.path)).toEqual(['outputs/a.md']);
    // Only the record is left behind, no temporary file.
    expect(await readdir(path.join(ws, RUN_RECORDS_DIR))).toEqual(['run-e.json']);
  });

  it('refuses a records folder that is a link, also when it was there before', async () => {
    const elsewhere = path.join(ws, 'elsewhere');
    await mkdir(elsewhere);
    await symlink(elsewhere, path.join(ws, RUN_RECORDS_DIR));
    await expect(recordRunStart(ws, 'run-l', ['outputs'])).rejects.toThrow('not a plain folder');
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('the first listing of a run uses the record this process just wrote; later ones read the file', async () => {
    await writeFile(path.join(ws, 'outputs', 'before.md'), 'b');
    expect(await recordRunStart(ws, 'run-c', ['outputs'])).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'after.md'), 'a');
    const readFile = vi.spyOn(fsp, 'readFile');
    try {
      expect((await filesChangedSinceRunStart(ws, 'run-c', ['outputs']))?.files.map((f) => f.name)).toEqual(['after.md']);
      expect(readFile).not.toHaveBeenCalled();
      expect((await filesChangedSinceRunStart(ws, 'run-c', ['outputs']))?.files.map((f) => f.name)).toEqual(['after.md']);
      expect(readFile).toHaveBeenCalledTimes(1);
    } finally {
      readFile.mockRestore();
    }
  });

  it('concurrent first starts leave one record', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => recordRunStart(ws, 'run-x', ['outputs'])));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await readdir(path.join(ws, RUN_RECORDS_DIR))).toEqual(['run-x.json']);
  });

  it('a run without a record gets undefined, and run ids cannot name other files', async () => {
    expect(await filesChangedSinceRunStart(ws, 'never-started', ['outputs'])).toBeUndefined();
    await expect(recordRunStart(ws, '../../evil', ['outputs'])).rejects.toThrow('invalid run id');
  });

  it('truncates to maxFiles', async () => {
    await recordRunStart(ws, 'run-1', ['outputs']);
    for (const n of ['a', 'b', 'c']) await writeFile(path.join(ws, 'outputs', `${n}.txt`), n);
    expect(await filesChangedSinceRunStart(ws, 'run-1', ['outputs'], { maxFiles: 2 })).toMatchObject({
      truncated: true,
      files: [{ name: 'a.txt' }, { name: 'b.txt' }],
    });
  });

  it('prunes records older than 30 days when a run starts, at most once an hour per workspace', async () => {
    const records = path.join(ws, RUN_RECORDS_DIR);
    const stale = async (name: string) => {
      await mkdir(records, { recursive: true });
      await writeFile(path.join(records, name), '{}');
      const old = new Date(Date.now() - 31 * 24 * 3600 * 1000);
      await utimes(path.join(records, name), old, old);
    };
    await stale('old-1.json');
    await recordRunStart(ws, 'run-1', ['outputs']);
    expect((await readdir(records)).sort()).toEqual(['run-1.json']);
    // Within the hour, a new start does not list the folder again.
    await stale('old-2.json');
    await recordRunStart(ws, 'run-2', ['outputs']);
    expect((await readdir(records)).sort()).toEqual(['old-2.json', 'run-1.json', 'run-2.json']);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61 * 60 * 1000);
      await recordRunStart(ws, 'run-3', ['outputs']);
    } finally {
      vi.useRealTimers();
    }
    expect((await readdir(records)).sort()).toEqual(['run-1.json', 'run-2.json', 'run-3.json']);
  });
});
