/**
 * The run lifecycle across processes (issue 10): two gateway replicas over one MariaDB racing
 * admissions on the same threads (the database decides), and runs deferred with
 * multitask_strategy "enqueue" surviving the death of every gateway (they live in the database,
 * not in a gateway's memory). Every run ends terminal, nothing runs twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@agentloop/devservers';
import { poll, scripted, startCluster, type ClusterHarness } from './helpers.js';

interface RunJson {
  run_id: string;
  status: string;
}

describe('run lifecycle in cluster mode: replicas racing, deferred runs surviving gateway restarts', () => {
  let cluster: ClusterHarness;
  let url2: string;

  beforeAll(async () => {
    cluster = await startCluster();
    const port2 = await freePort();
    url2 = `http://127.0.0.1:${port2}`;
    cluster.start('gateway', 2, { PORT: String(port2), GRPC_PORT: String(await freePort()) });
    await poll(async () => ((await fetch(`${url2}/ok`).catch(() => undefined))?.ok ? true : undefined), 90_000);
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  const newThread = async (base: string) =>
    ((await (await fetch(`${base}/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json()) as { thread_id: string })
      .thread_id;
  const createRun = (base: string, threadId: string, answer: string, strategy: 'reject' | 'enqueue') =>
    fetch(`${base}/threads/${threadId}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: `say ${answer}` }] },
        config: scripted([{ content: answer }]),
        multitask_strategy: strategy,
      }),
    });
  const runsOf = async (base: string, threadId: string) => (await (await fetch(`${base}/threads/${threadId}/runs?limit=100`)).json()) as RunJson[];
  const aiAnswers = async (base: string, threadId: string) => {
    const state = (await (await fetch(`${base}/threads/${threadId}/state`)).json()) as { values?: { messages?: Array<{ type: string; content: unknown }> } };
    return (state.values?.messages ?? []).filter((m) => m.type === 'ai').map((m) => m.content);
  };
  const allTerminal = (base: string, threadId: string, n: number) =>
    poll(
      async () => {
        const runs = await runsOf(base, threadId);
        return runs.length === n && runs.every((r) => ['success', 'error', 'timeout', 'interrupted'].includes(r.status)) ? runs : undefined;
      },
      90_000,
      250,
    );

  it('two gateways racing runs.create on one thread: one admitted, the others refused (reject) or run one after another (enqueue)', async () => {
    const threads = await Promise.all(Array.from({ length: 4 }, () => newThread(cluster.url)));
    for (const threadId of threads) {
      // reject: one of six concurrent creates, three per replica, wins.
      const rejectRound = await Promise.all(Array.from({ length: 6 }, (_, i) => createRun(i % 2 ? url2 : cluster.url, threadId, `r${i}`, 'reject')));
      const codes = rejectRound.map((r) => r.status).sort();
      expect(codes).toEqual([200, 409, 409, 409, 409, 409]);
      // enqueue: six more, all accepted; they run one at a time behind the first.
      const enqueueRound = await Promise.all(Array.from({ length: 6 }, (_, i) => createRun(i % 2 ? url2 : cluster.url, threadId, `e${i}`, 'enqueue')));
      expect(enqueueRound.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    }
    for (const threadId of threads) {
      const runs = await allTerminal(url2, threadId, 7);
      expect(runs.map((r) => r.status)).toEqual(Array(7).fill('success'));
      // Each run answered once, on a thread it held alone: seven answers, no duplicate.
      const answers = (await aiAnswers(cluster.url, threadId)) as string[];
      expect(answers).toHaveLength(7);
      expect(new Set(answers).size).toBe(7);
      expect(answers.filter((a) => a.startsWith('e'))).toHaveLength(6);
    }
  }, 180_000);

  it('a deferred run survives the death of every gateway and runs once the thread frees', async () => {
    // No worker: the first run stays queued, the second waits behind it.
    await cluster.procs.get('orchestrator#1')?.kill('SIGTERM');
    const threadId = await newThread(cluster.url);
    const first = (await (await createRun(cluster.url, threadId, 'first', 'reject')).json()) as RunJson;
    const second = (await (await createRun(url2, threadId, 'second', 'enqueue')).json()) as RunJson;
    const third = (await (await createRun(cluster.url, threadId, 'third', 'enqueue')).json()) as RunJson;
    expect([first.status, second.status, third.status]).toEqual(['pending', 'pending', 'pending']);

    // Both gateways die without a chance to do anything.
    for (const key of ['gateway#1', 'gateway#2']) {
      const p = cluster.procs.get(key);
      p?.child.kill('SIGKILL');
      await p?.exited;
    }
    cluster.start('gateway', 3);
    await poll(async () => ((await fetch(`${cluster.url}/ok`).catch(() => undefined))?.ok ? true : undefined), 90_000);
    expect((await runsOf(cluster.url, threadId)).map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);

    await cluster.startOrchestrator(2);
    const runs = await allTerminal(cluster.url, threadId, 3);
    expect(runs.map((r) => r.status)).toEqual(['success', 'success', 'success']);
    // In admission order, each once.
    expect(await aiAnswers(cluster.url, threadId)).toEqual(['first', 'second', 'third']);
    const thread = (await (await fetch(`${cluster.url}/threads/${threadId}`)).json()) as { status: string };
    expect(thread.status).toBe('idle');
  }, 180_000);
});
