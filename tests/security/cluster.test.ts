/**
 * The attacks that apply to cluster mode, against the cluster launcher's services as separate
 * processes (gateway, orchestrator, tool-runner, approval) over real NATS, Redis and MariaDB:
 * long paths (the tool-runner must stay responsive and small), nested JSON, gRPC error paths,
 * identity forgery and cross-tenant resumes, shared tool-call ids and absolute paths into uploads/
 * (the approval service must see the resolved path), resumes with nothing pending.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { createAgentLoopGrpcClient, type AgentLoopClient } from '@agentloop/gateway';
import { startCluster, type ClusterHarness } from '../e2e/helpers.js';
import {
  API_KEYS,
  KEY_A,
  KEY_B,
  OK_BUDGET_MS,
  RSS_CEILING_MB,
  TENANT_A,
  call,
  exclusive,
  grpcFailure,
  keyId,
  longPath,
  newThread,
  prioritize,
  runWait,
  scripted,
  streamOutcome,
  text,
  threadStatus,
  toolMessages,
  underAttack,
  userInput,
  warmUp,
  type Values,
} from './harness.js';

let cluster: ClusterHarness;
let url: string;
let a: AgentLoopClient;
let b: AgentLoopClient;
let anon: AgentLoopClient;
let wsRoot: string;

const pidOf = (key: string) => cluster.procs.get(key)!.child.pid!;

beforeAll(async () => {
  // Starting NATS, Redis, MariaDB and four services is CPU-heavy: not while another file measures an attack.
  cluster = await exclusive(() => startCluster({ env: { AGENTLOOP_API_KEYS: API_KEYS, TOOL_CALL_TIMEOUT_MS: '10000' } }));
  url = cluster.url;
  wsRoot = realpathSync(cluster.workspaceRoot);
  prioritize(['gateway#1', 'tool-runner#1', 'approval#1', 'orchestrator#1'].map(pidOf));
  a = createAgentLoopGrpcClient(cluster.grpcAddress, { apiKey: KEY_A });
  b = createAgentLoopGrpcClient(cluster.grpcAddress, { apiKey: KEY_B });
  anon = createAgentLoopGrpcClient(cluster.grpcAddress);
  await warmUp(url, KEY_A, 2);
}, 240_000);

afterAll(async () => {
  for (const c of [a, b, anon]) c?.close();
  await cluster?.stop();
});

describe('long paths against the tool-runner process', () => {
  it('refuses a 20 KB path and two 200 KB paths, the gateway answers /ok under 100 ms, the tool-runner stays under 500 MB and serves the next call at once', async () => {
    const thread = await newThread(url, KEY_A);
    const tr = pidOf('tool-runner#1');
    const { result, probe } = await underAttack(url, [pidOf('gateway#1'), tr], () =>
      runWait(
        url,
        KEY_A,
        thread,
        [
          {
            tool_calls: [
              { name: 'read_file', args: { file_path: longPath(20_000) } },
              { name: 'read_file', args: { file_path: longPath(200_000) } },
              { name: 'write_file', args: { file_path: longPath(200_000, 'temp/'), content: 'x' } },
            ],
          },
          { content: 'done' },
        ],
        { timeoutMs: 15_000 },
      ),
    );
    const tools = toolMessages(result.json as Values).map(text);
    expect(tools).toHaveLength(3);
    for (const t of tools) expect.soft(t).toMatch(/^Error: .*(too long|too deep|length|limit)/i);
    expect.soft(probe.worstMs, `worst gateway /ok over ${probe.samples} probes`).toBeLessThan(OK_BUDGET_MS);
    expect.soft(probe.peakRssMb[tr] ?? 0, 'tool-runner peak RSS (MB)').toBeLessThan(RSS_CEILING_MB);
    // Another tenant's ordinary call right after goes through quickly.
    const started = Date.now();
    const next = await runWait(url, KEY_B, await newThread(url, KEY_B), [{ tool_calls: [{ name: 'list_workspace_files', args: {} }] }, { content: 'ok' }]);
    expect(toolMessages(next.json as Values).map(text)[0]).not.toMatch(/^Error/);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 60_000);
});

describe('HTTP input', () => {
  it('answers 400 naming the depth limit to JSON nested 10,000 deep, with /ok under 100 ms and the gateway under 500 MB', async () => {
    const gw = pidOf('gateway#1');
    const { result, probe } = await underAttack(url, [gw], () =>
      call(url, KEY_A, 'POST', '/threads', undefined, {
        raw: `{"metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(result.status, result.text.slice(0, 200)).toBe(400);
    expect(result.text).toMatch(/depth|nest/i);
    expect(probe.worstMs).toBeLessThan(OK_BUDGET_MS);
    expect(probe.peakRssMb[gw] ?? 0).toBeLessThan(RSS_CEILING_MB);
  });

  it('answers 409 to a resume on a thread with nothing pending', async () => {
    const thread = await newThread(url, KEY_A);
    await runWait(url, KEY_A, thread, [{ content: 'done' }]);
    const res = await call(url, KEY_A, 'POST', `/threads/${thread}/runs/wait`, {
      assistant_id: 'agent',
      command: { resume: 'approve' },
      config: scripted([{ content: 'x' }]),
    });
    expect(res.status, res.text).toBe(409);
  });
});

describe('gRPC error paths (client without a deadline)', () => {
  it('ends failing StreamRun and JoinRunStream calls with NOT_FOUND or UNAUTHENTICATED', async () => {
    const thread = await newThread(url, KEY_A);
    await runWait(url, KEY_A, thread, [{ content: 'x' }]);
    const runId = ((await call(url, KEY_A, 'GET', `/threads/${thread}/runs`)).json as Array<{ run_id: string }>)[0]!.run_id;
    const req = (threadId: string) => ({
      threadId,
      assistantId: 'agent',
      inputJson: JSON.stringify(userInput('x')),
      configJson: JSON.stringify(scripted([{ content: 'x' }])),
    });
    const cases: Array<[string, () => grpc.ClientReadableStream<unknown>, string]> = [
      ['StreamRun unknown thread', () => a.streamRun(req(randomUUID())) as grpc.ClientReadableStream<unknown>, 'NOT_FOUND'],
      ['JoinRunStream unknown run', () => a.joinRunStream({ threadId: thread, runId: randomUUID() }) as grpc.ClientReadableStream<unknown>, 'NOT_FOUND'],
      ["JoinRunStream other tenant's run", () => b.joinRunStream({ threadId: thread, runId }) as grpc.ClientReadableStream<unknown>, 'NOT_FOUND'],
      ['StreamRun without a key', () => anon.streamRun(req(thread)) as grpc.ClientReadableStream<unknown>, 'UNAUTHENTICATED'],
      ['JoinRunStream without a key', () => anon.joinRunStream({ threadId: thread, runId }) as grpc.ClientReadableStream<unknown>, 'UNAUTHENTICATED'],
    ];
    const got: Record<string, string> = {};
    for (const [name, open] of cases) {
      const o = await streamOutcome(open(), 5_000);
      got[name] = o.hung ? 'HUNG' : grpc.status[o.code!];
    }
    expect(got).toEqual(Object.fromEntries(cases.map(([n, , c]) => [n, c])));
  });

  it('answers INVALID_ARGUMENT to CreateRun, GetRun and GetThread with thread id ../../x', async () => {
    const codes = [
      await grpcFailure(a.createRun({ threadId: '../../x', assistantId: 'agent', inputJson: JSON.stringify(userInput('x')), ifNotExistsCreate: true })),
      await grpcFailure(a.getRun({ threadId: '../../x', runId: randomUUID() })),
      await grpcFailure(a.getThread({ threadId: '../../x' })),
    ].map((e) => grpc.status[e.code]);
    expect(codes).toEqual(['INVALID_ARGUMENT', 'INVALID_ARGUMENT', 'INVALID_ARGUMENT']);
  });
});

describe('approvals across processes', () => {
  it('never runs a secret write silently when a harmless call shares its tool-call id', async () => {
    const thread = await newThread(url, KEY_A);
    const res = await runWait(url, KEY_A, thread, [
      {
        tool_calls: [
          { name: 'write_file', id: 'dup', args: { file_path: 'outputs/creds.txt', content: 'password=hunter2' } },
          { name: 'now', id: 'dup', args: {} },
        ],
      },
      { content: 'done' },
    ]);
    expect(existsSync(path.join(wsRoot, TENANT_A, thread, 'outputs', 'creds.txt')), res.text.slice(0, 300)).toBe(false);
  });

  it('interrupts an absolute write into the thread’s uploads/ like the relative one', async () => {
    const thread = await newThread(url, KEY_A);
    const form = new FormData();
    form.append('file', new Blob(['the user wrote this']), 'notes.txt');
    expect((await call(url, KEY_A, 'POST', `/threads/${thread}/files`, undefined, { raw: form })).status).toBe(201);
    const target = path.join(wsRoot, TENANT_A, thread, 'uploads', 'notes.txt');
    await runWait(url, KEY_A, thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: target, content: 'overwritten' } }] }, { content: 'done' }]);
    expect(readFileSync(target, 'utf8')).toBe('the user wrote this');
    expect(await threadStatus(url, KEY_A, thread)).toBe('interrupted');
  });

  it.each([
    ['a zero-width space', 'pass\u200bword=hunter2'],
    ['AWS_SECRET_ACCESS_KEY=', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
  ])('interrupts a secret spelled with %s', async (_name, content) => {
    const thread = await newThread(url, KEY_A);
    await runWait(url, KEY_A, thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/s.txt', content } }] }, { content: 'done' }]);
    expect(await threadStatus(url, KEY_A, thread)).toBe('interrupted');
    expect(existsSync(path.join(wsRoot, TENANT_A, thread, 'outputs', 's.txt'))).toBe(false);
  });

  it("keeps tenant B from resuming A's interrupt (404) and records A's key id as the approver beside the typed label", async () => {
    const thread = await newThread(url, KEY_A);
    await runWait(url, KEY_A, thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/c.env', content: 'password=hunter2' } }] }]);
    expect(await threadStatus(url, KEY_A, thread)).toBe('interrupted');
    const resume = { assistant_id: 'agent', command: { resume: { decision: 'approve', by: 'admin@corp' } }, config: scripted([{ content: 'Saved.' }]) };
    expect((await call(url, KEY_B, 'POST', `/threads/${thread}/runs/wait`, resume)).status).toBe(404);
    expect(await threadStatus(url, KEY_A, thread)).toBe('interrupted');
    expect((await call(url, KEY_A, 'POST', `/threads/${thread}/runs/wait`, resume)).status).toBe(200);
    const audit = await call(url, KEY_A, 'GET', `/approvals/audit?thread_id=${thread}`);
    expect((audit.json as { entries: unknown[] }).entries).toEqual([
      expect.objectContaining({ decision: 'approved', decided_by: 'admin@corp', approver_tenant_id: TENANT_A, approver_key_id: keyId(KEY_A) }),
    ]);
    expect(audit.text).not.toContain(KEY_A);
  });
});

// The file checks above look under <WORKSPACE_ROOT>/<tenant>/<thread>; were that wrong, a "file does not
// exist" assertion would pass for nothing. This guards the assumption.
it('keeps thread files where the suite looks for them (<WORKSPACE_ROOT>/<tenant>/<thread>)', async () => {
  const thread = await newThread(url, KEY_A);
  await runWait(url, KEY_A, thread, [{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/probe.txt', content: 'x' } }] }, { content: 'ok' }]);
  writeFileSync(path.join(wsRoot, TENANT_A, thread, 'outputs', 'probe.txt'), 'from the harness');
  expect((await call(url, KEY_A, 'GET', `/threads/${thread}/files/outputs/probe.txt`)).text).toBe('from the harness');
});
