import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Headers, MemoryBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { create, fromBinary, toBinary, ExecuteToolRequestSchema, ExecuteToolResponseSchema } from '@agentloop/proto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadToolRunnerConfig } from './config.js';
import { TOOL_SUBJECTS, createToolRunner, type ToolRunner } from './service.js';
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
    const { ReplayLog } = await import('./replay-log.js');
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
    const { ReplayLog } = await import('./replay-log.js');
    expect(await new ReplayLog(runner.workspaces).get('t', 'th', 'run-1:n1')).toBeUndefined();
    // A side-effecting call under a key is recorded (see above); this one is simply served again.
    expect((await call()).error).toBeUndefined();
  });
});
