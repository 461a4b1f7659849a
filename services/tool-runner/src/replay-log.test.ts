import { appendFile, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { Headers, MemoryBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import {
  create,
  fromBinary,
  toBinary,
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  WorkspaceRequestSchema,
  WorkspaceRequest_Action,
} from '@agentloop/proto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadToolRunnerConfig } from './config.js';
import { TOOL_SUBJECTS, createToolRunner, type ToolRunner } from './service.js';
import { LEGACY_IMPORT_WINDOW_MS, ReplayLog, parseEntry } from './replay-log.js';
import { createTempDir, type TempDir } from './testing/index.js';

let tmp: TempDir;
let bus: MemoryBus;
let runner: ToolRunner;

beforeEach(async () => {
  tmp = await createTempDir();
  bus = new MemoryBus();
  runner = createToolRunner({ bus, logger: silentLogger(), config: loadToolRunnerConfig({ WORKSPACE_ROOT: path.join(tmp.path, 'ws') }) });
  await runner.start();
});
afterEach(async () => {
  await runner.stop();
  await bus.close();
  await tmp[Symbol.asyncDispose]();
});

async function append(toolCallId: string, headers: Record<string, string> = {}) {
  const req = create(ExecuteToolRequestSchema, {
    tenantId: 't',
    threadId: 'th',
    runId: 'run-1',
    toolCallId,
    toolName: 'write_file',
    argsJson: JSON.stringify({ file_path: 'outputs/log.txt', content: `${toolCallId}\n`, append: true }),
  });
  const reply = await bus.request(TOOL_SUBJECTS.execute, toBinary(ExecuteToolRequestSchema, req), {
    timeoutMs: 5_000,
    headers: { [Headers.tenant]: 't', [Headers.idempotencyKey]: `run-1:${toolCallId}`, ...headers },
  });
  return fromBinary(ExecuteToolResponseSchema, reply.data);
}

const log = () => readFile(path.join(tmp.path, 'ws', 't', 'th', 'outputs', 'log.txt'), 'utf8');

describe('replay log (idempotency keys)', () => {
  it('answers a repeated call with the same idempotency key from the record, without running it again', async () => {
    const first = await append('c1');
    const second = await append('c1');
    expect(second.content).toBe(first.content);
    expect(await log()).toBe('c1\n');
  });

  it('replay-only never executes: an unknown call answers NOT_EXECUTED', async () => {
    const res = await append('c2', { [Headers.replayOnly]: '1' });
    expect(res.error?.code).toBe('NOT_EXECUTED');
    await expect(log()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('replay-only returns the recorded reply of a call that ran', async () => {
    const ran = await append('c3');
    const res = await append('c3', { [Headers.replayOnly]: '1' });
    expect(res.error).toBeUndefined();
    expect(res.content).toBe(ran.content);
    expect(await log()).toBe('c3\n');
  });

  it('does not start a call twice: a second request while the first is recorded as started answers IN_PROGRESS', async () => {
    await new ReplayLog(runner.workspaces).begin('t', 'th', 'run-1:c4', 'write_file');
    const res = await append('c4');
    expect(res.error?.code).toBe('IN_PROGRESS');
    await expect(log()).rejects.toMatchObject({ code: 'ENOENT' });
    const again = await append('c4', { [Headers.reexecute]: '1' });
    expect(again.error).toBeUndefined();
    expect(await log()).toBe('c4\n');
  });

  it('keeps no record of an idempotent call (running it again is harmless), and runs it again when asked twice', async () => {
    const call = async () => {
      const req = create(ExecuteToolRequestSchema, { tenantId: 't', threadId: 'th', runId: 'run-1', toolCallId: 'n1', toolName: 'now', argsJson: '{}' });
      const reply = await bus.request(TOOL_SUBJECTS.execute, toBinary(ExecuteToolRequestSchema, req), {
        timeoutMs: 5_000,
        headers: { [Headers.tenant]: 't', [Headers.idempotencyKey]: 'run-1:n1' },
      });
      return fromBinary(ExecuteToolResponseSchema, reply.data);
    };
    expect((await call()).error).toBeUndefined();
    expect(await new ReplayLog(runner.workspaces).get('t', 'th', 'run-1:n1')).toBeUndefined();
    // A side-effecting call under a key is recorded (see above); this one is simply served again.
    expect((await call()).error).toBeUndefined();
  });

  it('a completed call is one file of two lines, the reply appended after the start (no temp file, no rename)', async () => {
    await append('c6');
    const files = await readdir(effects());
    expect(files).toEqual([entryFile('run-1:c6')]);
    const lines = (await readFile(path.join(effects(), entryFile('run-1:c6')), 'utf8')).split('\n').filter((l) => l !== '');
    expect(lines.map((l) => (JSON.parse(l) as { state: string }).state)).toEqual(['started', 'completed']);
  });

  it("refuses to complete through a symlink put in place of the call's log file (the sandbox can write the workspace)", async () => {
    const replay = new ReplayLog(runner.workspaces);
    expect(await replay.begin('t', 'th', 'run-1:s1', 'run_skill_script')).toBeUndefined();
    const outside = path.join(tmp.path, 'outside.txt');
    await writeFile(outside, 'host file\n');
    const file = path.join(effects(), entryFile('run-1:s1'));
    await rm(file);
    await symlink(outside, file);
    await expect(
      replay.complete('t', 'th', 'run-1:s1', 'run_skill_script', { content: 'x', error: undefined, durationMs: 1, idempotent: false }),
    ).rejects.toMatchObject({ code: 'ELOOP' });
    expect(await readFile(outside, 'utf8')).toBe('host file\n');
  });

  it('records calls again after the log folder was deleted between them (made again on ENOENT)', async () => {
    await append('c7');
    await rm(effects(), { recursive: true });
    const ran = await append('c8');
    expect(ran.error).toBeUndefined();
    const replayed = await append('c8', { [Headers.replayOnly]: '1' });
    expect(replayed.error).toBeUndefined();
    expect(replayed.content).toBe(ran.content);
    // And the call is still not run twice.
    await append('c8');
    expect(await log()).toBe('c7\nc8\n');
  });

  it('a crash mid-way through recording the reply reads as started: IN_PROGRESS, never NOT_EXECUTED nor a second run', async () => {
    const replay = new ReplayLog(runner.workspaces);
    await replay.begin('t', 'th', 'run-1:c9', 'write_file');
    // The tool ran, then the process died while appending its reply: a cut line.
    await appendFile(path.join(effects(), entryFile('run-1:c9')), '\n{"state":"completed","key":"run-1:c9","tool":"write_file","content":"Wro');
    expect((await append('c9', { [Headers.replayOnly]: '1' })).error?.code).toBe('IN_PROGRESS');
    expect((await append('c9')).error?.code).toBe('IN_PROGRESS');
    await expect(log()).rejects.toMatchObject({ code: 'ENOENT' });
    // Re-executed on the orchestrator's word (an idempotent call): the reply appended after the cut line counts.
    const again = await append('c9', { [Headers.reexecute]: '1' });
    expect(again.error).toBeUndefined();
    expect((await append('c9', { [Headers.replayOnly]: '1' })).content).toBe(again.content);
  });

  it('a crash inside begin (an entry file with nothing that parses) reads as started', async () => {
    await append('c10'); // makes the folder
    await writeFile(path.join(effects(), entryFile('run-1:c11')), '{"state":"sta');
    expect((await append('c11', { [Headers.replayOnly]: '1' })).error?.code).toBe('IN_PROGRESS');
    expect((await append('c11')).error?.code).toBe('IN_PROGRESS');
    expect(await log()).toBe('c10\n');
  });

  it('reads entries of the earlier format (one JSON object, no newline)', async () => {
    await append('c12'); // makes the folder
    const key = 'run-1:c13';
    await writeFile(
      path.join(effects(), entryFile(key)),
      JSON.stringify({ state: 'completed', key, tool: 'write_file', at: 1, content: 'Wrote 4 bytes to outputs/log.txt', durationMs: 1, idempotent: false }),
    );
    const res = await append('c13', { [Headers.replayOnly]: '1' });
    expect(res.content).toBe('Wrote 4 bytes to outputs/log.txt');
    await append('c13'); // answered from the record, not run
    expect(await log()).toBe('c12\n');
  });
});

const effects = (): string => path.join(tmp.path, 'ws', '.agentloop', 't', 'th', 'effects');
function entryFile(key: string): string {
  return `${createHash('sha256').update(key).digest('hex')}.json`;
}

describe('parseEntry', () => {
  const started = { state: 'started', key: 'k', tool: 'write_file', at: 1 };
  const completed = { ...started, state: 'completed', content: 'ok', error: undefined, durationMs: 2, idempotent: false };
  it('takes the last line that parses', () => {
    expect(parseEntry(`${JSON.stringify(started)}\n\n${JSON.stringify(completed)}\n`, 'k')?.state).toBe('completed');
    expect(parseEntry(`${JSON.stringify(started)}\n\n{"state":"comp`, 'k')?.state).toBe('started');
  });
  it('reads a file with no whole line as started, and another key’s entry as none', () => {
    expect(parseEntry('', 'k')?.state).toBe('started');
    expect(parseEntry('{"sta', 'k')?.state).toBe('started');
    expect(parseEntry(JSON.stringify(started), 'other')).toBeUndefined();
  });
});

describe('replay log out of reach of the workspace (hardening)', () => {
  const wsDir = (): string => path.join(tmp.path, 'ws', 't', 'th');
  const legacy = (): string => path.join(wsDir(), '.agentloop', 'effects');
  const forged = (key: string): string =>
    JSON.stringify({ state: 'completed', key, tool: 'write_file', at: 1, content: 'forged reply', durationMs: 1, idempotent: false });
  /** What a sandboxed script would do: a workspace that exists, then links planted in it. */
  const existing = () => runner.workspaces.ensure('t', 'th');

  it('a symlinked .agentloop planted in the workspace redirects neither begin, complete nor get', async () => {
    await existing();
    const outside = path.join(tmp.path, 'outside');
    await mkdir(path.join(outside, 'effects'), { recursive: true });
    await symlink(outside, path.join(wsDir(), '.agentloop'));
    const ran = await append('h1');
    expect(ran.error).toBeUndefined();
    expect((await append('h1', { [Headers.replayOnly]: '1' })).content).toBe(ran.content);
    expect(await readdir(path.join(outside, 'effects'))).toEqual([]);
    expect(await readdir(effects())).toEqual([entryFile('run-1:h1')]);
    expect(await log()).toBe('h1\n');
  });

  it('a symlinked effects folder planted in the workspace redirects nothing, and its entries are not taken', async () => {
    await existing();
    const outside = path.join(tmp.path, 'outside');
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, entryFile('run-1:h2')), forged('run-1:h2'));
    await mkdir(path.join(wsDir(), '.agentloop'));
    await symlink(outside, legacy());
    const ran = await append('h2');
    expect(ran.content).not.toBe('forged reply');
    expect(await log()).toBe('h2\n');
    expect(await readdir(outside)).toEqual([entryFile('run-1:h2')]);
    expect((await readFile(path.join(outside, entryFile('run-1:h2')), 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('an entry forged in the workspace once its thread has a log of its own is not taken: the call runs', async () => {
    await append('h3'); // the thread's log exists
    await mkdir(legacy(), { recursive: true });
    await writeFile(path.join(legacy(), entryFile('run-1:h4')), forged('run-1:h4'));
    expect((await append('h4', { [Headers.replayOnly]: '1' })).error?.code).toBe('NOT_EXECUTED');
    const ran = await append('h4');
    expect(ran.content).not.toBe('forged reply');
    expect(await log()).toBe('h3\nh4\n');
  });

  it('an entry forged in the workspace after the import window is not taken', async () => {
    await existing();
    await mkdir(legacy(), { recursive: true });
    await writeFile(path.join(legacy(), entryFile('run-1:h5')), forged('run-1:h5'));
    // The layout's first use (any thread's first recorded call) starts the window.
    expect(await new ReplayLog(runner.workspaces).begin('t', 'other', 'run-0:c', 'write_file')).toBeUndefined();
    const later = new ReplayLog(runner.workspaces, { now: () => Date.now() + LEGACY_IMPORT_WINDOW_MS + 60_000 });
    expect(await later.get('t', 'th', 'run-1:h5')).toBeUndefined();
    expect(await later.begin('t', 'th', 'run-1:h5', 'write_file')).toBeUndefined();
  });

  it('a call begun under the earlier layout (entry in the workspace) is answered from it, not run again', async () => {
    await existing();
    await mkdir(legacy(), { recursive: true });
    // As the earlier version wrote them: one completed call, one started (its tool-runner died mid-way).
    const done = 'run-1:L1';
    await writeFile(
      path.join(legacy(), entryFile(done)),
      `${JSON.stringify({ state: 'started', key: done, tool: 'write_file', at: 1 })}\n\n${JSON.stringify({ state: 'completed', key: done, tool: 'write_file', at: 2, content: 'Wrote 3 bytes to outputs/log.txt', durationMs: 1, idempotent: false })}\n`,
    );
    await writeFile(path.join(legacy(), entryFile('run-1:L2')), `${JSON.stringify({ state: 'started', key: 'run-1:L2', tool: 'write_file', at: 1 })}\n`);
    // A link among them is not the earlier version's (it wrote regular files): not imported, not followed.
    await writeFile(path.join(tmp.path, 'elsewhere.json'), forged('run-1:L3'));
    await symlink(path.join(tmp.path, 'elsewhere.json'), path.join(legacy(), entryFile('run-1:L3')));
    expect((await append('L1', { [Headers.replayOnly]: '1' })).content).toBe('Wrote 3 bytes to outputs/log.txt');
    expect((await append('L1')).content).toBe('Wrote 3 bytes to outputs/log.txt');
    expect((await append('L2', { [Headers.replayOnly]: '1' })).error?.code).toBe('IN_PROGRESS');
    expect((await append('L2')).error?.code).toBe('IN_PROGRESS');
    await expect(log()).rejects.toMatchObject({ code: 'ENOENT' });
    expect((await append('L3')).content).not.toBe('forged reply');
    expect(await log()).toBe('L3\n');
    // Imported once into the thread's own log; the workspace's copy is left as it was, never written.
    expect((await readdir(effects())).sort()).toEqual([entryFile(done), entryFile('run-1:L2'), entryFile('run-1:L3')].sort());
    expect((await readdir(legacy())).sort()).toEqual([entryFile(done), entryFile('run-1:L2'), entryFile('run-1:L3')].sort());
  });

  it('an entry planted in the workspace after the layout was first used is not imported, even within the window', async () => {
    // The layout's first use (another thread's first recorded call), then a script plants an entry
    // in a workspace whose thread has no log of its own yet.
    expect(await new ReplayLog(runner.workspaces).begin('t', 'other', 'run-0:c', 'write_file')).toBeUndefined();
    await existing();
    await new Promise((r) => setTimeout(r, 20)); // past the marker's timestamp granularity
    await mkdir(legacy(), { recursive: true });
    await writeFile(path.join(legacy(), entryFile('run-1:h6')), forged('run-1:h6'));
    expect((await append('h6', { [Headers.replayOnly]: '1' })).error?.code).toBe('NOT_EXECUTED');
    expect((await append('h6')).content).not.toBe('forged reply');
    expect(await log()).toBe('h6\n');
  });

  it('a call begun under the earlier layout is not run again when its first question is begin (a retried send)', async () => {
    await existing();
    await mkdir(legacy(), { recursive: true });
    await writeFile(path.join(legacy(), entryFile('run-1:L4')), `${JSON.stringify({ state: 'started', key: 'run-1:L4', tool: 'write_file', at: 1 })}\n`);
    expect((await append('L4')).error?.code).toBe('IN_PROGRESS');
    await expect(log()).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('two replicas importing the same thread at once both answer from its legacy entry', async () => {
    await existing();
    await mkdir(legacy(), { recursive: true });
    const key = 'run-1:L5';
    await writeFile(path.join(legacy(), entryFile(key)), `${JSON.stringify({ state: 'started', key, tool: 'write_file', at: 1 })}\n`);
    const [a, b] = [new ReplayLog(runner.workspaces), new ReplayLog(runner.workspaces)];
    const answers = await Promise.all([
      a.begin('t', 'th', key, 'write_file'),
      b.begin('t', 'th', key, 'write_file'),
      a.get('t', 'th', key),
      b.get('t', 'th', key),
    ]);
    expect(answers.map((e) => e?.state)).toEqual(['started', 'started', 'started', 'started']);
    expect(await readdir(effects())).toEqual([entryFile(key)]);
    // No staging folder is left behind.
    expect(await readdir(path.dirname(effects()))).toEqual(['effects']);
  });

  it('an empty import-window marker (a crash while it was made) fails no call, and a legacy entry is still imported', async () => {
    await existing();
    await mkdir(legacy(), { recursive: true });
    await writeFile(path.join(legacy(), entryFile('run-1:L6')), `${JSON.stringify({ state: 'started', key: 'run-1:L6', tool: 'write_file', at: 1 })}\n`);
    // The marker, empty, made after the entry (the upgrade came after the earlier version wrote it).
    await mkdir(path.join(tmp.path, 'ws', '.agentloop'), { recursive: true });
    await writeFile(path.join(tmp.path, 'ws', '.agentloop', '.replay-log'), '');
    expect((await append('L6')).error?.code).toBe('IN_PROGRESS');
    expect((await append('L7')).error).toBeUndefined();
    expect(await log()).toBe('L7\n');
  });

  it('thread deletion removes its replay entries', async () => {
    await append('d1');
    expect(await readdir(effects())).toEqual([entryFile('run-1:d1')]);
    // The thread's deletion as the gateway and orchestrator ask for it (WorkspaceRequest DELETE).
    const req = create(WorkspaceRequestSchema, { tenantId: 't', threadId: 'th', action: WorkspaceRequest_Action.DELETE });
    await bus.request(TOOL_SUBJECTS.workspace, toBinary(WorkspaceRequestSchema, req), { timeoutMs: 5_000, headers: { [Headers.tenant]: 't' } });
    await expect(readdir(wsDir())).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readdir(path.join(tmp.path, 'ws', '.agentloop', 't', 'th'))).rejects.toMatchObject({ code: 'ENOENT' });
    // Asked again after the deletion, the call is unknown (its record went with the thread).
    expect(await new ReplayLog(runner.workspaces).get('t', 'th', 'run-1:d1')).toBeUndefined();
  });
});
