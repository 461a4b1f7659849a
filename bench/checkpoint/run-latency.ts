/**
 * A LangGraph run's wall time and CPU with MySQLSaver from this tree against MySQLSaver from another
 * commit, in one process on one server, runs interleaved A B B A…, so that what else the machine
 * does falls on both alike (issue 9: on a loaded machine, cluster-wide latency figures moved more
 * from minute to minute than any change to the saver). The graph has the bench/throughput run's
 * shape with durability "sync": START → agent → tools → agent → tools → agent → END, 6 checkpoints
 * plus the input's, each step appending a ~1.5 KB message.
 *
 *   npx tsx --conditions=@agentloop/source bench/checkpoint/run-latency.ts --snapshot REF [--runs 600]
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { startMariaDb } from '@agentloop/devservers';
import { MySQLSaver } from '@agentloop/checkpoint-mysql';
import { prepareSnapshot } from '../throughput/snapshot.js';
import { REPO_ROOT } from '../throughput/targets.js';

const { values: args } = parseArgs({ options: { snapshot: { type: 'string' }, runs: { type: 'string', default: '600' } } });
if (!args.snapshot) throw new Error('usage: run-latency.ts --snapshot REF [--runs 600]');
const runs = Number(args.runs);
const snap = prepareSnapshot(REPO_ROOT, args.snapshot, os.tmpdir());
const other = (await import(path.join(snap.root, 'libs/checkpoint-mysql/src/saver.ts'))) as { MySQLSaver: typeof MySQLSaver };

const State = Annotation.Root({
  messages: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  loops: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
});
const filler = 'x'.repeat(1500);
const graphOf = (checkpointer: BaseCheckpointSaver) =>
  new StateGraph(State)
    .addNode('agent', (s) => ({ messages: [`ai ${s.loops} ${filler}`], loops: s.loops + 1 }))
    .addNode('tools', () => ({ messages: [`tool ${filler}`] }))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (s) => (s.loops < 3 ? 'tools' : END))
    .addEdge('tools', 'agent')
    .compile({ checkpointer });

const server = await startMariaDb();
const savers = { tree: MySQLSaver.fromConnString(server.url), [snap.commit.slice(0, 12)]: other.MySQLSaver.fromConnString(server.url) };
await savers.tree.setup();
const names = Object.keys(savers);
/** Round trips (the pool's query()/execute() calls) of each saver. */
const trips = Object.fromEntries(names.map((k) => [k, 0]));
for (const k of names) {
  const pool = (savers[k] as unknown as { pool: Record<'query' | 'execute', (...a: unknown[]) => unknown> }).pool;
  for (const m of ['query', 'execute'] as const) {
    const f = pool[m].bind(pool);
    pool[m] = (...a: unknown[]) => (trips[k]!++, f(...a));
  }
}
const graphs = Object.fromEntries(names.map((k) => [k, graphOf(savers[k]!)]));
const wall = Object.fromEntries(names.map((k) => [k, [] as number[]]));
const cpu = Object.fromEntries(names.map((k) => [k, 0]));
try {
  const warmup = Math.min(50, Math.floor(runs / 10));
  for (let i = 0; i < runs + warmup; i++) {
    if (i === warmup) for (const n of names) trips[n] = 0;
    for (const k of i % 2 ? names : [...names].reverse()) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await graphs[k]!.invoke({ messages: ['hi'] }, { configurable: { thread_id: `${k}-${i}-${process.pid}-${Date.now()}` }, durability: 'sync' });
      if (i < warmup) continue;
      wall[k]!.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu[k]! += (c.user + c.system) / 1000;
    }
  }
  console.log(
    `${runs} runs each, interleaved; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  for (const k of names) {
    const a = wall[k]!.sort((x, y) => x - y);
    const q = (p: number) => a[Math.min(a.length - 1, Math.floor(a.length * p))]!.toFixed(2);
    console.log(
      `  ${k.padEnd(14)} wall p50 ${q(0.5)} ms, p90 ${q(0.9)} ms; this process's CPU ${(cpu[k]! / a.length).toFixed(2)} ms/run; MariaDB round trips ${(trips[k]! / a.length).toFixed(2)}/run`,
    );
  }
} finally {
  await Promise.allSettled(Object.values(savers).map((s) => s.end()));
  await server.stop();
}
