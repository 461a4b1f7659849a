/**
 * What one embedded run does, counted rather than timed (issue 9): N sequential `runs.wait` runs
 * against AgentLoop embedded started in this process, and per run the SQLite statements executed
 * (by database file and SQL text), the transactions committed and the filesystem calls made. Counts
 * do not depend on what else runs on the machine; they show which work a change removed.
 *
 *   npx tsx --conditions=@agentloop/source bench/throughput/embedded-cost.ts [--runs 40] [--top 40] [--where REGEX] [--time] [--promises] [--ledger] [--profile FILE] [--alloc-profile FILE] [--clients N] [--snapshot REF] [--delay-ms MS]
 *
 * Commits are counted too (a write statement that leaves its connection outside a transaction: an
 * autocommit write, or the COMMIT itself), per database file. `--clients N`: N clients in a closed
 * loop share the runs (default 1, sequential), so writes that concurrent runs can share show up.
 * `--snapshot REF`: AgentLoop from a read-only copy of a commit (snapshot.ts), the counting hooks
 * of this tree — to compare before and after on the same minutes.
 * `--delay-ms MS`: each model turn waits MS (above MODEL_SUSPEND_AFTER_MS, 250 ms by default, every
 * turn suspends the run, as in the in-flight workload), to count what suspending and resuming adds.
 *
 * `--time`: also the time spent inside each kind of SQLite statement, ms per run: wall time of the
 * synchronous call (it moves with the machine's load, unlike the counts), and the process's CPU time
 * during it.
 * `--ledger`: the run calls `write_file` (side effects: the effect ledger and tool-runner's replay
 * log) instead of `now` (idempotent: neither), to count what a side-effecting tool call adds.
 * `--profile FILE`: a CPU profile (250 µs) of the counted runs, load generator included (the SDK
 * client runs in this process), for `profile-summary.ts FILE --runs N`.
 * `--alloc-profile FILE`: the bytes allocated during the counted runs, by allocating function (V8's
 * sampling heap profiler, dead objects included), load generator included, for `alloc-summary.ts`.
 * `--promises`: also the promises created per run (an async_hooks init hook: every promise of the
 * process, load generator included — each one also runs the AsyncLocalStorage hook LangChain enables).
 * `--where`: for each counted call whose key matches REGEX, also counts the AgentLoop functions
 * that made it (the first few stack frames in the repository's own code), to find who reads what.
 */
import { createHook } from 'node:async_hooks';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { checkValues, ledgerRunConfig, runConfig, sdkClient } from './load.js';
import { startAllocationProfile, startProfile } from './inspector-profile.js';
import { prepareSnapshot } from './snapshot.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '40' },
    top: { type: 'string', default: '40' },
    where: { type: 'string' },
    time: { type: 'boolean', default: false },
    ledger: { type: 'boolean', default: false },
    profile: { type: 'string' },
    'alloc-profile': { type: 'string' },
    promises: { type: 'boolean', default: false },
    clients: { type: 'string', default: '1' },
    snapshot: { type: 'string' },
    'delay-ms': { type: 'string', default: '0' },
  },
});
const where = args.where ? new RegExp(args.where) : undefined;
if (where) Error.stackTraceLimit = 60;
const runs = Number(args.runs);

const counts = new Map<string, number>();
/** --time: ms spent inside each statement kind (same keys as counts). */
const times = new Map<string, number>();
/** --time: CPU ms (process.cpuUsage, every thread of the process) inside each statement kind: less moved by load than wall time. */
const cpuTimes = new Map<string, number>();
let counting = false;
const count = (key: string): void => {
  if (!counting) return;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  if (where?.test(key)) {
    const frames = (new Error().stack ?? '')
      .split('\n')
      .filter((l) => /\/(libs|services|apps)\//.test(l) && !/node_modules|libs\/store\/src\/(sqlite|statement)/.test(l))
      .slice(0, 4)
      .map((l) =>
        l
          .trim()
          .replace(/^at /, '')
          .replace(/\(?\/.*?\/((libs|services|apps)\/)/, '$1')
          .replace(/\)$/, ''),
      );
    const site = `  ↳ ${key.slice(0, 40)} ← ${frames.join(' ← ')}`;
    counts.set(site, (counts.get(site) ?? 0) + 1);
  }
};

// Every statement of every connection: better-sqlite3's Statement methods live on one prototype.
const probe = new BetterSqlite3(':memory:');
const stmtProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
probe.close();
for (const method of ['run', 'get', 'all', 'iterate'] as const) {
  const original = stmtProto[method]!;
  stmtProto[method] = function (this: { source: string; reader: boolean; database: { name: string; inTransaction: boolean } }, ...a: unknown[]) {
    const key = `sql ${path.basename(this.database.name)}: ${this.source.replace(/\s+/g, ' ').trim().slice(0, 90)}`;
    count(key);
    const committed = (): void => {
      if (!this.reader && !this.database.inTransaction) count(`commits ${path.basename(this.database.name)}`);
    };
    if (!args.time || !counting) {
      const out = original.apply(this, a);
      committed();
      return out;
    }
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    try {
      const out = original.apply(this, a);
      committed();
      return out;
    } finally {
      times.set(key, (times.get(key) ?? 0) + performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpuTimes.set(key, (cpuTimes.get(key) ?? 0) + (c.user + c.system) / 1000);
    }
  };
}
const dbProto = BetterSqlite3.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
for (const method of ['exec', 'pragma'] as const) {
  const original = dbProto[method]!;
  dbProto[method] = function (this: { name: string }, ...a: unknown[]) {
    count(`sql ${path.basename(this.name)}: ${method} ${String(a[0]).replace(/\s+/g, ' ').slice(0, 80)}`);
    return original.apply(this, a);
  };
}
// Filesystem calls through fs.promises and the synchronous API.
for (const [api, label] of [
  [fs.promises as unknown as Record<string, unknown>, 'fs.promises'],
  [fs as unknown as Record<string, unknown>, 'fs'],
] as const) {
  for (const name of Object.keys(api)) {
    const fn = api[name];
    if (typeof fn !== 'function' || /^[A-Z]/.test(name) || name === 'constants' || name.startsWith('watch')) continue;
    api[name] = function (this: unknown, ...a: unknown[]) {
      count(`${label}.${name}`);
      return (fn as (...x: unknown[]) => unknown).apply(this, a);
    };
  }
}
// Named imports (`import { mkdir } from 'node:fs/promises'`) are bound to the builtin's exports as
// they were: without this, calls made through them went uncounted.
syncBuiltinESMExports();
// Calls on an open file (FileHandle: stat, write, close, …), one prototype for all handles.
{
  const probeFile = path.join(os.tmpdir(), `agentloop-embedded-cost-probe-${process.pid}`);
  const fh = await fs.promises.open(probeFile, 'w');
  const handleProto = Object.getPrototypeOf(fh) as Record<string, unknown>;
  await fh.close();
  fs.rmSync(probeFile, { force: true });
  for (const name of Object.getOwnPropertyNames(handleProto)) {
    const fn = Object.getOwnPropertyDescriptor(handleProto, name)?.value as unknown;
    if (typeof fn !== 'function' || name === 'constructor' || name.startsWith('_') || name === 'readableWebStream' || name === 'readLines') continue;
    handleProto[name] = function (this: unknown, ...a: unknown[]) {
      count(`fs.filehandle.${name}`);
      return (fn as (...x: unknown[]) => unknown).apply(this, a);
    };
  }
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentloop-embedded-cost-'));
const snap = args.snapshot ? prepareSnapshot(path.resolve(import.meta.dirname, '../..'), args.snapshot, os.tmpdir()) : undefined;
// The snapshot's better-sqlite3 is a link to this tree's, so the hooks above count its statements too.
const { startEmbedded } = (
  snap ? await import(path.join(snap.root, 'apps/agentloop/src/index.ts')) : await import('@agentloop/agentloop-app')
) as typeof import('@agentloop/agentloop-app');
// One thread: the statements and fs calls are counted by hooks in this thread, and what a run costs
// does not depend on which thread makes it.
const server = await startEmbedded({
  port: 0,
  env: { ...process.env, EMBEDDED_THREADS: 'none', DATA_DIR: dataDir, HOST: '127.0.0.1', ALLOW_SCRIPTED_MODEL: 'true', LOG_LEVEL: 'warn' },
});
const client = sdkClient(server.url);
const input = { messages: [{ role: 'user', content: 'What time is it?' }] };
const config = args.ledger ? ledgerRunConfig() : runConfig(Number(args['delay-ms']));
const one = async (): Promise<void> => {
  const thread = await client.threads.create();
  checkValues(await client.runs.wait(thread.thread_id, 'agent', { input, config }));
};
for (let i = 0; i < 5; i++) await one(); // warm-up: caches, first-run migrations
await new Promise((r) => setTimeout(r, 300));
let promises = 0;
/** --promises: where one promise in PROMISE_SAMPLE was created, by its innermost JavaScript frame outside node's internals. */
const PROMISE_SAMPLE = 16;
const promiseSites = new Map<string, number>();
const promiseHook = args.promises
  ? createHook({
      init(_id, type) {
        if (!counting || type !== 'PROMISE') return;
        if (++promises % PROMISE_SAMPLE !== 0) return;
        const frame =
          (new Error().stack ?? '').split('\n').find((l) => /^\s+at .*\//.test(l) && !/node:|embedded-cost\.ts/.test(l)) ??
          '(no JavaScript frame outside node)';
        const site = frame
          .trim()
          .replace(/^at /, '')
          .replace(/\(?(file:\/\/)?\/.*?\/(node_modules\/|((libs|services|apps)\/))/, '$3')
          .replace(/:\d+\)?$/, '');
        promiseSites.set(site, (promiseSites.get(site) ?? 0) + PROMISE_SAMPLE);
      },
    }).enable()
  : undefined;
counting = true;
const cpuAtStart = process.cpuUsage();
const wallAtStart = performance.now();
const stopProfile = args.profile ? await startProfile(args.profile) : undefined;
const stopAllocationProfile = args['alloc-profile'] ? await startAllocationProfile(args['alloc-profile']) : undefined;
let started = 0;
await Promise.all(
  Array.from({ length: Number(args.clients) }, async () => {
    while (started++ < runs) await one();
  }),
);
const cpuOfRuns = process.cpuUsage(cpuAtStart);
const wallOfRuns = performance.now() - wallAtStart;
await stopProfile?.();
await stopAllocationProfile?.();
await new Promise((r) => setTimeout(r, 300)); // after-run work (recordings, webhooks, listings)
counting = false;
promiseHook?.disable();
await server.close();
fs.rmSync(dataDir, { recursive: true, force: true });

const rows = [...counts.entries()].sort((a, b) => b[1] - a[1]);
const total = (prefix: string): number => rows.filter(([k]) => k.startsWith(prefix)).reduce((n, [, c]) => n + c, 0) / runs;
const sqlMs = [...times.values()].reduce((n, t) => n + t, 0) / runs;
const sqlCpuMs = [...cpuTimes.values()].reduce((n, t) => n + t, 0) / runs;
console.log(
  `${runs} runs.wait runs (${args.ledger ? 'write_file' : 'now'} × 2), AgentLoop from ${snap ? `commit ${snap.commit.slice(0, 12)}` : 'the working tree'}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; per run: ${total('sql ').toFixed(1)} SQLite statements, ${total('fs').toFixed(1)} filesystem calls` +
    `, ${total('commits ').toFixed(1)} SQLite commits (${Number(args.clients)} client(s))` +
    (args.promises ? `, ${(promises / runs).toFixed(0)} promises created` : '') +
    `; process CPU ${((cpuOfRuns.user + cpuOfRuns.system) / 1000 / runs).toFixed(2)} ms per run (load generator and counting hooks included), wall ${(wallOfRuns / runs).toFixed(2)} ms` +
    (args.time ? `; ${sqlMs.toFixed(3)} ms inside SQLite statements (second column, ms per run), of which ${sqlCpuMs.toFixed(3)} ms CPU (third column)` : ''),
);
if (args.promises) {
  console.log(`promises created per run by site (1 in ${PROMISE_SAMPLE} sampled):`);
  for (const [site, c] of [...promiseSites].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top) || 30))
    console.log(`${(c / runs).toFixed(1).padStart(7)}  ${site}`);
}
for (const [key, c] of rows.slice(0, Number(args.top))) {
  const ms = args.time ? `${((times.get(key) ?? 0) / runs).toFixed(3).padStart(7)}  ${((cpuTimes.get(key) ?? 0) / runs).toFixed(3).padStart(7)}  ` : '';
  console.log(`${(c / runs).toFixed(2).padStart(7)}  ${ms}${key}`);
}
