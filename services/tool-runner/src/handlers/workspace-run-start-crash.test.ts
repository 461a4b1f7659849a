import { stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TOOL_RUNNER_RPC, rpcHandler } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { create, fromBinary, toBinary, WorkspaceRequestSchema, WorkspaceRequest_Action, WorkspaceResponseSchema } from '@agentloop/proto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createTempDir, type TempDir } from '../testing/index.js';

/**
 * A run that starts before its workspace exists leaves nothing on disk: the note that it started
 * empty lives in the tool-runner's memory. These tests restart the tool-runner between the run's
 * start and its end (a fresh module graph: a new process's memory) and check what the end lists.
 */
let tmp: TempDir;
beforeEach(async () => {
  tmp = await createTempDir();
});
afterEach(async () => {
  await tmp[Symbol.asyncDispose]();
});

/** A tool-runner process: its own module instances (notes, ensured cache) over the shared root. */
async function toolRunnerProcess(root: string) {
  vi.resetModules();
  const { WorkspaceManager } = await import('@agentloop/workspace');
  const { manageWorkspace } = await import('./workspace.js');
  const workspaces = new WorkspaceManager({ root, logger: silentLogger() });
  const handler = rpcHandler(TOOL_RUNNER_RPC, 'workspace', manageWorkspace(workspaces, silentLogger()), { logger: silentLogger() });
  const request = (action: WorkspaceRequest_Action, runId: string, modifiedSinceMs = 0n) =>
    handler(
      {
        subject: 'agentloop.tools.workspace',
        data: toBinary(
          WorkspaceRequestSchema,
          create(WorkspaceRequestSchema, {
            tenantId: 'tenant-a',
            threadId: 'thread-1',
            action,
            runId,
            modifiedSinceMs,
            folders: action === WorkspaceRequest_Action.LIST ? ['outputs'] : [],
          }),
        ),
        headers: {},
      },
      { signal: new AbortController().signal, deadline: undefined },
    ).then((b) => fromBinary(WorkspaceResponseSchema, b));
  return { workspaces, request };
}

describe('a tool-runner restart between the start and the end of a run that started without its workspace', () => {
  it('a workspace still missing lists nothing, and the end creates nothing', async () => {
    const root = path.join(tmp.path, 'ws');
    const before = await toolRunnerProcess(root);
    expect((await before.request(WorkspaceRequest_Action.ENSURE, 'run-1')).error).toBeUndefined();
    const after = await toolRunnerProcess(root);
    const listed = await after.request(WorkspaceRequest_Action.LIST, 'run-1');
    expect(listed.error).toBeUndefined();
    expect({ compared: listed.comparedToStart, files: listed.files }).toEqual({ compared: true, files: [] });
    await expect(stat(path.join(root, 'tenant-a', 'thread-1'))).rejects.toThrow('ENOENT');
  });

  it('a workspace created after the restart, with no start record, falls back to modification times', async () => {
    const root = path.join(tmp.path, 'ws');
    const before = await toolRunnerProcess(root);
    const startedAt = Date.now();
    expect((await before.request(WorkspaceRequest_Action.ENSURE, 'run-2')).error).toBeUndefined();
    const after = await toolRunnerProcess(root);
    const ws = await after.workspaces.ensure('tenant-a', 'thread-1');
    await writeFile(path.join(ws.root, 'outputs', 'new.md'), 'written by the run');
    // A file older than the run's start is not its artifact.
    await writeFile(path.join(ws.root, 'outputs', 'old.md'), 'copied in');
    const old = new Date(startedAt - 60_000);
    await utimes(path.join(ws.root, 'outputs', 'old.md'), old, old);
    const listed = await after.request(WorkspaceRequest_Action.LIST, 'run-2', BigInt(startedAt));
    expect(listed.comparedToStart).toBe(false);
    expect(listed.files.map((f) => f.path)).toEqual(['outputs/new.md']);
  });

  it('a workspace a tool call of the run creates after the restart records the run’s empty start: no clocks compared', async () => {
    const root = path.join(tmp.path, 'ws');
    const before = await toolRunnerProcess(root);
    expect((await before.request(WorkspaceRequest_Action.ENSURE, 'run-3')).error).toBeUndefined();
    const after = await toolRunnerProcess(root);
    // As the executor (and the replay log) ensure it for a call of run-3.
    const ws = await after.workspaces.ensure('tenant-a', 'thread-1', { runId: 'run-3' });
    // Written by the run with an old modification time (a copy that keeps it): still its artifact.
    await writeFile(path.join(ws.root, 'outputs', 'copied.md'), 'kept its mtime');
    const old = new Date(Date.now() - 3_600_000);
    await utimes(path.join(ws.root, 'outputs', 'copied.md'), old, old);
    const listed = await after.request(WorkspaceRequest_Action.LIST, 'run-3', BigInt(Date.now() - 60_000));
    expect(listed.comparedToStart).toBe(true);
    expect(listed.files.map((f) => f.path)).toEqual(['outputs/copied.md']);
  });
});
