/**
 * Attack class 4 — gRPC error paths (issue 18: failing StreamRun/JoinRunStream calls never sent a
 * status, so a client without a deadline hung forever; CreateRun accepted thread ids like `../../x`).
 *
 * Every call here is made by a client WITHOUT a deadline; the harness's own timer fails the test
 * when a stream hangs. Each failing call must end with the documented status (api.proto) and
 * details that name no host path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { createAgentLoopGrpcClient, type AgentLoopClient } from '@agentloop/gateway';
import {
  ATTACK_ENV,
  KEY_A,
  KEY_B,
  OK_BUDGET_MS,
  TENANT_A,
  call,
  grpcFailure,
  hostPaths,
  leaksIn,
  newThread,
  runWait,
  spawnServer,
  streamOutcome,
  underAttack,
  warmUp,
  type ServerChild,
} from './harness.js';

let server: ServerChild;
let a: AgentLoopClient;
let b: AgentLoopClient;
let anon: AgentLoopClient;
let bad: AgentLoopClient;
/** Tenant A's thread with one finished run, and one interrupted thread. */
let threadA: string;
let runA: string;
let interruptedA: string;

const noLeak = (details: string) => expect(leaksIn(details, hostPaths(server))).toEqual([]);

beforeAll(async () => {
  server = await spawnServer({ env: ATTACK_ENV });
  a = createAgentLoopGrpcClient(server.grpcAddress, { apiKey: KEY_A });
  b = createAgentLoopGrpcClient(server.grpcAddress, { apiKey: KEY_B });
  anon = createAgentLoopGrpcClient(server.grpcAddress);
  bad = createAgentLoopGrpcClient(server.grpcAddress, { apiKey: 'not-a-key' });
  await warmUp(server.url, KEY_A);
  threadA = await newThread(server.url, KEY_A);
  const done = await runWait(server.url, KEY_A, threadA, [{ content: 'acme secret answer' }]);
  expect(done.status).toBe(200);
  const runs = await call(server.url, KEY_A, 'GET', `/threads/${threadA}/runs`);
  runA = (runs.json as Array<{ run_id: string }>)[0]!.run_id;
  // Warm the gRPC paths too (first calls load and compile code).
  for (let i = 0; i < 5; i++) await streamOutcome(a.joinRunStream({ threadId: threadA, runId: runA }) as grpc.ClientReadableStream<unknown>);
  interruptedA = await newThread(server.url, KEY_A);
  await runWait(server.url, KEY_A, interruptedA, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/c.env', content: 'password=hunter2' } }] }]);
}, 120_000);

afterAll(async () => {
  for (const c of [a, b, anon, bad]) c?.close();
  await server?.stop(5_000);
  server?.cleanup();
});

const runRequest = (threadId: string, extra: Record<string, unknown> = {}) => ({
  threadId,
  assistantId: 'agent',
  inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
  configJson: JSON.stringify({ configurable: { model: { provider: 'scripted', turns: [{ content: 'x' }] } } }),
  ...extra,
});

describe('failing streams end with a status for a client without a deadline', () => {
  it.each([
    ['StreamRun on an unknown thread', () => a.streamRun(runRequest(randomUUID())), grpc.status.NOT_FOUND],
    ['JoinRunStream of an unknown run', () => a.joinRunStream({ threadId: threadA, runId: randomUUID() }), grpc.status.NOT_FOUND],
    ["JoinRunStream of another tenant's run", () => b.joinRunStream({ threadId: threadA, runId: runA }), grpc.status.NOT_FOUND],
    ["StreamRun on another tenant's thread", () => b.streamRun(runRequest(threadA)), grpc.status.NOT_FOUND],
    ['StreamRun without a key', () => anon.streamRun(runRequest(threadA)), grpc.status.UNAUTHENTICATED],
    ['JoinRunStream without a key', () => anon.joinRunStream({ threadId: threadA, runId: runA }), grpc.status.UNAUTHENTICATED],
    ['StreamRun with a bad key', () => bad.streamRun(runRequest(threadA)), grpc.status.UNAUTHENTICATED],
    ['JoinRunStream with a bad key', () => bad.joinRunStream({ threadId: threadA, runId: runA }), grpc.status.UNAUTHENTICATED],
    ['JoinRunStream with a traversal thread id', () => a.joinRunStream({ threadId: '../../x', runId: runA }), grpc.status.INVALID_ARGUMENT],
    ['StreamRun with a traversal thread id', () => a.streamRun(runRequest('../../x')), grpc.status.INVALID_ARGUMENT],
  ] as const)('%s ends with its status', async (_name, open, code) => {
    const outcome = await streamOutcome(open() as grpc.ClientReadableStream<unknown>, 5_000);
    expect(outcome.hung, 'the stream sent no status within 5 s').toBe(false);
    expect(grpc.status[outcome.code!]).toBe(grpc.status[code]);
    expect(outcome.events).toBe(0);
    noLeak(outcome.details);
  });
});

describe('thread ids are validated as HTTP validates them', () => {
  const TRAVERSAL = ['../../x', '../../../../etc', 'acme:../x', '%2e%2e%2fx', 'x\u0000y', 'a'.repeat(10_000)];

  it.each(TRAVERSAL.map((t) => [JSON.stringify(t).slice(0, 40), t]))(
    'answers INVALID_ARGUMENT to every unary RPC given thread id %s',
    async (_name, threadId) => {
      const calls: Record<string, () => Promise<unknown>> = {
        CreateThread: () => a.createThread({ threadId }),
        GetThread: () => a.getThread({ threadId }),
        GetThreadState: () => a.getThreadState({ threadId }),
        DeleteThread: () => a.deleteThread({ threadId }),
        CreateRun: () => a.createRun(runRequest(threadId, { ifNotExistsCreate: true })),
        WaitRun: () => a.waitRun(runRequest(threadId, { ifNotExistsCreate: true })),
        GetRun: () => a.getRun({ threadId, runId: runA }),
        ListRuns: () => a.listRuns({ threadId }),
        CancelRun: () => a.cancelRun({ threadId, runId: runA }),
      };
      const codes: Record<string, string> = {};
      for (const [name, fn] of Object.entries(calls)) {
        const err = await grpcFailure(fn());
        codes[name] = grpc.status[err.code];
        noLeak(err.details);
      }
      expect(codes).toEqual(Object.fromEntries(Object.keys(calls).map((n) => [n, 'INVALID_ARGUMENT'])));
    },
  );

  it('created no record and no directory for any of those ids', async () => {
    const threads = await call(server.url, KEY_A, 'POST', '/threads/search', { limit: 1000 });
    const ids = (threads.json as Array<{ thread_id: string }>).map((t) => t.thread_id);
    for (const t of TRAVERSAL) expect(ids).not.toContain(t);
    // Nothing outside the tenants' folders: only tenant folders under workspaces/, nothing beside it,
    // but the threads' private folder (.agentloop/: tool-runner's replay log), itself by tenant.
    expect(existsSync(path.join(server.realDataDir, 'x'))).toBe(false);
    expect(existsSync(path.join(server.workspaceRoot, 'x'))).toBe(false);
    expect(readdirSync(server.workspaceRoot).filter((n) => n !== '.agentloop')).toEqual([TENANT_A]);
    const privateRoot = path.join(server.workspaceRoot, '.agentloop');
    if (existsSync(privateRoot)) for (const n of readdirSync(privateRoot)) expect([TENANT_A, '.replay-log']).toContain(n);
  });
});

describe('unary error paths', () => {
  it("answers NOT_FOUND to tenant B for tenant A's thread and run", async () => {
    const probes = [
      () => b.getThread({ threadId: threadA }),
      () => b.getRun({ threadId: threadA, runId: runA }),
      () => b.listRuns({ threadId: threadA }),
      () => b.getThreadState({ threadId: threadA }),
      () => b.cancelRun({ threadId: threadA, runId: runA }),
      () => b.deleteThread({ threadId: threadA }),
    ];
    for (const p of probes) expect(grpc.status[(await grpcFailure(p())).code]).toBe('NOT_FOUND');
    expect((await a.getThread({ threadId: threadA })).threadId).toBe(threadA);
  });

  it("answers NOT_FOUND to tenant B resuming tenant A's interrupted thread over gRPC, and the thread stays interrupted", async () => {
    const err = await grpcFailure(
      b.createRun({ threadId: interruptedA, assistantId: 'agent', commandJson: JSON.stringify({ resume: { decision: 'approve', by: 'admin@corp' } }) }),
    );
    expect(grpc.status[err.code]).toBe('NOT_FOUND');
    expect((await a.getThread({ threadId: interruptedA })).status).toBe('interrupted');
  });

  it('answers UNAUTHENTICATED to unary calls without a key or with a bad one, naming no key', async () => {
    for (const c of [anon, bad]) {
      const err = await grpcFailure(c.getThread({ threadId: threadA }));
      expect(grpc.status[err.code]).toBe('UNAUTHENTICATED');
      expect(err.details).not.toContain(KEY_A);
    }
  });

  it('answers INVALID_ARGUMENT to JSON nested 10,000 deep in input_json, not INTERNAL', async () => {
    const deep = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const err = await grpcFailure(
      a.createRun({ threadId: threadA, assistantId: 'agent', inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }), metadataJson: deep }),
    );
    expect(grpc.status[err.code]).toBe('INVALID_ARGUMENT');
    expect(err.details).toMatch(/depth|nest/i);
  });
});

describe('floods', () => {
  it('ends 50 concurrent failing JoinRunStream calls with NOT_FOUND while /ok stays under 100 ms', async () => {
    const { result, probe } = await underAttack(server.url, [server.pid], () =>
      Promise.all(
        Array.from({ length: 50 }, () => streamOutcome(b.joinRunStream({ threadId: threadA, runId: runA }) as grpc.ClientReadableStream<unknown>, 8_000)),
      ),
    );
    expect(result.filter((o) => o.hung)).toHaveLength(0);
    expect(new Set(result.map((o) => grpc.status[o.code!]))).toEqual(new Set(['NOT_FOUND']));
    expect(probe.worstMs, `worst /ok over ${probe.samples} probes`).toBeLessThan(OK_BUDGET_MS);
  });

  it('serves /ok under 100 ms while 50 clients join and drop a running run', async () => {
    const thread = await newThread(server.url, KEY_A);
    const created = await call(server.url, KEY_A, 'POST', `/threads/${thread}/runs`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'slow' }] },
      config: { configurable: { model: { provider: 'scripted', turns: [{ delay_ms: 3_000, content: 'late' }] } } },
    });
    const runId = (created.json as { run_id: string }).run_id;
    const { probe } = await underAttack(server.url, [server.pid], async () => {
      const streams = Array.from({ length: 50 }, () => a.joinRunStream({ threadId: thread, runId }));
      for (const s of streams) s.on('error', () => undefined);
      await new Promise((r) => setTimeout(r, 500));
      for (const s of streams) s.cancel();
      await new Promise((r) => setTimeout(r, 300));
    });
    expect(probe.worstMs, `worst /ok over ${probe.samples} probes`).toBeLessThan(OK_BUDGET_MS);
    // The run is unaffected by its dropped watchers.
    const final = await a.waitRun({
      threadId: thread,
      assistantId: 'agent',
      inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'again' }] }),
      multitaskStrategy: 'enqueue',
      configJson: JSON.stringify({ configurable: { model: { provider: 'scripted', turns: [{ content: 'ok' }] } } }),
    });
    expect(final.run?.status).toBe('success');
  });
});
