import { execFileSync } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import { mkdir, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  filesChangedSinceRunStart,
  LEGACY_IMPORT_WINDOW_MS,
  LEGACY_RUN_RECORDS_DIR,
  recordRunStart,
  RUN_RECORDS_DIR,
  type RunRecordsPlace,
} from './run-outputs.js';
import { createTempDir, type TempDir } from './temp-dir.js';

let tmp: TempDir;
let ws: string;
/** The workspace and the thread's private folder, as WorkspaceManager lays them out. */
let place: RunRecordsPlace;
let records: string;
beforeEach(async () => {
  tmp = await createTempDir('agentloop-runout-');
  ws = path.join(tmp.path, 'tenant-a', 'thread-1');
  place = { root: ws, privateDir: path.join(tmp.path, '.agentloop', 'tenant-a', 'thread-1') };
  records = path.join(place.privateDir, RUN_RECORDS_DIR);
  await mkdir(path.join(ws, 'outputs'), { recursive: true });
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

describe('run start records', () => {
  it('reports files created or changed after the run started, whatever the clocks say', async () => {
    await writeFile(path.join(ws, 'outputs', 'kept.md'), 'same');
    await writeFile(path.join(ws, 'outputs', 'edited.md'), 'v1');
    expect(await recordRunStart(place, 'run-1', ['outputs'])).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'edited.md'), 'v2 longer');
    await writeFile(path.join(ws, 'outputs', 'new.md'), 'new');
    const changed = await filesChangedSinceRunStart(place, 'run-1', ['outputs']);
    expect(changed?.files.map((f) => f.path)).toEqual(['outputs/edited.md', 'outputs/new.md']);
  });

  it('keeps the first record of a run (a resumed run does not forget what it wrote before)', async () => {
    expect(await recordRunStart(place, 'run-1', ['outputs'])).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'before-crash.md'), 'x');
    expect(await recordRunStart(place, 'run-1', ['outputs'])).toBe(false);
    expect((await filesChangedSinceRunStart(place, 'run-1', ['outputs']))?.files.map((f) => f.name)).toEqual(['before-crash.md']);
  });

  it('an empty workspace is not listed: every file there at the end is new', async () => {
    expect(await recordRunStart(place, 'run-e', ['outputs'], { emptyWorkspace: true })).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'a.md'), 'a');
    expect((await filesChangedSinceRunStart(place, 'run-e', ['outputs']))?.files.map((f) => f.path)).toEqual(['outputs/a.md']);
    // Only the record is left behind, no temporary file.
    expect(await readdir(records)).toEqual(['run-e.json']);
  });

  it('keeps records in the private folder, none in the workspace', async () => {
    expect(await recordRunStart(place, 'run-p', ['outputs'])).toBe(true);
    expect(await readdir(records)).toEqual(['run-p.json']);
    expect(await readdir(ws)).toEqual(['outputs']);
  });

  it('the first listing of a run uses the record this process just wrote; later ones read the file', async () => {
    await writeFile(path.join(ws, 'outputs', 'before.md'), 'b');
    expect(await recordRunStart(place, 'run-c', ['outputs'])).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'after.md'), 'a');
    const open = vi.spyOn(fsp, 'open');
    const opened = () => open.mock.calls.filter(([file]) => String(file).endsWith('run-c.json')).length;
    try {
      expect((await filesChangedSinceRunStart(place, 'run-c', ['outputs']))?.files.map((f) => f.name)).toEqual(['after.md']);
      expect(opened()).toBe(0);
      expect((await filesChangedSinceRunStart(place, 'run-c', ['outputs']))?.files.map((f) => f.name)).toEqual(['after.md']);
      expect(opened()).toBe(1);
    } finally {
      open.mockRestore();
    }
  });

  it('a record replaced by a FIFO, a link or an oversized file (a script under SKILL_SCRIPT_ISOLATION=none reaches the private folder) reads as none', async () => {
    await mkdir(records, { recursive: true });
    execFileSync('mkfifo', [path.join(records, 'run-fifo.json')]);
    await writeFile(path.join(tmp.path, 'elsewhere.json'), JSON.stringify({ run_id: 'run-link', created_at: '', files: {} }));
    await symlink(path.join(tmp.path, 'elsewhere.json'), path.join(records, 'run-link.json'));
    await writeFile(path.join(records, 'run-big.json'), '');
    await fsp.truncate(path.join(records, 'run-big.json'), 64 * 1024 * 1024);
    for (const run of ['run-fifo', 'run-link', 'run-big']) expect(await filesChangedSinceRunStart(place, run, ['outputs'])).toBeUndefined();
  });

  it('concurrent first starts leave one record', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => recordRunStart(place, 'run-x', ['outputs'])));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await readdir(records)).toEqual(['run-x.json']);
  });

  it('a run without a record gets undefined, and run ids cannot name other files', async () => {
    expect(await filesChangedSinceRunStart(place, 'never-started', ['outputs'])).toBeUndefined();
    await expect(recordRunStart(place, '../../evil', ['outputs'])).rejects.toThrow('invalid run id');
  });

  it('truncates to maxFiles', async () => {
    await recordRunStart(place, 'run-1', ['outputs']);
    for (const n of ['a', 'b', 'c']) await writeFile(path.join(ws, 'outputs', `${n}.txt`), n);
    expect(await filesChangedSinceRunStart(place, 'run-1', ['outputs'], { maxFiles: 2 })).toMatchObject({
      truncated: true,
      files: [{ name: 'a.txt' }, { name: 'b.txt' }],
    });
  });

  it('prunes records older than 30 days when a run starts, at most once an hour per workspace', async () => {
    const stale = async (name: string) => {
      await mkdir(records, { recursive: true });
      await writeFile(path.join(records, name), '{}');
      const old = new Date(Date.now() - 31 * 24 * 3600 * 1000);
      await utimes(path.join(records, name), old, old);
    };
    await stale('old-1.json');
    await recordRunStart(place, 'run-1', ['outputs']);
    expect((await readdir(records)).sort()).toEqual(['run-1.json']);
    // Within the hour, a new start does not list the folder again.
    await stale('old-2.json');
    await recordRunStart(place, 'run-2', ['outputs']);
    expect((await readdir(records)).sort()).toEqual(['old-2.json', 'run-1.json', 'run-2.json']);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 61 * 60 * 1000);
      await recordRunStart(place, 'run-3', ['outputs']);
    } finally {
      vi.useRealTimers();
    }
    expect((await readdir(records)).sort()).toEqual(['run-1.json', 'run-2.json', 'run-3.json']);
  });
});

describe('upgrade from records kept in the workspace (<workspace>/.runs)', () => {
  const legacyDir = () => path.join(ws, LEGACY_RUN_RECORDS_DIR);
  const legacyRecord = async (runId: string, files: Record<string, [number, number]>, name = `${runId}.json`) => {
    await mkdir(legacyDir(), { recursive: true });
    await writeFile(path.join(legacyDir(), name), JSON.stringify({ run_id: runId, created_at: '2026-01-01T00:00:00Z', files }));
  };
  /** A run whose start saw old.md; it then wrote made.md (before the upgrade) and ends after it. */
  const startedBeforeUpgrade = async (_runId: string) => {
    await writeFile(path.join(ws, 'outputs', 'old.md'), 'old');
    const st = await fsp.stat(path.join(ws, 'outputs', 'old.md'));
    await writeFile(path.join(ws, 'outputs', 'made.md'), 'made');
    return { 'outputs/old.md': [st.size, Math.floor(st.mtimeMs)] as [number, number] };
  };

  it('a run started under the old layout keeps its start (read once, as untrusted input); the old folder goes', async () => {
    await legacyRecord('run-old', await startedBeforeUpgrade('run-old'));
    expect(await recordRunStart(place, 'run-old', ['outputs'])).toBe(true);
    await expect(fsp.lstat(legacyDir())).rejects.toThrow('ENOENT');
    expect((await filesChangedSinceRunStart(place, 'run-old', ['outputs']))?.files.map((f) => f.path)).toEqual(['outputs/made.md']);
  });

  it.each([
    [
      'a link to a record elsewhere',
      async (files: Record<string, [number, number]>) => {
        const elsewhere = path.join(tmp.path, 'elsewhere.json');
        await writeFile(elsewhere, JSON.stringify({ run_id: 'run-old', created_at: '', files }));
        await mkdir(legacyDir(), { recursive: true });
        await symlink(elsewhere, path.join(legacyDir(), 'run-old.json'));
      },
    ],
    [
      'a FIFO',
      async () => {
        await mkdir(legacyDir(), { recursive: true });
        execFileSync('mkfifo', [path.join(legacyDir(), 'run-old.json')]);
      },
    ],
    [
      'an oversized file',
      async () => {
        await mkdir(legacyDir(), { recursive: true });
        await writeFile(path.join(legacyDir(), 'run-old.json'), '');
        await fsp.truncate(path.join(legacyDir(), 'run-old.json'), 64 * 1024 * 1024);
      },
    ],
    ['another run’s record', (files: Record<string, [number, number]>) => legacyRecord('run-other', files, 'run-old.json')],
    [
      'a malformed record',
      async () => {
        await mkdir(legacyDir(), { recursive: true });
        await writeFile(path.join(legacyDir(), 'run-old.json'), '{"run_id":"run-old","files":{"outputs/old.md":"x"}}');
      },
    ],
    [
      'a records folder that is a link',
      async (files: Record<string, [number, number]>) => {
        const elsewhere = path.join(tmp.path, 'elsewhere');
        await mkdir(elsewhere);
        await writeFile(path.join(elsewhere, 'run-old.json'), JSON.stringify({ run_id: 'run-old', created_at: '', files }));
        await symlink(elsewhere, legacyDir());
      },
    ],
  ])('%s is not taken: the start is recorded from the workspace as it is, and nothing is removed', async (_what, plant) => {
    await plant(await startedBeforeUpgrade('run-old'));
    const before = await fsp.lstat(legacyDir());
    expect(await recordRunStart(place, 'run-old', ['outputs'])).toBe(true);
    // Not a record: left where it was, as it was (only record-shaped files move).
    const after = await fsp.lstat(legacyDir());
    expect([after.ino, after.isSymbolicLink()]).toEqual([before.ino, before.isSymbolicLink()]);
    if (!after.isSymbolicLink()) expect(await readdir(legacyDir())).toEqual(['run-old.json']);
    await writeFile(path.join(ws, 'outputs', 'after.md'), 'after');
    expect((await filesChangedSinceRunStart(place, 'run-old', ['outputs']))?.files.map((f) => f.path)).toEqual(['outputs/after.md']);
    if (existsSync(path.join(tmp.path, 'elsewhere'))) expect(await readdir(path.join(tmp.path, 'elsewhere'))).toEqual(['run-old.json']);
  });

  it("reads only the starting run's old record: another run's is neither read nor removed", async () => {
    await legacyRecord('run-old', await startedBeforeUpgrade('run-old'));
    await legacyRecord('run-other', {});
    expect(await recordRunStart(place, 'run-new', ['outputs'])).toBe(true);
    expect(await readdir(legacyDir())).toEqual(expect.arrayContaining(['run-old.json', 'run-other.json']));
    expect(await readdir(records)).toEqual(['run-new.json']);
  });

  it('a record changed after the new layout was first used is not taken, nor one read after the import window', async () => {
    const files = await startedBeforeUpgrade('run-old');
    // The layout's first use (a start of another thread) comes before the record is written.
    await recordRunStart({ root: ws, privateDir: path.join(tmp.path, '.agentloop', 'tenant-a', 'thread-0') }, 'run-0', ['outputs']);
    await new Promise((r) => setTimeout(r, 20));
    await legacyRecord('run-old', files);
    expect(await recordRunStart(place, 'run-old', ['outputs'])).toBe(true);
    expect((await filesChangedSinceRunStart(place, 'run-old', ['outputs']))?.files).toEqual([]);
    expect(await readdir(legacyDir())).toEqual(['run-old.json']);

    // Another thread's record written before the layout's first use, read a day later.
    const later = { root: path.join(tmp.path, 'tenant-a', 'thread-2'), privateDir: path.join(tmp.path, '.agentloop', 'tenant-a', 'thread-2') };
    await mkdir(path.join(later.root, 'outputs'), { recursive: true });
    await mkdir(path.join(later.root, LEGACY_RUN_RECORDS_DIR));
    await writeFile(path.join(later.root, 'outputs', 'made.md'), 'made');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + LEGACY_IMPORT_WINDOW_MS + 60_000);
      const open = vi.spyOn(fsp, 'open');
      try {
        expect(await recordRunStart(later, 'run-old', ['outputs'])).toBe(true);
        expect(open.mock.calls.filter(([file]) => String(file).includes(LEGACY_RUN_RECORDS_DIR))).toEqual([]);
      } finally {
        open.mockRestore();
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps the user's own files in a folder named .runs: only the run's record is taken", async () => {
    await legacyRecord('run-old', await startedBeforeUpgrade('run-old'));
    await writeFile(path.join(legacyDir(), 'notes.txt'), 'mine');
    await writeFile(path.join(legacyDir(), 'data.json'), '{"files":{}}');
    expect(await recordRunStart(place, 'run-old', ['outputs'])).toBe(true);
    expect((await readdir(legacyDir())).sort()).toEqual(['data.json', 'notes.txt']);
    expect(await fsp.readFile(path.join(legacyDir(), 'notes.txt'), 'utf8')).toBe('mine');
  });

  it('a record planted in the old place later is never read', async () => {
    expect(await recordRunStart(place, 'run-1', ['outputs'])).toBe(true);
    await writeFile(path.join(ws, 'outputs', 'made.md'), 'made');
    await legacyRecord('run-1', {});
    await legacyRecord('run-2', { 'outputs/made.md': [4, 0] });
    expect(await recordRunStart(place, 'run-1', ['outputs'])).toBe(false);
    expect(await recordRunStart(place, 'run-2', ['outputs'])).toBe(true);
    expect((await filesChangedSinceRunStart(place, 'run-1', ['outputs']))?.files.map((f) => f.path)).toEqual(['outputs/made.md']);
    expect((await filesChangedSinceRunStart(place, 'run-2', ['outputs']))?.files).toEqual([]);
  });
});
