/**
 * Fault suite (b): infrastructure restarts under load. Scripted runs append
 * lines to their workspace and ask for a webhook while redis-server,
 * nats-server and MariaDB are restarted one at a time. No run may be lost or
 * fail, every webhook must reach the receiver under one delivery id per run,
 * every line must be written exactly once, and /join requests that span a
 * NATS restart must still answer with the run's final values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { poll, retrying, scripted, startCluster, startWebhookReceiver, type ClusterHarness } from './helpers.js';

const WAVES = 3;
const PER_WAVE = 10;
const LINES = 3;
const TERMINAL = ['success', 'error', 'timeout', 'interrupted'];

interface Submitted {
  i: number;
  thread: string;
  run: string;
}

type Values = { messages: Array<{ type: string; content: unknown }> };

describe('fault suite: redis, nats and mariadb restarted under load', () => {
  let cluster: ClusterHarness;
  let client: Client;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cluster = await startCluster({
      orchestrators: 2,
      env: {
        RUN_CONCURRENCY: '8',
        RUN_ATTEMPTS: '20',
        RUN_BACKOFF_MS: '500',
        TOOL_CALL_TIMEOUT_MS: '10000',
        WEBHOOK_ATTEMPTS: '10',
        WEBHOOK_BACKOFF_MS: '200',
      },
    });
    client = new Client({ apiUrl: cluster.url });
  }, 240_000);

  afterAll(async () => {
    await cluster?.stop();
    await receiver?.close();
  });

  it('loses no run, delivers each webhook once and writes each line once across redis, nats and mariadb restarts', async () => {
    const turns = (i: number) => [
      ...Array.from({ length: LINES }, (_, l) => ({
        delay_ms: 700,
        tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/log.txt', content: `run ${i} line ${l + 1}\n`, append: true } }],
      })),
      { content: `run ${i} done` },
    ];
    const runs: Submitted[] = [];
    const submitWave = async (wave: number) => {
      for (let k = 0; k < PER_WAVE; k++) {
        const i = wave * PER_WAVE + k;
        const thread = await client.threads.create();
        const run = await client.runs.create(thread.thread_id, 'agent', {
          input: { messages: [{ role: 'user', content: `job ${i}` }] },
          config: scripted(turns(i)),
          webhook: receiver.url,
        });
        runs.push({ i, thread: thread.thread_id, run: run.run_id });
      }
    };
    /** A run submitted right after a restart and waited for: how long until the cluster serves runs again. */
    const probe = async (name: string) =>
      retrying(
        async () => {
          const thread = await client.threads.create();
          const values = (await client.runs.wait(thread.thread_id, 'agent', {
            input: { messages: [{ role: 'user', content: `probe after ${name}` }] },
            config: scripted([{ tool_calls: [{ name: 'now', args: {} }] }, { content: `recovered from ${name}` }]),
          })) as Values;
          expect(values.messages.at(-1)?.content).toBe(`recovered from ${name}`);
        },
        60_000,
        500,
      );

    const restarts: Array<{ server: string; inFlight: number; restartMs: number; recoverMs: number }> = [];
    const restart = async (name: 'redis' | 'nats' | 'mariadb') => {
      const server = { redis: cluster.redis, nats: cluster.nats, mariadb: cluster.mysql }[name];
      const statuses = await Promise.all(runs.map((r) => client.runs.get(r.thread, r.run).then((x) => x.status)));
      const inFlight = statuses.filter((st) => !TERMINAL.includes(st)).length;
      const t0 = Date.now();
      await server.restart();
      const restartMs = Date.now() - t0;
      await probe(name);
      restarts.push({ server: name, inFlight, restartMs, recoverMs: Date.now() - t0 });
    };
    const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const joinClient = new Client({ apiUrl: cluster.url, callerOptions: { maxConcurrency: Infinity, maxRetries: 0 } });
    const started = Date.now();
    const order = ['redis', 'nats', 'mariadb'] as const;
    let joins: Array<{ r: Submitted; values: Promise<Values> }> = [];
    for (let wave = 0; wave < WAVES; wave++) {
      await submitWave(wave);
      const server = order[wave % order.length]!;
      // Joins opened before the NATS restart must answer with the final values after it.
      // Their own client: no concurrency cap queueing them (the SDK's default is 4) and no SDK retry hiding a failed join.
      if (server === 'nats') joins = runs.slice(-PER_WAVE).map((r) => ({ r, values: joinClient.runs.join(r.thread, r.run) as Promise<Values> }));
      await settle(800); // the runs of this wave are in flight
      await restart(server);
    }

    const final = await poll(
      async () => {
        const all = await Promise.all(runs.map((r) => client.runs.get(r.thread, r.run))).catch(() => undefined);
        return all?.every((x) => TERMINAL.includes(x.status)) ? all : undefined;
      },
      120_000,
      1_000,
    );
    const joined = await Promise.all(joins.map(async (j) => ({ ...j, values: await j.values })));
    await receiver.waitFor(runs.length, 60_000);
    await settle(1_500); // a duplicate delivery would arrive in this window

    const latencies = final.map((x) => new Date(x.updated_at).getTime() - new Date(x.created_at).getTime());
    const byId = new Map<string, number>();
    for (const d of receiver.deliveries) {
      const id = String(d.headers['webhook-id']);
      byId.set(id, (byId.get(id) ?? 0) + 1);
    }
    console.log(
      `restart suite: ${runs.length} runs in ${((Date.now() - started) / 1000).toFixed(1)} s, ${restarts.length} restarts ` +
        restarts.map((r) => `${r.server} (${r.inFlight} runs in flight, down+up ${r.restartMs} ms, recovered in ${r.recoverMs} ms)`).join(', ') +
        `; max run latency ${Math.max(...latencies)} ms; ${receiver.deliveries.length} webhook POSTs for ${byId.size} delivery ids`,
    );

    // Each restart hit runs in flight, and the joins spanning the NATS restart were opened.
    expect(restarts.map((r) => r.server)).toEqual(['redis', 'nats', 'mariadb']);
    for (const r of restarts) expect(r.inFlight, `runs in flight at the ${r.server} restart`).toBeGreaterThan(0);
    expect(joined).toHaveLength(PER_WAVE);
    // No run lost, none failed.
    expect(final.map((x) => x.status).filter((s) => s !== 'success')).toEqual([]);
    // Every requested webhook: one delivery id per run, each received exactly once.
    expect([...byId.keys()].sort()).toEqual(runs.map((r) => r.run).sort());
    expect([...byId.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    for (const d of receiver.deliveries) expect(d.json).toMatchObject({ run_id: d.headers['webhook-id'], status: 'success' });
    // Joins that spanned the NATS restart got the final values.
    for (const j of joined) expect(j.values.messages.at(-1)?.content, `join of run ${j.r.i}`).toBe(`run ${j.r.i} done`);
    // Every line exactly once, in order.
    for (const r of runs) {
      const file = path.join(cluster.workspaceRoot, 'default', r.thread, 'outputs', 'log.txt');
      const lines = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
      expect(lines, `run ${r.i}`).toEqual(Array.from({ length: LINES }, (_, l) => `run ${r.i} line ${l + 1}`));
    }
  }, 300_000);
});
