import { mkdir, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Headers, TOOL_RUNNER_RPC, rpcHandler, type BusMessage, type HandlerContext } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
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
import { z } from 'zod';
import { defineTool } from '../registry.js';
import { createToolHarness, type ToolHarness } from '../testing/index.js';
import { executeTool } from './execute.js';
import { listTools } from './list.js';
import { manageWorkspace } from './workspace.js';

// The handlers as the tool-runner serves them (decoding, tenant check, error channel of TOOL_RUNNER_RPC).
const listToolsHandler = (...a: Parameters<typeof listTools>) => rpcHandler(TOOL_RUNNER_RPC, 'listTools', listTools(...a), { logger: silentLogger() });
const executeToolHandler = (...a: Parameters<typeof executeTool>) => rpcHandler(TOOL_RUNNER_RPC, 'executeTool', executeTool(...a), { logger: a[1] });
const workspaceHandler = (...a: Parameters<typeof manageWorkspace>) =>
  rpcHandler(TOOL_RUNNER_RPC, 'workspace', manageWorkspace(...a), { logger: a[1], redact: (t) => a[0].redact(t) });

let h: ToolHarness;
beforeEach(async () => {
  h = await createToolHarness({ env: { TOOLS_ENABLE_DEBUG: 'true' } });
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
});

const msg = (subject: string, data: Uint8Array, headers: Record<string, string> = {}): BusMessage => ({ subject, data, headers });
const ctx = (deadline?: number): HandlerContext => ({ signal: new AbortController().signal, deadline });

describe('list handler', () => {
  it('replies with every registered tool spec', async () => {
    const reply = await listToolsHandler(h.registry)(
      msg('agentloop.tools.list', toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 'tenant-a' }))),
      ctx(),
    );
    const res = fromBinary(ListToolsResponseSchema, reply);
    expect(res.tools.map((t) => t.name)).toEqual(h.registry.names());
    expect(res.tools.find((t) => t.name === 'read_file')?.metadata?.idempotent).toBe(true);
  });
});

describe('list handler: visible set', () => {
  const list = (fields: Partial<{ allowed: string[]; mentioned: string[]; subagent: boolean; visible: boolean }>) =>
    listToolsHandler(h.registry)(
      msg('agentloop.tools.list', toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 'tenant-a', ...fields }))),
      ctx(),
    ).then((b) => fromBinary(ListToolsResponseSchema, b));

  beforeEach(() => {
    // debug_* are registered but not persistent; extract_links is discovered but disabled.
    h.registry.register(
      defineTool({
        name: 'extract_links',
        description: 'x',
        schema: z.object({}),
        metadata: { category: 'read', tags: [], idempotent: true, displayName: 'Extract Links', availableToSubagent: false, enabled: false },
        execute: () => Promise.resolve('links'),
      }),
    );
  });

  it('treats a visible-set request without an allowlist as "every enabled tool allowed", persistent ones first', async () => {
    expect((await list({ visible: true })).tools.map((t) => t.name)).toEqual([
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
  });

  it('orders persistent → allowed → mentioned, de-duplicated, and reports unknown names', async () => {
    const res = await list({ allowed: ['debug_fail', 'now', 'nope'], mentioned: ['extract_links', 'debug_fail', 'pdf'] });
    expect(res.tools.map((t) => t.name)).toEqual(['now', 'list_workspace_files', 'read_file', 'write_file', 'find_files', 'debug_fail', 'extract_links']);
    expect(res.notFound).toEqual(['nope', 'pdf']);
    expect(res.tools.find((t) => t.name === 'extract_links')?.metadata?.enabled).toBe(false);
  });

  it('does not let a skill allow a disabled tool', async () => {
    const res = await list({ allowed: ['extract_links'] });
    expect(res.tools.map((t) => t.name)).not.toContain('extract_links');
    expect(res.notFound).toEqual(['extract_links']);
  });

  it('gives a sub-agent only the tools available to sub-agents', async () => {
    const res = await list({ subagent: true, allowed: ['debug_sleep'] });
    expect(res.tools.map((t) => t.name)).toEqual(['now', 'list_workspace_files', 'read_file', 'write_file', 'find_files']);
    expect(res.notFound).toEqual(['debug_sleep']);
  });
});

describe('execute handler', () => {
  const run = (
    fields: Partial<{ tenantId: string; threadId: string; toolName: string; argsJson: string; onDemand: boolean; subagent: boolean }>,
    headers?: Record<string, string>,
  ) =>
    executeToolHandler(h.executor, silentLogger())(
      msg(
        'agentloop.tools.execute',
        toBinary(
          ExecuteToolRequestSchema,
          create(ExecuteToolRequestSchema, {
            tenantId: 'tenant-a',
            threadId: 'thread-1',
            runId: 'r1',
            toolCallId: 'c1',
            toolName: 'now',
            argsJson: '{}',
            ...fields,
          }),
        ),
        headers,
      ),
      ctx(),
    ).then((b) => fromBinary(ExecuteToolResponseSchema, b));

  it('replies with the tool output and a duration', async () => {
    const res = await run({ toolName: 'write_file', argsJson: JSON.stringify({ file_path: 'outputs/a.txt', content: 'abc' }) });
    expect(res.content).toBe('Wrote 3 bytes to outputs/a.txt');
    expect(res.error).toBeUndefined();
    expect(typeof res.durationMs).toBe('bigint');
  });

  it('reports whether the call was idempotent', async () => {
    expect((await run({ toolName: 'now' })).idempotent).toBe(true);
    expect((await run({ toolName: 'write_file', argsJson: '{"file_path":"outputs/i.txt","content":"x"}' })).idempotent).toBe(false);
  });

  it('runs a disabled tool only when it was mentioned (on_demand)', async () => {
    h.registry.register(
      defineTool({
        name: 'extract_links',
        description: 'x',
        schema: z.object({}),
        metadata: { category: 'read', tags: [], idempotent: true, displayName: 'Extract Links', availableToSubagent: false, enabled: false },
        execute: () => Promise.resolve('links'),
      }),
    );
    const refused = await run({ toolName: 'extract_links' });
    expect(refused.content).toBe('Error: Tool extract_links is not enabled; it can be used when the user mentions it (@extract_links)');
    expect(refused.error?.code).toBe('NOT_FOUND');
    expect((await run({ toolName: 'extract_links', onDemand: true })).content).toBe('links');
  });

  it('refuses a sub-agent a tool that is not available to sub-agents', async () => {
    const res = await run({ toolName: 'debug_fail', argsJson: '{}', subagent: true });
    expect(res.content).toBe('Error: Tool debug_fail is not available to sub-agents');
    expect(res.error?.code).toBe('PERMISSION_DENIED');
    expect((await run({ toolName: 'now', subagent: true })).error).toBeUndefined();
  });

  it('replies with an Error content and a wire error for a failing tool', async () => {
    const res = await run({ toolName: 'debug_fail', argsJson: '{"message":"kaput"}' });
    expect(res.content).toBe('Error: Unexpected error: Error: kaput');
    expect(res.error).toMatchObject({ code: 'TOOL_FAILED', message: 'Unexpected error: Error: kaput', retryable: false });
  });

  it('takes the tenant from the header when the body has none', async () => {
    const res = await run({ tenantId: '', toolName: 'write_file', argsJson: '{"file_path":"outputs/t.txt","content":"x"}' }, { [Headers.tenant]: 'tenant-z' });
    expect(res.error).toBeUndefined();
    const root = (await h.workspaces.init()).root;
    expect((await stat(path.join(root, 'tenant-z', 'thread-1', 'outputs', 't.txt'))).isFile()).toBe(true);
  });

  it('refuses a body naming another tenant than the header', async () => {
    const res = await run({ tenantId: 'tenant-b' }, { [Headers.tenant]: 'tenant-a' });
    expect(res.error?.code).toBe('PERMISSION_DENIED');
    expect(res.content).toMatch(/^Error: Permission denied: /);
  });

  it('replies to a malformed request instead of throwing', async () => {
    const reply = await executeToolHandler(h.executor, silentLogger())(msg('agentloop.tools.execute', new Uint8Array([0xff, 0xff, 0xff])), ctx());
    const res = fromBinary(ExecuteToolResponseSchema, reply);
    expect(res.content).toMatch(/^Error: Invalid ExecuteToolRequest: /);
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
  });
});

describe('workspace handler', () => {
  const call = (action: WorkspaceRequest_Action, threadId = 'thread-9') =>
    workspaceHandler(h.workspaces, silentLogger())(
      msg('agentloop.tools.workspace', toBinary(WorkspaceRequestSchema, create(WorkspaceRequestSchema, { tenantId: 'tenant-a', threadId, action }))),
      ctx(),
    ).then((b) => fromBinary(WorkspaceResponseSchema, b));

  it('ENSURE creates the workspace and lists its top level', async () => {
    const res = await call(WorkspaceRequest_Action.ENSURE);
    expect(res.error).toBeUndefined();
    expect(res.entries).toEqual(['.metadata.json', 'outputs/', 'skills/', 'temp/', 'uploads/']);
  });

  it('DELETE removes it', async () => {
    await call(WorkspaceRequest_Action.ENSURE);
    const res = await call(WorkspaceRequest_Action.DELETE);
    expect(res.error).toBeUndefined();
    const root = (await h.workspaces.init()).root;
    await expect(stat(path.join(root, 'tenant-a', 'thread-9'))).rejects.toThrow();
  });

  it('LIST reports the files of outputs/ modified since a time, without links or dot-files', async () => {
    const listReq = (fields: Partial<{ folders: string[]; modifiedSinceMs: bigint; maxFiles: number }>) =>
      workspaceHandler(h.workspaces, silentLogger())(
        msg(
          'agentloop.tools.workspace',
          toBinary(
            WorkspaceRequestSchema,
            create(WorkspaceRequestSchema, { tenantId: 'tenant-a', threadId: 'thread-9', action: WorkspaceRequest_Action.LIST, ...fields }),
          ),
        ),
        ctx(),
      ).then((b) => fromBinary(WorkspaceResponseSchema, b));
    const ws = await h.workspaces.ensure('tenant-a', 'thread-9');
    await writeFile(path.join(ws.root, 'outputs', 'old.md'), 'old');
    const past = new Date(Date.now() - 3_600_000);
    await utimes(path.join(ws.root, 'outputs', 'old.md'), past, past);
    const since = Date.now() - 60_000;
    await writeFile(path.join(ws.root, 'outputs', 'report.md'), '# report');
    await writeFile(path.join(ws.root, 'outputs', '.hidden'), 'x');
    await symlink('/etc/passwd', path.join(ws.root, 'outputs', 'passwd'));
    await writeFile(path.join(ws.root, 'uploads', 'in.txt'), 'in');

    const res = await listReq({ modifiedSinceMs: BigInt(since) });
    expect(res.error).toBeUndefined();
    expect(res.files.map((f) => [f.path, f.name, Number(f.size), f.type])).toEqual([['outputs/report.md', 'report.md', 8, 'markdown']]);
    expect((await listReq({})).files.map((f) => f.path)).toEqual(['outputs/old.md', 'outputs/report.md']);
    expect((await listReq({ folders: ['uploads', 'outputs'], maxFiles: 1 })).truncated).toBe(true);
    const bad = await listReq({ folders: ['../..'] });
    expect(bad.error?.code).toBe('INVALID_ARGUMENT');
  });

  it('replies INVALID_ARGUMENT for a missing action or a bad id', async () => {
    expect((await call(WorkspaceRequest_Action.UNSPECIFIED)).error?.code).toBe('INVALID_ARGUMENT');
    const bad = await call(WorkspaceRequest_Action.ENSURE, '../../x');
    expect(bad.error?.code).toBe('INVALID_ARGUMENT');
    expect(bad.error?.message).toContain('Invalid thread_id');
  });
});

describe('workspace handler: INSPECT', () => {
  const inspect = (fields: { path: string; tailBytes?: number; threadId?: string }, headers: Record<string, string> = {}) =>
    workspaceHandler(h.workspaces, silentLogger())(
      msg(
        'agentloop.tools.workspace',
        toBinary(
          WorkspaceRequestSchema,
          create(WorkspaceRequestSchema, {
            tenantId: 'tenant-a',
            threadId: fields.threadId ?? 'thread-1',
            action: WorkspaceRequest_Action.INSPECT,
            path: fields.path,
            tailBytes: fields.tailBytes ?? 0,
          }),
        ),
        headers,
      ),
      ctx(),
    ).then((b) => fromBinary(WorkspaceResponseSchema, b));

  it('reports an absolute path into uploads/ as uploads/x, so approval sees the real target', async () => {
    const res = await inspect({ path: path.join(h.workspace.root, 'uploads', 'x') });
    expect(res.error).toBeUndefined();
    expect(res).toMatchObject({ relativePath: 'uploads/x', exists: false, tail: '' });
  });

  it('reports the target of a symlink, whether it exists, and the end of the file', async () => {
    await writeFile(path.join(h.workspace.root, 'uploads', 'report.txt'), 'intro\nAPI_KEY=');
    await symlink('../uploads', path.join(h.workspace.root, 'outputs', 'up'));
    const res = await inspect({ path: 'outputs/up/report.txt', tailBytes: 8 });
    expect(res).toMatchObject({ relativePath: 'uploads/report.txt', exists: true, tail: 'API_KEY=' });
  });

  it('clamps tail_bytes to 4096', async () => {
    await writeFile(path.join(h.workspace.root, 'outputs', 'big.txt'), 'y'.repeat(10_000));
    expect((await inspect({ path: 'outputs/big.txt', tailBytes: 1_000_000 })).tail).toHaveLength(4096);
  });

  it('reports targets the write rules would refuse instead of refusing them', async () => {
    expect(await inspect({ path: 'skills/pdf/SKILL.md' })).toMatchObject({ relativePath: 'skills/pdf/SKILL.md', exists: false });
  });

  it('answers a refused path with the code and a safe message, and no relative path', async () => {
    const outside = await inspect({ path: '../../etc/passwd' });
    expect(outside.relativePath).toBe('');
    expect(outside.error).toMatchObject({ code: 'PATH_OUTSIDE_WORKSPACE', message: 'Path outside workspace: ../../etc/passwd' });
    const long = await inspect({ path: `uploads/${'a/'.repeat(100_000)}` });
    expect(long.relativePath).toBe('');
    expect(long.error?.code).toBe('INVALID_ARGUMENT');
    expect(long.error?.message).toMatch(/^Path too long: 200008 bytes, more than the 4096 allowed/);
    expect(long.error?.message).not.toContain(h.workspace.root);
    await mkdir(path.join(h.workspace.root, 'temp', 'loop'));
    await symlink('l2', path.join(h.workspace.root, 'temp', 'l1'));
    await symlink('l1', path.join(h.workspace.root, 'temp', 'l2'));
    expect((await inspect({ path: 'temp/l1' })).error?.message).toBe('Cannot follow symbolic link: temp/l1 is a link loop or was replaced by a link');
  });

  it('does not create the workspace of a new thread', async () => {
    const res = await inspect({ path: 'outputs/a.md', threadId: 'thread-new' });
    expect(res).toMatchObject({ relativePath: 'outputs/a.md', exists: false });
    const root = (await h.workspaces.init()).root;
    await expect(stat(path.join(root, 'tenant-a', 'thread-new'))).rejects.toThrow();
  });

  it('refuses a request naming another tenant than its caller', async () => {
    const res = await inspect({ path: 'uploads/x' }, { [Headers.tenant]: 'tenant-b' });
    expect(res.error?.code).toBe('PERMISSION_DENIED');
    expect(res.relativePath).toBe('');
  });
});
