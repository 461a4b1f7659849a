/**
 * Attack class — records a run trusts, forged from inside its workspace. Sandboxed scripts (skills,
 * `python_analyser`, `run_bash_command`) may write anywhere in their thread's workspace, dot-files
 * included. A run's start record (which files existed when it started) used to be kept there, in
 * `<workspace>/.runs/<run>.json`, and the run's end (tool-runner's workspace LIST, whose answer is
 * the run's artifacts) trusted it. Here the "script" is this test writing into the workspace as a
 * script in bubblewrap can (it sees the workspace at /workspace, read-write): each attack must leave
 * the run's start and end as they would be without it. `.metadata.json` is forged too: nothing may
 * take it for the workspace's owner.
 *
 * The tool-runner runs in this process over a MemoryBus; its workspace RPC is called as the
 * orchestrator calls it at a run's start (ENSURE with the run id) and end (LIST with the run id).
 */
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { mkdir, open, readFile, readdir, rm, stat, symlink, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBus, serviceClient, type ServiceClient, type ServiceShape } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { ToolRunner, WorkspaceRequest_Action } from '@agentloop/proto';
import { createToolRunner, loadToolRunnerConfig, type ToolRunner as ToolRunnerService } from '@agentloop/tool-runner';
import { createTempDir, type TempDir } from '@agentloop/workspace';

const TENANT = 'acme';
let tmp: TempDir;
let bus: MemoryBus;
let runner: ToolRunnerService;
let client: ServiceClient<ServiceShape<typeof ToolRunner>>;
let root: string;
/** FIFOs planted by the tests: opened for writing at the end, so a reader stuck on one is released. */
const fifos: string[] = [];

beforeAll(async () => {
  tmp = await createTempDir('agentloop-records-attack-');
  root = path.join(tmp.path, 'workspaces');
  bus = new MemoryBus();
  runner = createToolRunner({ bus, logger: silentLogger(), config: loadToolRunnerConfig({ WORKSPACE_ROOT: root, SANDBOX_ENABLED: 'false' }) });
  await runner.start();
  client = serviceClient(bus, ToolRunner);
});
afterAll(async () => {
  for (const fifo of fifos) {
    const w = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
    await w?.write('{}');
    await w?.close();
  }
  await runner?.stop();
  await bus?.close();
  await tmp?.[Symbol.asyncDispose]();
});

/** A run's start (ENSURE with its id) or a workspace's creation (no id). */
const ensure = (threadId: string, runId = '') =>
  client.workspace({ tenantId: TENANT, threadId, action: WorkspaceRequest_Action.ENSURE, runId }, { timeoutMs: 10_000, tenantId: TENANT });

/** A run's end: its artifacts. A reader stuck on a planted FIFO shows as this request's TIMEOUT. */
const artifacts = async (threadId: string, runId: string) => {
  const res = await client.workspace(
    { tenantId: TENANT, threadId, action: WorkspaceRequest_Action.LIST, folders: ['outputs'], runId },
    { timeoutMs: 5_000, tenantId: TENANT },
  );
  return { error: res.error?.message, comparedToStart: res.comparedToStart, files: res.files.map((f) => f.path) };
};

const workspace = (threadId: string) => path.join(root, TENANT, threadId);
/** Where the records were kept in the workspace (what a script can write). */
const planted = (threadId: string, runId: string) => path.join(workspace(threadId), '.runs', `${runId}.json`);

/**
 * A run that started with `outputs/old.md` there, listed once already (an interrupted run's first
 * end: the tool-runner then reads its record from disk, not from its memory, at the next end).
 */
async function runStarted(threadId: string, runId: string): Promise<void> {
  expect((await ensure(threadId)).error).toBeUndefined();
  await writeFile(path.join(workspace(threadId), 'outputs', 'old.md'), 'there before the run');
  expect((await ensure(threadId, runId)).error).toBeUndefined();
  expect(await artifacts(threadId, runId)).toEqual({ error: undefined, comparedToStart: true, files: [] });
}

/** The script's move: replace whatever is at the record's old place in the workspace. */
async function plant(threadId: string, runId: string, make: (file: string) => Promise<void>): Promise<void> {
  const file = planted(threadId, runId);
  await mkdir(path.dirname(file), { recursive: true });
  await rm(file, { force: true });
  await make(file);
}

describe('run start records forged from inside the workspace', () => {
  it('a rewritten record neither hides what the run made nor passes off older files as its artifacts', async () => {
    await runStarted('th-forge', 'run-forge');
    const made = path.join(workspace('th-forge'), 'outputs', 'made.md');
    await writeFile(made, 'the run made this');
    const st = await stat(made);
    // Claims made.md was there at the start, and old.md was not.
    await plant('th-forge', 'run-forge', (file) =>
      writeFile(file, JSON.stringify({ run_id: 'run-forge', created_at: '', files: { 'outputs/made.md': [st.size, Math.floor(st.mtimeMs)] } })),
    );
    // The run resumes (its start record stays the first one) and ends.
    expect((await ensure('th-forge', 'run-forge')).error).toBeUndefined();
    expect(await artifacts('th-forge', 'run-forge')).toEqual({ error: undefined, comparedToStart: true, files: ['outputs/made.md'] });
  });

  it('a record replaced by a FIFO does not hang the run’s end', async () => {
    await runStarted('th-fifo', 'run-fifo');
    await writeFile(path.join(workspace('th-fifo'), 'outputs', 'made.md'), 'x');
    await plant('th-fifo', 'run-fifo', async (file) => {
      execFileSync('mkfifo', [file]);
      fifos.push(file);
    });
    expect(await artifacts('th-fifo', 'run-fifo')).toEqual({ error: undefined, comparedToStart: true, files: ['outputs/made.md'] });
  });

  it('a malformed or oversized record does not fail the run’s end', async () => {
    await runStarted('th-null', 'run-null');
    await plant('th-null', 'run-null', (file) => writeFile(file, '{"run_id":"run-null","files":null}'));
    await writeFile(path.join(workspace('th-null'), 'outputs', 'made.md'), 'x');
    expect(await artifacts('th-null', 'run-null')).toEqual({ error: undefined, comparedToStart: true, files: ['outputs/made.md'] });

    await runStarted('th-huge', 'run-huge');
    // 3 GB, sparse: more than a process may read into one buffer.
    await plant('th-huge', 'run-huge', async (file) => {
      await writeFile(file, '');
      await truncate(file, 3 * 1024 ** 3);
    });
    await writeFile(path.join(workspace('th-huge'), 'outputs', 'made.md'), 'x');
    expect(await artifacts('th-huge', 'run-huge')).toEqual({ error: undefined, comparedToStart: true, files: ['outputs/made.md'] });
  });

  it('a records folder replaced by a link neither stops the thread’s next run nor gets written through', async () => {
    expect((await ensure('th-link')).error).toBeUndefined();
    // Another tenant's folder the link leads to (a script could name any host path).
    const elsewhere = path.join(root, 'globex', 'th-victim', 'outputs');
    await mkdir(elsewhere, { recursive: true });
    await symlink(elsewhere, path.join(workspace('th-link'), '.runs'));
    expect((await ensure('th-link', 'run-after-link')).error).toBeUndefined();
    await writeFile(path.join(workspace('th-link'), 'outputs', 'made.md'), 'x');
    expect(await artifacts('th-link', 'run-after-link')).toEqual({ error: undefined, comparedToStart: true, files: ['outputs/made.md'] });
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('a forged .metadata.json claims nothing: the workspace stays its folder’s thread’s, and deleting the thread deletes only it', async () => {
    expect((await ensure('th-meta')).error).toBeUndefined();
    const meta = path.join(workspace('th-meta'), '.metadata.json');
    const victim = path.join(root, 'globex', 'th-meta-victim');
    await mkdir(path.join(victim, 'outputs'), { recursive: true });
    await writeFile(path.join(victim, 'outputs', 'keep.md'), 'globex');
    await rm(meta);
    await writeFile(meta, JSON.stringify({ tenant_id: 'globex', thread_id: 'th-meta-victim', created_at: '2020-01-01T00:00:00Z' }));
    expect((await ensure('th-meta', 'run-meta')).error).toBeUndefined();
    await writeFile(path.join(workspace('th-meta'), 'outputs', 'made.md'), 'x');
    expect(await artifacts('th-meta', 'run-meta')).toEqual({ error: undefined, comparedToStart: true, files: ['outputs/made.md'] });
    // A link in its place is not written through either.
    await rm(meta);
    await symlink(path.join(victim, 'outputs', 'keep.md'), meta);
    expect((await ensure('th-meta', 'run-meta-2')).error).toBeUndefined();
    expect(await readFile(path.join(victim, 'outputs', 'keep.md'), 'utf8')).toBe('globex');
    const deleted = await client.workspace(
      { tenantId: TENANT, threadId: 'th-meta', action: WorkspaceRequest_Action.DELETE },
      { timeoutMs: 10_000, tenantId: TENANT },
    );
    expect(deleted.error).toBeUndefined();
    await expect(stat(workspace('th-meta'))).rejects.toThrow('ENOENT');
    expect(await readFile(path.join(victim, 'outputs', 'keep.md'), 'utf8')).toBe('globex');
  });
});
