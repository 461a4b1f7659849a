/**
 * A run's start and end on MariaDB (`RunLifecycle.take` then `end`, the orchestrator's store work
 * around a run, issue 9) with the store of this tree against the store of another commit, on one
 * server, in batches interleaved A B B A…, so that the machine's load falls on both alike. Per
 * run: wall time of the take and of the end (p50), the client's CPU (this process) and mariadbd's
 * CPU (/proc; 10 ms ticks, so read over many runs). Each run is admitted on a thread of its own
 * first (not timed); every fourth run's thread has a deferred run behind it, which the end promotes.
 *
 *   npx tsx --conditions=@agentloop/source bench/throughput/lifecycle-cost.ts --snapshot REF [--runs 2000] [--batch 100]
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startMariaDb } from '@agentloop/devservers';
import * as tree from '@agentloop/store';
import { cpuMs } from './proc.js';
import { prepareSnapshot } from './snapshot.js';
import { REPO_ROOT } from './targets.js';

const { values: args } = parseArgs({
  options: { snapshot: { type: 'string' }, runs: { type: 'string', default: '2000' }, batch: { type: 'string', default: '100' } },
});
if (!args.snapshot) throw new Error('usage: lifecycle-cost.ts --snapshot REF [--runs 2000] [--batch 100]');
const runs = Number(args.runs);
const batch = Number(args.batch);
const snap = prepareSnapshot(REPO_ROOT, args.snapshot, os.tmpdir());
const other = (await import(path.join(snap.root, 'libs/store/src/index.ts'))) as typeof tree;

const server = await startMariaDb();
const mariadbPid = Number(
  readdirSync('/proc').find((p) => /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(`--port=${server.port}`)),
);
const stores = { tree: tree.createMysqlStore({ url: server.url }), [snap.commit.slice(0, 12)]: other.createMysqlStore({ url: server.url }) };
await stores.tree.migrate();
const names = Object.keys(stores);
const lifecycles = Object.fromEntries(names.map((k) => [k, new (k === 'tree' ? tree.RunLifecycle : other.RunLifecycle)(stores[k]!)]));
const stats = Object.fromEntries(names.map((k) => [k, { take: [] as number[], end: [] as number[], clientMs: 0, serverMs: 0, runs: 0 }]));
let n = 0;

async function oneRun(name: string, measured: boolean): Promise<void> {
  const store = stores[name]!;
  const l = lifecycles[name]!;
  const tenantId = 'bench';
  const { threadId } = await store.createThread({ tenantId, threadId: `t-${name}-${n}` });
  const runId = `r-${name}-${n}`;
  await l.admit({ run: { runId, threadId, tenantId, assistantId: 'agent' }, whenBusy: 'defer' });
  if (n % 4 === 0) await l.admit({ run: { runId: `d-${name}-${n}`, threadId, tenantId, assistantId: 'agent' }, whenBusy: 'defer' });
  n++;
  const t0 = performance.now();
  const taken = await l.take(tenantId, runId);
  const t1 = performance.now();
  const ended = await l.end({ tenantId, runId, status: 'success', values: { messages: ['x'.repeat(3000)] }, cause: 'finished' });
  const t2 = performance.now();
  if (taken.kind !== 'started' || ended.kind !== 'ended') throw new Error(`${name}: ${taken.kind}, ${ended.kind}`);
  if (measured) {
    stats[name]!.take.push(t1 - t0);
    stats[name]!.end.push(t2 - t1);
  }
}

try {
  for (const k of names) for (let i = 0; i < 50; i++) await oneRun(k, false);
  const order = [...names, ...[...names].reverse()];
  for (let b = 0; b * batch < runs * names.length; b++) {
    const name = order[b % order.length]!;
    // Only the timed part's CPU would be cleaner, but mariadbd's ticks need a batch: the untimed
    // admissions fall on both variants alike (the same statements on both commits).
    const c0 = process.cpuUsage();
    const s0 = cpuMs(mariadbPid);
    for (let i = 0; i < batch; i++) await oneRun(name, true);
    const c = process.cpuUsage(c0);
    stats[name]!.clientMs += (c.user + c.system) / 1000;
    stats[name]!.serverMs += cpuMs(mariadbPid) - s0;
    stats[name]!.runs += batch;
  }
  const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(2);
  console.log(
    `load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  console.log('store        runs  take p50 ms  end p50 ms  client CPU ms/run (admission included)  mariadbd CPU ms/run');
  for (const k of names) {
    const s = stats[k]!;
    console.log(
      `${k.padEnd(12)} ${String(s.runs).padStart(5)}  ${p50(s.take).padStart(11)}  ${p50(s.end).padStart(10)}  ${(s.clientMs / s.runs).toFixed(3).padStart(39)}  ${(s.serverMs / s.runs).toFixed(3).padStart(19)}`,
    );
  }
} finally {
  for (const s of Object.values(stores)) await s.close();
  await server.stop();
}
