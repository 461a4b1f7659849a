/**
 * Fault suite (a): orchestrator workers are SIGKILLed at random points while
 * 50 scripted runs append lines to their outputs file. Every run must end in
 * `success` and every line must appear exactly once (effect ledger +
 * tool-runner idempotency keys + BullMQ stalled-job takeover + checkpoints), also when a kill
 * lands while a run is suspended on its model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { freePort, startMariaDb, startNats, startRedis, type DevServer } from '@agentloop/devservers';
import { startService, type ServiceName, type ServiceProcess } from '@agentloop/agentloop-app';
import { poll, scripted } from './helpers.js';

const RUNS = Number(process.env.FAULT_RUNS ?? 50);
const LINES = 3;

describe('fault suite: orchestrators killed mid-run', () => {
  const servers: DevServer[] = [];
  const procs = new Map<string, ServiceProcess>();
  let env: NodeJS.ProcessEnv;
  let client: Client;
  let workspaceRoot: string;
  const kills: string[] = [];

  const start = (name: ServiceName, instance: number) => {
    const p = startService(name, { env, instance, fromSource: true, onLine: () => undefined });
    procs.set(`${name}#${instance}`, p);
    return p;
  };

  beforeAll(async () => {
    const [nats, redis, mysql] = await Promise.all([startNats({ jetstream: true }), startRedis(), startMariaDb()]);
    servers.push(nats, redis, mysql);
    workspaceRoot = mkdtempSync(path.join(tmpdir(), 'agentloop-fault-'));
    const port = await freePort();
    env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NATS_URL: nats.url,
      REDIS_URL: redis.url,
      MYSQL_URL: mysql.url,
      WORKSPACE_ROOT: workspaceRoot,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ALLOW_SCRIPTED_MODEL: 'true',
      RUN_CONCURRENCY: '8',
      RUN_LOCK_MS: '3000',
      RUN_STALLED_INTERVAL_MS: '1000',
      TOOL_CALL_TIMEOUT_MS: '10000',
      RUN_ATTEMPTS: '20',
      // A run is taken over after every kill of its worker: the kills, not a budget of takeovers
      // (RUN_MAX_STALLED, 20 by default, after which a run is failed), are what this suite tests.
      RUN_MAX_STALLED: '1000',
      // This suite kills orchestrators; tool approval has its own tests (hitl.test.ts).
      APPROVAL_MODE: 'off',
      GRPC_ENABLED: 'false',
      // Every model turn (150 ms) outlasts this grace period, so each run suspends while its model
      // thinks (docs/adr/0010-suspend-while-the-model-thinks.md) and kills also land on suspended runs.
      MODEL_SUSPEND_AFTER_MS: '50',
      MODEL_WAITS_IN_GRAPH: '0',
    };
    start('tool-runner', 1);
    start('orchestrator', 1);
    start('orchestrator', 2);
    start('gateway', 1);
    client = new Client({ apiUrl: `http://127.0.0.1:${port}` });
    await poll(async () => ((await fetch(`http://127.0.0.1:${port}/ok`).catch(() => undefined))?.ok ? true : undefined), 90_000);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([...procs.values()].map((p) => p.kill('SIGTERM')));
    await Promise.all(servers.map((s) => s.stop()));
    if (workspaceRoot) rmSync(workspaceRoot, { recursive: true, force: true });
  });

  it(`finishes all ${RUNS} runs with every appended line exactly once`, async () => {
    const turns = (i: number) => [
      ...Array.from({ length: LINES }, (_, l) => ({
        delay_ms: 150,
        tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/log.txt', content: `run ${i} line ${l + 1}\n`, append: true } }],
      })),
      { content: `run ${i} done` },
    ];
    const runs: Array<{ thread: string; run: string; i: number }> = [];
    for (let i = 0; i < RUNS; i++) {
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: `job ${i}` }] },
        config: scripted(turns(i)),
      });
      runs.push({ thread: thread.thread_id, run: run.run_id, i });
    }

    // Chaos: while runs are unfinished, SIGKILL a random orchestrator every 0.7–2 s and start a new
    // one, for at most CHAOS_MS. The property under test is that every run ends exactly once after
    // the faults stop; under endless kills on a loaded machine (an orchestrator started from source
    // can take longer than a kill interval to serve) progress is up to luck, not to the runtime.
    const CHAOS_MS = 90_000;
    const chaosUntil = Date.now() + CHAOS_MS;
    let done = false;
    let instance = 3;
    const last = new Map<string, string>();
    const chaos = (async () => {
      while (!done && Date.now() < chaosUntil) {
        await new Promise((r) => setTimeout(r, 700 + Math.random() * 1300));
        if (done) break;
        const alive = [...procs.entries()].filter(([k, p]) => k.startsWith('orchestrator#') && p.child.exitCode === null && p.child.signalCode === null);
        const victim = alive[Math.floor(Math.random() * alive.length)];
        if (!victim) continue;
        victim[1].child.kill('SIGKILL');
        kills.push(victim[0]);
        await victim[1].exited;
        procs.delete(victim[0]);
        start('orchestrator', instance++);
      }
    })();

    const statuses = await poll(
      async () => {
        const all = await Promise.all(runs.map((r) => client.runs.get(r.thread, r.run).then((x) => x.status)));
        runs.forEach((r, k) => last.set(r.run, all[k]!));
        return all.every((s) => ['success', 'error', 'timeout', 'interrupted'].includes(s)) ? all : undefined;
      },
      CHAOS_MS + 150_000,
      1_000,
    ).catch((err: unknown) => {
      const open = runs.filter((r) => !['success', 'error', 'timeout', 'interrupted'].includes(last.get(r.run) ?? ''));
      console.log(`fault suite: ${kills.length} SIGKILLs; unfinished runs:`, JSON.stringify(open.map((r) => [r.i, r.run, last.get(r.run)])));
      throw err;
    });
    done = true;
    await chaos;
    console.log(`fault suite: ${RUNS} runs, ${kills.length} orchestrator SIGKILLs`);

    expect(kills.length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s !== 'success')).toEqual([]);
    for (const r of runs) {
      const file = path.join(workspaceRoot, 'default', r.thread, 'outputs', 'log.txt');
      const lines = existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : [];
      const want = Array.from({ length: LINES }, (_, l) => `run ${r.i} line ${l + 1}`);
      if (JSON.stringify(lines) !== JSON.stringify(want)) {
        const state = await client.threads.getState(r.thread);
        const msgs = (state.values as { messages: Array<{ type: string; content: unknown; tool_call_id?: string }> }).messages;
        console.log(`run ${r.i} transcript:`, JSON.stringify(msgs.map((m) => [m.type, m.tool_call_id, m.content])));
      }
      expect(lines, `run ${r.i}`).toEqual(want);
    }
  }, 330_000);
});
