import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { silentLogger } from '@agentloop/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filesChangedSinceRunStart, noteRunStartWithoutWorkspace, recordRunStart, RUN_RECORDS_DIR, type RunRecordsPlace } from './run-outputs.js';
import { createTempDir, type TempDir } from './temp-dir.js';
import { WorkspaceManager } from './workspace.js';

let tmp: TempDir;
let manager: WorkspaceManager;
beforeEach(async () => {
  tmp = await createTempDir('agentloop-nows-');
  manager = new WorkspaceManager({ root: path.join(tmp.path, 'root'), logger: silentLogger() });
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

const names = async (place: RunRecordsPlace, runId: string) => (await filesChangedSinceRunStart(place, runId, ['outputs']))?.files.map((f) => f.path);

describe('a run that starts before its workspace exists', () => {
  it('probe tells without creating anything; an ensured workspace needs no look', async () => {
    const probed = await manager.probe('tenant-a', 'thread-1');
    expect(probed.exists).toBe(false);
    await expect(stat(path.dirname(probed.root))).rejects.toThrow('ENOENT');
    const ws = await manager.ensure('tenant-a', 'thread-1');
    expect(await manager.probe('tenant-a', 'thread-1')).toEqual({ root: ws.root, privateDir: ws.privateDir, exists: true });
    // Another process that never ensured it looks, and finds it.
    expect((await new WorkspaceManager({ root: path.join(tmp.path, 'root'), logger: silentLogger() }).probe('tenant-a', 'thread-1')).exists).toBe(true);
  });

  it('lists everything once a tool created the workspace; a listing of a missing one ends the note', async () => {
    const place = await manager.probe('tenant-a', 'thread-2');
    const { root } = place;
    noteRunStartWithoutWorkspace(root, 'run-1');
    await manager.ensure('tenant-a', 'thread-2');
    await writeFile(path.join(root, 'outputs', 'made.md'), 'x');
    expect(await names(place, 'run-1')).toEqual(['outputs/made.md']);

    const missingPlace = await manager.probe('tenant-a', 'thread-2b');
    const missing = missingPlace.root;
    noteRunStartWithoutWorkspace(missing, 'run-1b');
    expect(await names(missingPlace, 'run-1b')).toEqual([]);
    await expect(stat(missing)).rejects.toThrow('ENOENT');
    // Its run is over: a creation later writes no record for it.
    await manager.ensure('tenant-a', 'thread-2b');
    await expect(stat(path.join(missingPlace.privateDir, RUN_RECORDS_DIR, 'run-1b.json'))).rejects.toThrow('ENOENT');
  });

  it('a workspace another process created during the run gets the run’s empty record at its end, for a resume', async () => {
    const place = await manager.probe('tenant-a', 'thread-5');
    const { root } = place;
    noteRunStartWithoutWorkspace(root, 'run-5');
    await mkdir(path.join(root, 'outputs'), { recursive: true });
    await writeFile(path.join(root, 'outputs', 'part-1.md'), 'x');
    expect(await names(place, 'run-5')).toEqual(['outputs/part-1.md']);
    // The note is gone; the record on disk keeps the run's empty start for its resumption.
    expect(await recordRunStart(place, 'run-5', ['outputs'])).toBe(false);
    await writeFile(path.join(root, 'outputs', 'part-2.md'), 'y');
    expect(await names(place, 'run-5')).toEqual(['outputs/part-1.md', 'outputs/part-2.md']);
  });

  it('the creation in this process writes the noted runs’ empty start records, for a listing elsewhere', async () => {
    const place = await manager.probe('tenant-a', 'thread-3');
    const { root } = place;
    noteRunStartWithoutWorkspace(root, 'run-2');
    noteRunStartWithoutWorkspace(root, 'run-3');
    await manager.ensure('tenant-a', 'thread-3');
    for (const run of ['run-2', 'run-3']) {
      const record = JSON.parse(await readFile(path.join(place.privateDir, RUN_RECORDS_DIR, `${run}.json`), 'utf8')) as { run_id: string; files: object };
      expect(record).toMatchObject({ run_id: run, files: {} });
    }
    // A resumed run keeps that record: what it wrote before the interruption stays its own.
    await writeFile(path.join(root, 'outputs', 'before-interrupt.md'), 'x');
    expect(await recordRunStart(place, 'run-2', ['outputs'])).toBe(false);
  });

  it('a resumed run whose workspace another process created records an empty start', async () => {
    const place = await manager.probe('tenant-a', 'thread-4');
    const { root } = place;
    noteRunStartWithoutWorkspace(root, 'run-4');
    // Created elsewhere (a skill sandbox, an upload): no record written for the run.
    await mkdir(path.join(root, 'outputs'), { recursive: true });
    await writeFile(path.join(root, 'outputs', 'by-script.md'), 'x');
    expect(await recordRunStart(place, 'run-4', ['outputs'])).toBe(true);
    await writeFile(path.join(root, 'outputs', 'after-resume.md'), 'y');
    expect(await names(place, 'run-4')).toEqual(['outputs/after-resume.md', 'outputs/by-script.md']);
  });
});
