/**
 * Crons in cluster mode (issue 12): two gateways and two orchestrators over one Redis. A cron that
 * ticks every 3 s (the seconds form, allowed by CRON_ALLOW_SECONDS for tests only) fires exactly
 * once per tick across both gateways' scheduler workers, and keeps firing after every gateway and
 * orchestrator restarted (the schedule lives in Redis, not in a process).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { freePort } from '@agentloop/devservers';
import { poll, scripted, startCluster, type ClusterHarness } from './helpers.js';

const EVERY_3_SECONDS = '*/3 * * * * *';

describe('crons across two gateways and two orchestrators', () => {
  let cluster: ClusterHarness;
  let client: Client;
  let gateway2: NodeJS.ProcessEnv;

  beforeAll(async () => {
    cluster = await startCluster({ orchestrators: 2, env: { CRON_ALLOW_SECONDS: 'true' } });
    gateway2 = { PORT: String(await freePort()), GRPC_PORT: String(await freePort()) };
    cluster.start('gateway', 2, gateway2);
    await poll(async () => ((await fetch(`http://127.0.0.1:${gateway2.PORT}/ok`).catch(() => undefined))?.ok ? true : undefined), 90_000);
    client = new Client({ apiUrl: cluster.url });
  }, 240_000);
  afterAll(async () => cluster?.stop(), 60_000);

  /** The ticks the gateways turned into runs for this cron, as logged ("cron fired a run"). */
  const firedTicks = (cronId: string): number[] =>
    cluster.logs
      .filter((l) => /^\[gateway#\d\] /.test(l) && l.includes('cron fired a run'))
      .map((l) => JSON.parse(l.slice(l.indexOf('] ') + 2)) as { cron_id?: string; tick_at?: string })
      .filter((e) => e.cron_id === cronId)
      .map((e) => Date.parse(e.tick_at ?? ''));

  const expectOncePerTick = (ticks: number[]) => {
    expect(new Set(ticks).size).toBe(ticks.length);
    const sorted = [...ticks].sort((a, b) => a - b);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBe(3_000);
  };

  it('fires once per tick, and again after every gateway and orchestrator restarted', async () => {
    const thread = await client.threads.create();
    const cron = await client.crons.createForThread(thread.thread_id, 'agent', {
      schedule: EVERY_3_SECONDS,
      input: { messages: [{ role: 'user', content: 'tick' }] },
      config: scripted([{ content: 'tock' }]),
    });
    await poll(async () => (firedTicks(cron.cron_id).length >= 3 ? true : undefined), 60_000, 100);
    const before = firedTicks(cron.cron_id);
    expectOncePerTick(before);

    // Every gateway and orchestrator stops; the schedule stays in Redis.
    const keys = ['gateway#1', 'gateway#2', 'orchestrator#1', 'orchestrator#2'];
    await Promise.all(keys.map((k) => cluster.procs.get(k)!.kill('SIGTERM')));
    const stoppedAt = Date.now();
    await Promise.all([cluster.startOrchestrator(1), cluster.startOrchestrator(2)]);
    cluster.start('gateway', 1);
    cluster.start('gateway', 2, gateway2);
    await poll(async () => ((await fetch(`${cluster.url}/ok`).catch(() => undefined))?.ok ? true : undefined), 90_000);
    await poll(async () => (firedTicks(cron.cron_id).filter((t) => t > stoppedAt).length >= 2 ? true : undefined), 90_000, 100);

    const all = firedTicks(cron.cron_id);
    expect(new Set(all).size).toBe(all.length);
    // After the restart the ticks are again one per 3 s (a tick missed while nothing ran fires once, late).
    expectOncePerTick(all.filter((t) => t > stoppedAt + 3_000));
    // Each logged firing is exactly one run on the thread (counted once the cron is gone and no tick can come).
    await client.crons.delete(cron.cron_id);
    const runsOf = async () => (await client.runs.list(thread.thread_id, { limit: 1000 })).filter((r) => r.metadata?.cron_id === cron.cron_id).length;
    await poll(async () => ((await runsOf()) === firedTicks(cron.cron_id).length ? true : undefined), 30_000);
    expect(await runsOf()).toBe(firedTicks(cron.cron_id).length);
  }, 300_000);
});
