import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Headers, connectNatsBus, type NatsBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { startNats, type DevServer } from '@agentloop/devservers';
import {
  create,
  fromBinary,
  toBinary,
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ReloadToolsRequestSchema,
  ReloadToolsResponseSchema,
} from '@agentloop/proto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadToolRunnerConfig } from './config.js';
import { TOOL_SUBJECTS, createToolRunner, type ToolRunner } from './service.js';
import { createTempDir, type TempDir } from './testing/index.js';

// Two replicas in the `tool-runner` queue group on a real nats-server, sharing one workspace volume.
describe('tool-runner on NATS', () => {
  let nats: DevServer;
  let tmp: TempDir;
  const buses: NatsBus[] = [];
  const runners: ToolRunner[] = [];
  let client: NatsBus;

  beforeAll(async () => {
    nats = await startNats({ jetstream: false });
    tmp = await createTempDir();
    await mkdir(path.join(tmp.path, 'tools'));
    const config = loadToolRunnerConfig({ WORKSPACE_ROOT: path.join(tmp.path, 'ws'), TOOLS_ENABLE_DEBUG: 'true', TOOLS_DIRS: path.join(tmp.path, 'tools') });
    for (let i = 0; i < 2; i++) {
      const bus = await connectNatsBus({ url: nats.url, name: `tool-runner-${i}` });
      buses.push(bus);
      const runner = createToolRunner({ bus, logger: silentLogger(), config });
      await runner.start();
      runners.push(runner);
    }
    client = await connectNatsBus({ url: nats.url, name: 'test-client' });
  });

  afterAll(async () => {
    for (const r of runners) await r.stop();
    for (const b of [...buses, client]) await b?.close();
    await nats?.stop();
    await tmp?.[Symbol.asyncDispose]();
  });

  async function execute(toolName: string, args: Record<string, unknown>, timeoutMs = 10_000) {
    const req = create(ExecuteToolRequestSchema, {
      tenantId: 'tenant-a',
      threadId: 'thread-n',
      runId: 'r',
      toolCallId: 'c',
      toolName,
      argsJson: JSON.stringify(args),
    });
    const reply = await client.request(TOOL_SUBJECTS.execute, toBinary(ExecuteToolRequestSchema, req), {
      timeoutMs,
      headers: { [Headers.tenant]: 'tenant-a' },
    });
    return fromBinary(ExecuteToolResponseSchema, reply.data);
  }

  it('reads back through the queue group what was written on the shared volume', async () => {
    for (let i = 0; i < 6; i++) {
      expect((await execute('write_file', { file_path: `outputs/f${i}.txt`, content: `n${i}` })).error).toBeUndefined();
    }
    for (let i = 0; i < 6; i++) expect((await execute('read_file', { file_path: `outputs/f${i}.txt` })).content).toBe(`n${i}`);
  });

  it('answers "timed out" within the request deadline and keeps serving', async () => {
    const res = await execute('debug_sleep', { ms: 600_000 }, 2_000);
    expect(res.content).toMatch(/^Error: Tool debug_sleep timed out: it did not finish within \d+ ms$/);
    expect((await execute('now', {})).error).toBeUndefined();
  });

  it('reloads every replica through the broadcast subject, not only the one in the queue group that answered', async () => {
    await writeFile(
      path.join(tmp.path, 'tools', 'hello.mjs'),
      `export const hello = { name: 'hello', description: 'Say hello', schema: { type: 'object' }, execute: () => 'hello from a module' };`,
    );
    const reply = await client.request(TOOL_SUBJECTS.reload, toBinary(ReloadToolsRequestSchema, create(ReloadToolsRequestSchema, { reason: 'nats test' })), {
      timeoutMs: 10_000,
    });
    const res = fromBinary(ReloadToolsResponseSchema, reply.data);
    expect(res.loaded).toBe(1);
    await vi.waitFor(() => expect(runners.map((r) => r.registry.has('hello'))).toEqual([true, true]), { timeout: 10_000, interval: 20 });
    for (let i = 0; i < 4; i++) expect((await execute('hello', {})).content).toBe('hello from a module');
  });
});
