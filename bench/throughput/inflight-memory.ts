/**
 * What a run waiting on its model costs in memory (issue 9, in-flight capacity): AgentLoop
 * embedded in this process, N background runs (one tool call, then a model turn that waits 10
 * minutes), all waiting at once; then RSS, heap and external memory after a full GC, per run, and
 * with `--snapshot` the heap by constructor (count per run), from a V8 heap snapshot. Unlike the
 * `inflight` workload's peak RSS, this excludes garbage not yet collected. See README "Memory of a
 * run in flight".
 *
 *   node --expose-gc --import tsx --conditions=@agentloop/source bench/throughput/inflight-memory.ts [N] [--snapshot]
 *
 * Runs in one thread (EMBEDDED_THREADS=none) unless EMBEDDED_THREADS is set: the heap figures are
 * this thread's, and only this thread is collected before they are read.
 *
 * MODEL_WAITS_IN_GRAPH is 0 unless set (every waiting run suspends; the default of 1,000 would keep
 * the first 1,000 runs' invocations, ~97 KiB each). MODEL_SUSPEND_AFTER_MS from the environment is
 * passed on (0: runs wait inside their graph, as before suspension existed;
 * docs/adr/0010-suspend-while-the-model-thinks.md).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { startEmbedded } from '@agentloop/agentloop-app';

const N = Number(process.argv[2] ?? 1000);
const snapshot = process.argv.includes('--snapshot');
const gc = (globalThis as { gc?: () => void }).gc!;
const dataDir = mkdtempSync(path.join(tmpdir(), 'inflight-mem-'));
const server = await startEmbedded({
  port: 0,
  env: {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ALLOW_SCRIPTED_MODEL: 'true',
    // One isolate by default: gc() and heapUsed see this thread's heap only, and orchestrator
    // threads (embedded mode's default) would hold the runs out of their sight.
    EMBEDDED_THREADS: process.env.EMBEDDED_THREADS ?? 'none',
    ...(process.env.MODEL_SUSPEND_AFTER_MS !== undefined ? { MODEL_SUSPEND_AFTER_MS: process.env.MODEL_SUSPEND_AFTER_MS } : {}),
    // 0 by default: every waiting run suspended, the state this measures; N: the first N keep their graph.
    MODEL_WAITS_IN_GRAPH: process.env.MODEL_WAITS_IN_GRAPH ?? '0',
  },
});

const turns = [
  { tool_calls: [{ name: 'now', args: {} }], delay_ms: 1 },
  { content: 'done', delay_ms: 600_000 },
];
async function submit(i: number): Promise<void> {
  const res = await fetch(`${server.url}/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: `run ${i}` }] },
      config: { configurable: { model: { provider: 'scripted', turns } } },
      on_completion: 'keep',
    }),
  });
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
}
async function settle(): Promise<void> {
  // Wait until the process is idle: every run waits on its model.
  let last = process.cpuUsage();
  for (;;) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = process.cpuUsage(last);
    last = process.cpuUsage();
    if ((now.user + now.system) / 1000 < 30) return;
  }
}
const mem = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed, heapTotal: m.heapTotal, external: m.external + m.arrayBuffers };
};
// Warm up (modules, caches) with a few runs, then measure the base.
for (let i = 0; i < 20; i++) await submit(i);
await settle();
const before = mem();
const t0 = Date.now();
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < N) await submit(next++);
  }),
);
const submitS = (Date.now() - t0) / 1000;
await settle();
const after = mem();
const kb = (b: number) => (b / 1024 / N).toFixed(1);
console.log(
  `${N} runs in flight (submitted at ${(N / Math.max(submitS, 0.001)).toFixed(0)}/s by 32 clients): per run RSS ${kb(after.rss - before.rss)} KiB, ` +
    `heap ${kb(after.heap - before.heap)} KiB (V8 holds ${kb(after.heapTotal - before.heapTotal)} KiB), external ${kb(after.external - before.external)} KiB (after a full GC)`,
);
if (snapshot) {
  const file = v8.writeHeapSnapshot(path.join(dataDir, 'h.heapsnapshot'));
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const f = snap.snapshot.meta.node_fields;
  const width = f.length;
  const [iType, iName, iSize] = [f.indexOf('type'), f.indexOf('name'), f.indexOf('self_size')];
  const types = snap.snapshot.meta.node_types[0];
  const by = new Map<string, { n: number; size: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + iType]!]!;
    const name = type === 'object' || type === 'closure' ? `${type}:${snap.strings[snap.nodes[i + iName]!]}` : type;
    const e = by.get(name) ?? { n: 0, size: 0 };
    e.n++;
    e.size += snap.nodes[i + iSize]!;
    by.set(name, e);
  }
  const top = [...by.entries()].sort((a, b) => b[1].size - a[1].size).slice(0, 40);
  for (const [name, e] of top)
    console.log(
      `${(e.size / 1024 / 1024).toFixed(1).padStart(8)} MiB ${String(e.n).padStart(9)}  ${(e.n / N).toFixed(1).padStart(7)}/run  ${name.slice(0, 100)}`,
    );
}
// The runs wait for minutes: no graceful close, just the data gone.
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
