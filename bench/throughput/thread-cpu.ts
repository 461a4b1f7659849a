/**
 * Where an embedded process's CPU goes, per OS thread (issue 9, "embedded mode uses both cores"):
 * AgentLoop embedded as the bench starts it (embedded-child.ts, `--env` applied), a warm-up, then
 * `--rounds` back-to-back rounds of `--clients` closed-loop `runs.wait` clients for `--seconds`;
 * CPU time (user + system) and context switches of every thread of the process from
 * /proc/<pid>/task/<tid>/ before and after each round, per run, and the load generator's own CPU.
 * The main thread's tid is the pid; JavaScript worker threads, V8's platform threads and libuv's
 * pool are told apart by their names (/proc/.../comm) and CPU.
 *
 * The warm-up is counted in runs per V8 isolate (`--warmup-runs`, at `--clients`): V8 optimizes
 * each isolate's code on its own, so with N orchestrator threads each thread sees 1/N of the
 * warm-up's runs. A warm-up of a fixed time measured N threads' code half-optimized (issue 9,
 * bench/throughput/README.md "Orchestrator threads: the ~18 ms per run a thread executes was each V8 isolate still warming up").
 * `--rounds 6 --warmup-runs 0` shows the warm-up curve itself; `--warmup S` is the former warm-up
 * (S seconds of 4 clients, whatever the thread count), to compare with figures measured with it.
 *
 *   npx tsx bench/throughput/thread-cpu.ts [--clients 32] [--seconds 8] [--rounds 1] [--warmup-runs 600] [--env EMBEDDED_THREADS=orchestrator:2] [--snapshot REF]
 */
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { embeddedThreads } from '../../apps/agentloop/src/embedded-threads.js';
import { waitLoad } from './load.js';
import { prepareSnapshot } from './snapshot.js';
import { REPO_ROOT, startEmbeddedTarget } from './targets.js';

const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '1' },
    'warmup-runs': { type: 'string', default: '600' },
    warmup: { type: 'string' },
    snapshot: { type: 'string' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const env = Object.fromEntries(args.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

/** CPU ms (user + system, and system alone) and name of every thread of `pid`. */
function threadCpu(pid: number): Map<number, { name: string; ms: number; sys: number; vcs: number; ics: number }> {
  const out = new Map<number, { name: string; ms: number; sys: number; vcs: number; ics: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime(11) + stime(12) after comm, in clock ticks (100/s on Linux).
      // Context switches: voluntary ones are the thread's waits (each a wake-up to come back from), involuntary ones preemptions.
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const vcs = Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const ics = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
      out.set(Number(tid), { name, ms: (Number(f[11]) + Number(f[12])) * 10, sys: Number(f[12]) * 10, vcs, ics });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** The SQLite WAL files the process has open, with their sizes: a WAL that no checkpoint can reset grows, and every read searches it. */
function walSizes(pid: number): string {
  const files = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const file = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (file.endsWith('-wal')) files.add(file);
    } catch {
      // closed meanwhile
    }
  }
  return [...files].map((f) => `${path.basename(f)} ${(statSync(f).size / 2 ** 20).toFixed(1)} MiB`).join(', ');
}

/** Bytes the process passed to read and write system calls so far (/proc/<pid>/io: page-cache copies included, SQLite's WAL appends and checkpoints among them). */
function ioBytes(pid: number): { read: number; written: number } {
  const io = readFileSync(`/proc/${pid}/io`, 'utf8');
  return { read: Number(/rchar:\s+(\d+)/.exec(io)?.[1] ?? 0), written: Number(/wchar:\s+(\d+)/.exec(io)?.[1] ?? 0) };
}

const outDir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-thread-cpu-'));
// Under the OS temp dir, as run.ts does: AgentLoop from a read-only copy of a commit.
const snap = args.snapshot ? prepareSnapshot(REPO_ROOT, args.snapshot, os.tmpdir()) : undefined;
const target = await startEmbeddedTarget({ outDir, env, peerJobsPerWorker: 10, log: console.log, agentloopRoot: snap?.root ?? REPO_ROOT });
const clients = Number(args.clients);
try {
  const pid = target.proc!.pid;
  // Runs execute in the orchestrator threads, or in the main thread without them: one isolate.
  const isolates = Math.max(1, embeddedThreads({ ...process.env, ...env }));
  const w0 = performance.now();
  let warmed = 0;
  if (args.warmup !== undefined) warmed = (await waitLoad(target, { concurrency: 4, seconds: Number(args.warmup) })).runs;
  else for (const want = Number(args['warmup-runs']) * isolates; warmed < want;) warmed += (await waitLoad(target, { concurrency: clients, seconds: 1 })).runs;
  console.log(
    `code: ${snap ? `commit ${snap.commit.slice(0, 12)} (${args.snapshot})` : 'working tree'}; warm-up: ${warmed} runs (${isolates} isolate(s)) in ${((performance.now() - w0) / 1000).toFixed(1)} s`,
  );
  for (let r = 1; r <= Number(args.rounds); r++) {
    const before = threadCpu(pid);
    const io0 = ioBytes(pid);
    const self0 = process.cpuUsage();
    const round = await waitLoad(target, { concurrency: clients, seconds: Number(args.seconds) });
    const self = process.cpuUsage(self0);
    const after = threadCpu(pid);
    const io1 = ioBytes(pid);
    const perRun = (ms: number) => (ms / Math.max(1, round.runs)).toFixed(2);
    console.log(
      `round ${r}: ${round.runs} runs (${round.errors} errors) in ${(round.elapsedMs / 1000).toFixed(1)} s = ${((round.runs * 1000) / round.elapsedMs).toFixed(1)} runs/s,` +
        ` ${clients} clients, env ${JSON.stringify(env)}, load ${os.loadavg()[0]!.toFixed(2)}`,
    );
    console.log('tid       name             CPU ms   ms/run   system ms/run   share of the wall time   waits/run   preemptions/run');
    const rows = [...after]
      .map(([tid, a]) => {
        const b = before.get(tid);
        return { tid, name: a.name, ms: a.ms - (b?.ms ?? 0), sys: a.sys - (b?.sys ?? 0), vcs: a.vcs - (b?.vcs ?? 0), ics: a.ics - (b?.ics ?? 0) };
      })
      .filter((row) => row.ms > 0);
    rows.sort((a, b) => b.ms - a.ms);
    for (const row of rows) {
      const tag = row.tid === pid ? ' (main)' : '';
      console.log(
        `${String(row.tid).padEnd(9)} ${(row.name + tag).padEnd(16)} ${String(row.ms).padStart(6)}  ${perRun(row.ms).padStart(7)}   ${perRun(row.sys).padStart(13)}   ${`${((100 * row.ms) / round.elapsedMs).toFixed(0)}%`.padStart(22)}   ${perRun(row.vcs).padStart(9)}   ${perRun(row.ics).padStart(15)}`,
      );
    }
    const total = rows.reduce((sum, row) => sum + row.ms, 0);
    console.log(`WAL files: ${walSizes(pid)}`);
    const kib = (bytes: number) => (bytes / 1024 / Math.max(1, round.runs)).toFixed(0);
    console.log(`read and write system calls: ${kib(io1.read - io0.read)} KiB read, ${kib(io1.written - io0.written)} KiB written per run`);
    console.log(
      `process total ${total} ms = ${perRun(total)} ms/run; load generator ${((self.user + self.system) / 1000).toFixed(0)} ms = ${perRun((self.user + self.system) / 1000)} ms/run`,
    );
  }
} finally {
  await target.stop();
  rmSync(outDir, { recursive: true, force: true });
}
