import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { Headers, MemoryBus, RemoteError } from '@agentloop/bus';
import { UnavailableError, silentLogger } from '@agentloop/core';
import {
  create,
  fromBinary,
  toBinary,
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  WorkspaceRequestSchema,
  WorkspaceRequest_Action,
  WorkspaceResponseSchema,
} from '@agentloop/proto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadToolRunnerConfig } from './config.js';
import { TOOL_SUBJECTS, createToolRunner, type ToolRunner } from './service.js';
import { createTempDir, type TempDir } from './testing/index.js';

let tmp: TempDir;
let serverBus: MemoryBus;
let client: MemoryBus;
let runner: ToolRunner;

beforeEach(async () => {
  tmp = await createTempDir();
  serverBus = new MemoryBus();
  client = serverBus.peer();
  const config = loadToolRunnerConfig({ WORKSPACE_ROOT: path.join(tmp.path, 'ws'), TOOLS_ENABLE_DEBUG: 'true' });
  runner = createToolRunner({ bus: serverBus, logger: silentLogger(), config });
  await runner.start();
});
afterEach(async () => {
  await runner.stop();
  await client.close();
  await serverBus.close();
  await tmp[Symbol.asyncDispose]();
});

async function execute(toolName: string, args: Record<string, unknown>, timeoutMs = 10_000, threadId = 'thread-1') {
  const req = create(ExecuteToolRequestSchema, {
    tenantId: 'tenant-a',
    threadId,
    runId: 'run-1',
    toolCallId: 'call-1',
    toolName,
    argsJson: JSON.stringify(args),
  });
  const reply = await client.request(TOOL_SUBJECTS.execute, toBinary(ExecuteToolRequestSchema, req), { timeoutMs, headers: { [Headers.tenant]: 'tenant-a' } });
  return fromBinary(ExecuteToolResponseSchema, reply.data);
}

async function workspace(action: WorkspaceRequest_Action, threadId = 'thread-1') {
  const req = create(WorkspaceRequestSchema, { tenantId: 'tenant-a', threadId, action });
  const reply = await client.request(TOOL_SUBJECTS.workspace, toBinary(WorkspaceRequestSchema, req), { timeoutMs: 10_000 });
  return fromBinary(WorkspaceResponseSchema, reply.data);
}

describe('tool-runner over MemoryBus', () => {
  it('lists the tools with JSON schemas and metadata', async () => {
    const reply = await client.request(TOOL_SUBJECTS.list, toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 'tenant-a' })), {
      timeoutMs: 5_000,
    });
    const { tools } = fromBinary(ListToolsResponseSchema, reply.data);
    expect(tools.map((t) => t.name)).toEqual([
      'now',
      'list_workspace_files',
      'read_file',
      'write_file',
      'find_files',
      'python_analyser',
      'run_bash_command',
      'debug_sleep',
      'debug_fail',
    ]);
    const read = tools.find((t) => t.name === 'read_file');
    expect(JSON.parse(read?.parametersJsonSchema ?? '{}')).toMatchObject({ type: 'object', required: ['file_path'] });
    expect(read?.metadata).toMatchObject({ category: 'file', idempotent: true, displayName: 'Read File' });
  });

  it('writes then reads a file in the thread workspace', async () => {
    const wrote = await execute('write_file', { file_path: 'outputs/hello.txt', content: 'hello' });
    expect(wrote.content).toBe('Wrote 5 bytes to outputs/hello.txt');
    const read = await execute('read_file', { file_path: 'outputs/hello.txt' });
    expect(read.content).toBe('hello');
    expect(read.error).toBeUndefined();
  });

  it('replies with an Error content for a failing tool instead of a bus error', async () => {
    const res = await execute('debug_fail', { message: 'boom' });
    expect(res.content).toBe('Error: Unexpected error: Error: boom');
    expect(res.error).toMatchObject({ code: 'TOOL_FAILED', retryable: false });
  });

  it('replies for an unknown tool and for invalid arguments', async () => {
    expect((await execute('nope', {})).content).toBe('Error: Unknown tool: nope');
    expect((await execute('read_file', { file_path: 7 })).content).toBe(
      'Error: Invalid arguments for read_file: file_path: Invalid input: expected string, received number',
    );
  });

  it('answers "timed out" before the request deadline and keeps serving', async () => {
    const res = await execute('debug_sleep', { ms: 600_000 }, 2_000);
    expect(res.content).toMatch(/^Error: Tool debug_sleep timed out: it did not finish within \d+ ms$/);
    expect(res.error?.code).toBe('TIMEOUT');
    expect((await execute('now', {})).content).toMatch(/^Current time: /);
  });

  it('refuses path traversal over the bus', async () => {
    expect((await execute('read_file', { file_path: '../../etc/passwd' })).content).toBe('Error: Path outside workspace: ../../etc/passwd');
  });

  it('ENSURE creates the workspace with metadata; DELETE removes it', async () => {
    const ensured = await workspace(WorkspaceRequest_Action.ENSURE, 'thread-7');
    expect(ensured.entries).toEqual(['.metadata.json', 'outputs/', 'skills/', 'temp/', 'uploads/']);
    const root = (await runner.workspaces.init()).root;
    const dir = path.join(root, 'tenant-a', 'thread-7');
    expect(JSON.parse(await readFile(path.join(dir, '.metadata.json'), 'utf8'))).toMatchObject({ tenant_id: 'tenant-a', thread_id: 'thread-7' });
    const deleted = await workspace(WorkspaceRequest_Action.DELETE, 'thread-7');
    expect(deleted.error).toBeUndefined();
    await expect(stat(dir)).rejects.toThrow();
  });

  it('replies a workspace error for a bad thread id', async () => {
    const res = await workspace(WorkspaceRequest_Action.ENSURE, '../../x');
    expect(res.error).toMatchObject({ code: 'INVALID_ARGUMENT', retryable: false });
  });

  it('replies a remote error for a malformed list request', async () => {
    await expect(client.request(TOOL_SUBJECTS.list, new Uint8Array([0xff, 0xff]), { timeoutMs: 5_000 })).rejects.toBeInstanceOf(RemoteError);
  });

  it('stops serving after stop()', async () => {
    await runner.stop();
    await expect(execute('now', {})).rejects.toBeInstanceOf(UnavailableError);
  });
});
