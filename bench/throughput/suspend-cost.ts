/**
 * What suspending a run while its model thinks costs in CPU (docs/adr/0010-suspend-while-the-model-thinks.md):
 * the orchestrator's RunExecutor in this process (SQLite store in memory, LangGraph's MemorySaver,
 * no tool-runner: `todo_read` is a local tool), runs of 3 model turns that each wait `--delay-ms`,
 * 16 at a time, with suspension off (MODEL_SUSPEND_AFTER_MS=0) and on (1 ms: every turn suspends),
 * alternated A B A B. Prints the process CPU per run and the difference per suspended turn.
 *
 *   npx tsx --conditions=@agentloop/source bench/throughput/suspend-cost.ts [--runs 200] [--delay-ms 20] [--rounds 2]
 */
import { MemorySaver } from '@langchain/langgraph';
import { create, RunJobSchema, type RunJob } from '@agentloop/proto';
import { MemoryBus, MemoryRunEventStream } from '@agentloop/bus';
import { MemoryQueue } from '@agentloop/queue';
import { RunLifecycle, createSqliteStore } from '@agentloop/store';
import { silentLogger } from '@agentloop/core';
import { RunExecutor } from '../../services/orchestrator/src/run-executor.js';
import { ModelRegistry } from '../../services/orchestrator/src/models/registry.js';
import { ToolClient } from '../../services/orchestrator/src/tool-client.js';

const arg = (name: string, def: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const RUNS = arg('runs', 200);
const DELAY = arg('delay-ms', 20);
const ROUNDS = arg('rounds', 2);
const TURNS = [
  { tool_calls: [{ name: 'todo_read', args: {} }], delay_ms: DELAY },
  { tool_calls: [{ name: 'todo_read', args: {} }], delay_ms: DELAY },
  { content: 'done', delay_ms: DELAY },
];

async function round(graceMs: number): Promise<{ cpuMs: number; suspended: number }> {
  const store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  const events = new MemoryRunEventStream();
  const webhooks = new MemoryQueue('webhooks');
  const bus = new MemoryBus();
  const executor = new RunExecutor({
    store,
    events,
    webhooks,
    tools: new ToolClient(bus, { callTimeoutMs: 1_000, listTimeoutMs: 100 }),
    models: new ModelRegistry({}, true),
    checkpointer: new MemorySaver(),
    logger: silentLogger(),
    config: { maxLoopsDefault: 10, runTimeoutMs: 600_000, webhookAttempts: 1, webhookBackoffMs: 10, durability: 'async', modelSuspendAfterMs: graceMs },
  });
  const lifecycle = new RunLifecycle(store);
  const jobs: RunJob[] = [];
  for (let i = 0; i < RUNS; i++) {
    const threadId = crypto.randomUUID();
    const runId = crypto.randomUUID();
    await store.createThread({ tenantId: 't1', threadId });
    await lifecycle.admit({ run: { tenantId: 't1', threadId, runId, assistantId: 'agent' }, whenBusy: 'reject' });
    jobs.push(
      create(RunJobSchema, {
        runId,
        threadId,
        tenantId: 't1',
        assistantId: 'agent',
        inputJson: JSON.stringify({ messages: [{ role: 'user', content: `run ${i}` }] }),
        configJson: JSON.stringify({ configurable: { model: { provider: 'scripted', turns: TURNS } } }),
        streamMode: ['values'],
      }),
    );
  }
  let suspended = 0;
  const watch = setInterval(() => (suspended = Math.max(suspended, executor.suspendedOnModel.count)), 1);
  const signal = new AbortController().signal;
  const cpu0 = process.cpuUsage();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < jobs.length) await executor.execute(jobs[next++]!, 0, signal);
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  clearInterval(watch);
  for (const j of jobs) if ((await store.getRun('t1', j.runId))?.status !== 'success') throw new Error(`run ${j.runId} did not succeed`);
  await Promise.allSettled([webhooks.close(), events.close(), bus.close(), store.close()]);
  return { cpuMs: (cpu.user + cpu.system) / 1000, suspended };
}

await round(0); // warm-up
const off: number[] = [];
const on: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  const a = await round(0);
  const b = await round(1);
  if (a.suspended !== 0 || b.suspended === 0) throw new Error('suspension did not happen as configured');
  off.push(a.cpuMs / RUNS);
  on.push(b.cpuMs / RUNS);
  console.log(
    `round ${r + 1}: CPU per run — suspension off ${(a.cpuMs / RUNS).toFixed(2)} ms, on ${(b.cpuMs / RUNS).toFixed(2)} ms (max ${b.suspended} suspended at once)`,
  );
}
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
console.log(
  `per suspended model turn: ${((mean(on) - mean(off)) / TURNS.length).toFixed(2)} ms of CPU (${RUNS} runs × ${TURNS.length} turns of ${DELAY} ms, ${ROUNDS} rounds)`,
);
