import { Writable } from 'node:stream';
import { createLogger } from '@agentloop/core';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolError } from './errors.js';
import { defineTool } from './registry.js';
import { createToolHarness, type ToolHarness } from './testing/index.js';

let h: ToolHarness | undefined;
afterEach(async () => {
  await h?.[Symbol.asyncDispose]();
  h = undefined;
});

async function harness(env: Record<string, string> = { TOOLS_ENABLE_DEBUG: 'true' }, logger?: ReturnType<typeof createLogger>): Promise<ToolHarness> {
  h = await createToolHarness({ env, ...(logger ? { logger } : {}) });
  return h;
}

/** A logger whose JSON lines are collected. */
function capturingLogger(): { logger: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: createLogger({ service: 'tool-runner-test', level: 'debug', destination }), lines };
}

describe('ToolExecutor error boundary', () => {
  it('turns a thrown Error into "Error: Unexpected error: <Name>: <msg>"', async () => {
    const t = await harness();
    const res = await t.call('debug_fail', { message: 'boom' });
    expect(res.content).toBe('Error: Unexpected error: Error: boom');
    expect(res.error).toEqual({ code: 'TOOL_FAILED', message: 'Unexpected error: Error: boom', retryable: false });
  });

  it('logs the failure with tool, tenant, thread, run and tool call ids', async () => {
    const cap = capturingLogger();
    const t = await harness({ TOOLS_ENABLE_DEBUG: 'true' }, cap.logger);
    await t.call('debug_fail', { message: 'boom' });
    const line = cap.lines.find((l) => l.level === 50);
    expect(line).toMatchObject({ tool: 'debug_fail', tenant: 'tenant-a', thread_id: 'thread-1', run_id: 'run-1', tool_call_id: 'call-1' });
  });

  it('keeps the message of a ToolError and its code', async () => {
    const t = await harness();
    t.registry.register(
      defineTool({
        name: 'picky',
        description: 'fails politely',
        schema: z.object({}),
        metadata: { category: 'test', tags: [], idempotent: true, displayName: 'Picky', availableToSubagent: false },
        execute: () => Promise.reject(new ToolError('CONFLICT', 'Already done: outputs/a.txt')),
      }),
    );
    const res = await t.call('picky');
    expect(res.content).toBe('Error: Already done: outputs/a.txt');
    expect(res.error?.code).toBe('CONFLICT');
  });

  it('removes host paths from an unexpected error', async () => {
    const t = await harness();
    t.registry.register(
      defineTool({
        name: 'leaky',
        description: 'throws a Node-style error',
        schema: z.object({}),
        metadata: { category: 'test', tags: [], idempotent: true, displayName: 'Leaky', availableToSubagent: false },
        execute: (_args, ctx) => Promise.reject(new Error(`EIO: i/o error, open '${ctx.workspace.root}/outputs/a.txt'`)),
      }),
    );
    const res = await t.call('leaky');
    expect(res.content).toBe("Error: Unexpected error: Error: EIO: i/o error, open 'outputs/a.txt'");
  });

  it('answers an unknown tool', async () => {
    const t = await harness();
    const res = await t.call('rm_rf', {});
    expect(res.content).toBe('Error: Unknown tool: rm_rf');
    expect(res.error?.code).toBe('NOT_FOUND');
  });

  it('does not know the debug tools unless TOOLS_ENABLE_DEBUG is set', async () => {
    const t = await harness({});
    expect((await t.call('debug_fail', {})).content).toBe('Error: Unknown tool: debug_fail');
  });

  it('names the field of invalid arguments', async () => {
    const t = await harness();
    const res = await t.call('read_file', {});
    expect(res.content).toBe('Error: Invalid arguments for read_file: file_path: required (expected string)');
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
    const wrongType = await t.call('write_file', { file_path: 'outputs/a', content: 42 });
    expect(wrongType.content).toBe('Error: Invalid arguments for write_file: content: Invalid input: expected string, received number');
  });

  it('reports arguments that are not JSON or not an object', async () => {
    const t = await harness();
    const call = (argsJson: string) =>
      t.executor.execute({ tenantId: 'tenant-a', threadId: 'thread-1', runId: 'r', toolCallId: 'c', toolName: 'now', argsJson });
    expect((await call('{oops')).content).toMatch(/^Error: Invalid arguments for now: arguments are not valid JSON \(/);
    expect((await call('[1]')).content).toBe('Error: Invalid arguments for now: (arguments): Invalid input: expected object, received array');
    expect((await call('')).error).toBeUndefined();
  });

  it('a tool that declares it does not use the workspace neither creates it nor gets it', async () => {
    const t = await harness();
    t.registry.register(
      defineTool({
        name: 'sneaky',
        description: 'declares no workspace, then asks for it',
        schema: z.object({}),
        usesWorkspace: false,
        metadata: { category: 'test', tags: [], idempotent: true, displayName: 'Sneaky', availableToSubagent: false },
        execute: (_args, ctx) => Promise.resolve(ctx.workspace.root),
      }),
    );
    const res = await t.executor.execute({ tenantId: 'tenant-a', threadId: 'thread-new', runId: 'r', toolCallId: 'c', toolName: 'sneaky', argsJson: '{}' });
    expect(res.content).toBe('Error: Unexpected error: Error: tool sneaky declared that it does not use the workspace');
    expect((await t.workspaces.probe('tenant-a', 'thread-new')).exists).toBe(false);
  });

  it('refuses an invalid thread id without touching the disk', async () => {
    const t = await harness();
    const res = await t.executor.execute({ tenantId: 'tenant-a', threadId: '../other', runId: 'r', toolCallId: 'c', toolName: 'now', argsJson: '{}' });
    expect(res.content).toMatch(/^Error: Invalid thread_id "..\/other"/);
  });
});

describe('ToolExecutor deadlines', () => {
  it('abandons a tool that outlives the request deadline and still answers the next call', async () => {
    const t = await harness();
    const res = await t.call('debug_sleep', { ms: 600_000 }, { deadline: Date.now() + 300 });
    expect(res.content).toMatch(/^Error: Tool debug_sleep timed out: it did not finish within \d+ ms$/);
    expect(res.error).toMatchObject({ code: 'TIMEOUT', retryable: false });
    const next = await t.call('now');
    expect(next.error).toBeUndefined();
  });

  it('abandons a tool when the caller aborts', async () => {
    const t = await harness();
    const ctrl = new AbortController();
    const pending = t.call('debug_sleep', { ms: 600_000 }, { signal: ctrl.signal });
    ctrl.abort();
    expect((await pending).content).toMatch(/^Error: Tool debug_sleep timed out: it did not finish within \d+ ms$/);
  });

  it('abandons a tool that ignores the abort signal', async () => {
    const t = await harness({ TOOL_DEFAULT_TIMEOUT_MS: '50' });
    t.registry.register(
      defineTool({
        name: 'stuck',
        description: 'never answers',
        schema: z.object({}),
        metadata: { category: 'test', tags: [], idempotent: true, displayName: 'Stuck', availableToSubagent: false },
        execute: () => new Promise<string>(() => undefined),
      }),
    );
    expect((await t.call('stuck')).content).toBe('Error: Tool stuck timed out: it did not finish within 50 ms');
  });

  it('lets a tool finish within its budget', async () => {
    const t = await harness();
    expect((await t.call('debug_sleep', { ms: 1 }, { deadline: Date.now() + 60_000 })).content).toBe('Slept 1 ms');
  });

  it('fails at once when the deadline has already passed', async () => {
    const t = await harness();
    const res = await t.call('now', {}, { deadline: Date.now() - 1 });
    expect(res.content).toBe('Error: Tool now timed out: it did not finish within 0 ms');
  });
});

describe('ToolExecutor deadlines: the budget reaches the tool (issue 18)', () => {
  const nextTurn = () => new Promise<void>((r) => setImmediate(r));

  it('a tool overrunning its deadline answers timed out, its abort signal stops its loop, and other calls are served meanwhile', async () => {
    // Long enough that the other calls finish within it on a loaded machine; the spin never does.
    const t = await harness({ TOOL_DEFAULT_TIMEOUT_MS: '500' });
    let iterations = 0;
    t.registry.register(
      defineTool({
        name: 'spin',
        description: 'works in small steps until stopped',
        schema: z.object({}),
        metadata: { category: 'test', tags: [], idempotent: true, displayName: 'Spin', availableToSubagent: false },
        async execute(_args, ctx) {
          for (;;) {
            ctx.signal.throwIfAborted();
            iterations++;
            await nextTurn();
          }
        },
      }),
    );
    const spinning = t.call('spin');
    const others = await Promise.all([t.call('now'), t.call('list_workspace_files'), t.call('now')]);
    expect(others.map((r) => r.error)).toEqual([undefined, undefined, undefined]);
    const res = await spinning;
    expect(res.content).toBe('Error: Tool spin timed out: it did not finish within 500 ms');
    expect(res.error).toEqual({ code: 'TIMEOUT', message: 'Tool spin timed out: it did not finish within 500 ms', retryable: false });
    const atReply = iterations;
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(iterations).toBeLessThanOrEqual(atReply + 1);
  });

  it('gives the tool the end of its budget, a margin before the request deadline', async () => {
    const t = await harness();
    t.registry.register(
      defineTool({
        name: 'budget',
        description: 'tells its deadline',
        schema: z.object({}),
        metadata: { category: 'test', tags: [], idempotent: true, displayName: 'Budget', availableToSubagent: false },
        execute: (_args, ctx) => Promise.resolve(String(ctx.deadline)),
      }),
    );
    const before = Date.now();
    // 20 s ahead: the margin is at its 1 s cap whatever the milliseconds spent before the call.
    const deadline = before + 20_000;
    const end = Number((await t.call('budget', {}, { deadline })).content);
    expect(end).toBeGreaterThan(before);
    expect(end).toBeLessThanOrEqual(deadline - 1_000);
  });
});
