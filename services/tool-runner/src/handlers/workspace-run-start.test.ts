import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { TOOL_RUNNER_RPC, rpcHandler } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { create, fromBinary, toBinary, WorkspaceRequestSchema, WorkspaceRequest_Action, WorkspaceResponseSchema } from '@agentloop/proto';
import { WorkspaceManager } from '@agentloop/workspace';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolHarness, type ToolHarness } from '../testing/index.js';
import { manageWorkspace } from './workspace.js';

let h: ToolHarness;
beforeEach(async () => {
  h = await createToolHarness({});
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
});

/** One ENSURE or LIST of `outputs/` for a run, as the tool-runner serves it. */
function request(workspaces: WorkspaceManager, threadId: string, action: WorkspaceRequest_Action, runId: string) {
  const handler = rpcHandler(TOOL_RUNNER_RPC, 'workspace', manageWorkspace(workspaces, silentLogger()), { logger: silentLogger() });
  const req = create(WorkspaceRequestSchema, {
    tenantId: 'tenant-a',
    threadId,
    action,
    runId,
    folders: action === WorkspaceRequest_Action.LIST ? ['outputs'] : [],
  });
  return handler(
    { subject: 'agentloop.tools.workspace', data: toBinary(WorkspaceRequestSchema, req), headers: {} },
    { signal: new AbortController().signal, deadline: undefined },
  ).then((b) => fromBinary(WorkspaceResponseSchema, b));
}

const artifacts = async (workspaces: WorkspaceManager, threadId: string, runId: string) => {
  const res = await request(workspaces, threadId, WorkspaceRequest_Action.LIST, runId);
  expect(res.error).toBeUndefined();
  expect(res.comparedToStart).toBe(true);
  return res.files.map((f) => f.path);
};

describe('workspace ENSURE at a run start', () => {
  it('in a workspace not there yet, notes an empty start: whatever outputs/ holds at the end is the run’s', async () => {
    expect((await request(h.workspaces, 'fresh', WorkspaceRequest_Action.ENSURE, 'run-1')).error).toBeUndefined();
    // The run's first tool that uses the workspace creates it.
    const ws = await h.workspaces.ensure('tenant-a', 'fresh');
    // A sandboxed script writes anywhere in the workspace: nothing tells the tool-runner it wrote.
    await writeFile(path.join(ws.root, 'outputs', 'made-by-script.md'), 'x');
    expect(await artifacts(h.workspaces, 'fresh', 'run-1')).toEqual(['outputs/made-by-script.md']);
  });

  it('in a workspace that was there (this process or another ensured it), lists what outputs/ held first', async () => {
    const ws = await h.workspaces.ensure('tenant-a', 'old');
    await writeFile(path.join(ws.root, 'outputs', 'earlier.md'), 'from an earlier run');
    // Remembered as ensured by this process:
    expect((await request(h.workspaces, 'old', WorkspaceRequest_Action.ENSURE, 'run-2')).error).toBeUndefined();
    await writeFile(path.join(ws.root, 'outputs', 'run-2.md'), 'x');
    expect(await artifacts(h.workspaces, 'old', 'run-2')).toEqual(['outputs/run-2.md']);
    // Not remembered: another tool-runner process finds the folder there.
    const other = new WorkspaceManager({ root: (await h.workspaces.init()).root, logger: silentLogger() });
    expect((await request(other, 'old', WorkspaceRequest_Action.ENSURE, 'run-3')).error).toBeUndefined();
    await writeFile(path.join(ws.root, 'outputs', 'run-3.md'), 'x');
    expect(await artifacts(other, 'old', 'run-3')).toEqual(['outputs/run-3.md']);
  });
});

describe('a run that never touches its workspace', () => {
  it('neither ENSURE at its start nor LIST at its end creates the workspace', async () => {
    const { root } = await h.workspaces.probe('tenant-a', 'untouched');
    expect((await request(h.workspaces, 'untouched', WorkspaceRequest_Action.ENSURE, 'run-5')).entries).toEqual([]);
    // The run's tool calls: `now` declares that it does not use the workspace.
    const call = { tenantId: 'tenant-a', threadId: 'untouched', runId: 'run-5', toolCallId: 'c1', toolName: 'now', argsJson: '{}' };
    expect((await h.executor.execute(call)).error).toBeUndefined();
    expect(await artifacts(h.workspaces, 'untouched', 'run-5')).toEqual([]);
    await expect(stat(root)).rejects.toThrow('ENOENT');
  });

  it('a file written by something the tool-runner does not see is still the run’s artifact', async () => {
    expect((await request(h.workspaces, 'late', WorkspaceRequest_Action.ENSURE, 'run-6')).error).toBeUndefined();
    // A skill's script in another process creates the workspace and writes an output: no start record is written here.
    const { root } = await h.workspaces.probe('tenant-a', 'late');
    await mkdir(path.join(root, 'outputs'), { recursive: true });
    await writeFile(path.join(root, 'outputs', 'chart.png'), 'png');
    expect(await artifacts(h.workspaces, 'late', 'run-6')).toEqual(['outputs/chart.png']);
  });
});
