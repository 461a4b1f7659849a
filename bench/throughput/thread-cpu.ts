/**
 * Where an embedded process's CPU goes, per OS thread (issue 9, "embedded mode uses both cores"):
 * AgentLoop embedded as the bench starts it (embedded-child.ts, `--env` applied), a warm-up, then
 * `--clients` closed-loop `runs.wait` clients for `--seconds`; CPU time (user + system) of every
 * thread of the process from /proc/<pid>/task/<tid>/stat before and after, in ms per run, and the
 * load generator's own CPU. The main thread's tid is the pid; JavaScript worker threads, V8's
 * platform threads and libuv's pool are told apart by their names (/proc/.../comm) and CPU.
 *
 *   npx tsx bench/throughput/thread-cpu.ts [--clients 32] [--seconds 8] [--warmup 3] [--env EMBEDDED_THREADS=orchestrator]
 */
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { waitLoad } from './load.js';
import { REPO_ROOT, startEmbeddedTarget } from './targets.js';

const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '8' },
    warmup: { type: 'string', default: '3' },
    env: { type: 'string', multiple: true, default: [] },
  },
});
const env = Object.fromEntries(args.env.map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));

/** CPU ms (user + system, and system alone) and name of every thread of `pid`. */
function threadCpu(pid: number): Map<number, { name: string; ms: number; sys: number }> {
  const out = new Map<number, { name: string; ms: number; sys: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime(11) + stime(12) after comm, in clock ticks (100/s on Linux).
      out.set(Number(tid), { name, ms: (Number(f[11]) + Number(f[12])) * 10, sys: Number(f[12]) * 10 });
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

const outDir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-thread-cpu-'));
const target = await startEmbeddedTarget({ outDir, env, peerJobsPerWorker: 10, log: console.log, agentloopRoot: REPO_ROOT });
try {
  const pid = target.proc!.pid;
  await waitLoad(target, { concurrency: 4, seconds: Number(args.warmup) }); // warm-up: every thread's JIT
  const before = threadCpu(pid);
  const self0 = process.cpuUsage();
  const round = await waitLoad(target, { concurrency: Number(args.clients), seconds: Number(args.seconds) });
  const self = process.cpuUsage(self0);
  const after = threadCpu(pid);
  const perRun = (ms: number) => (ms / Math.max(1, round.runs)).toFixed(2);
  console.log(
    `${round.runs} runs (${round.errors} errors) in ${(round.elapsedMs / 1000).toFixed(1)} s = ${((round.runs * 1000) / round.elapsedMs).toFixed(1)} runs/s,` +
      ` ${Number(args.clients)} clients, env ${JSON.stringify(env)}, load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  console.log('tid       name             CPU ms   ms/run   system ms/run   share of the wall time');
  const rows = [...after]
    .map(([tid, a]) => ({ tid, name: a.name, ms: a.ms - (before.get(tid)?.ms ?? 0), sys: a.sys - (before.get(tid)?.sys ?? 0) }))
    .filter((r) => r.ms > 0);
  rows.sort((a, b) => b.ms - a.ms);
  for (const r of rows) {
    const tag = r.tid === pid ? ' (main)' : '';
    console.log(
      `${String(r.tid).padEnd(9)} ${(r.name + tag).padEnd(16)} ${String(r.ms).padStart(6)}  ${perRun(r.ms).padStart(7)}   ${perRun(r.sys).padStart(13)}   ${((100 * r.ms) / round.elapsedMs).toFixed(0)}%`,
    );
  }
  const total = rows.reduce((s, r) => s + r.ms, 0);
  console.log(`WAL files: ${walSizes(pid)}`);
  console.log(
    `process total ${total} ms = ${perRun(total)} ms/run; load generator ${((self.user + self.system) / 1000).toFixed(0)} ms = ${perRun((self.user + self.system) / 1000)} ms/run`,
  );
} finally {
  await target.stop();
  rmSync(outDir, { recursive: true, force: true });
}
