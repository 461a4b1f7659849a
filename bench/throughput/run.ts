/**
 * Throughput and in-flight capacity: AgentLoop embedded, AgentLoop cluster and the open LangGraph
 * server (`langgraph dev`, the peer) under the same SDK load, alternating between them in one run.
 *
 *   npm run bench:throughput                         # everything, ~10 min on 2 cores
 *   npm run bench:throughput -- --quick              # smaller sizes, ~4 min
 *   npm run bench:throughput -- --only embedded,peer --workload wait4,wait32
 *   npm run bench:throughput -- --workload profile   # CPU profile of embedded under runs.wait ×4
 *   npm run bench:throughput -- --workload trace     # per-step span breakdown of a run
 *
 * See README.md beside this file for what each workload measures and the latest figures.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { backgroundLoad, sdkClient, runConfig, ledgerRunConfig, checkValues, waitLoad, sumCpu, type BackgroundRound, type WaitRound } from './load.js';
import { embeddedThreads } from '../../apps/agentloop/src/embedded-threads.js';
import { ensurePeerInstalled } from './peer.js';
import { formatSummary, summarize, type CpuProfile } from './profile-summary.js';
import { fmt, fmtBytes, formatTable, percentile } from './stats.js';
import { prepareSnapshot } from './snapshot.js';
import {
  DEFAULT_TARGET_NAMES,
  isEmbeddedTarget,
  REPO_ROOT,
  startClusterTarget,
  startEmbeddedTarget,
  startTarget,
  TARGET_NAMES,
  targetEnv,
  type StartOptions,
  type Target,
  type TargetName,
} from './targets.js';
import { breakdown, otlpEnv, startOtlpReceiver, toolCallCost, type SpanRecord } from './trace.js';
import { startWebhookReceiver } from './webhook-receiver.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const WAIT_WORKLOADS = { wait1: 1, wait4: 4, wait32: 32 } as const;
const WORKLOADS = ['wait1', 'wait4', 'wait32', 'webhook', 'inflight', 'profile', 'trace'] as const;
type Workload = (typeof WORKLOADS)[number];
const DEFAULT_WORKLOADS: Workload[] = ['wait1', 'wait4', 'wait32', 'webhook', 'inflight'];

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    workload: { type: 'string' },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    'webhook-runs': { type: 'string' },
    inflight: { type: 'string' },
    'inflight-delay-ms': { type: 'string', default: '1000' },
    'inflight-deadline-s': { type: 'string' },
    submitters: { type: 'string', default: '32' },
    env: { type: 'string', multiple: true, default: [] },
    'peer-jobs': { type: 'string', default: '10' },
    'pause-others': { type: 'boolean', default: false },
    'warmup-runs': { type: 'string' },
    profile: { type: 'boolean', default: false },
    'profile-seconds': { type: 'string' },
    'inflight-profile': { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
    'trace-runs': { type: 'string', default: '10' },
    out: { type: 'string' },
    snapshot: { type: 'string' },
    'agentloop-root': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) {
  console.log(`bench:throughput — AgentLoop embedded / cluster vs langgraph dev, same SDK load

  --quick                    smaller sizes (rounds of 4 s, 40 webhook runs, 100 in-flight runs)
  --only a,b                 targets: ${TARGET_NAMES.join(', ')} (default ${DEFAULT_TARGET_NAMES.join(',')};
                             embedded-single / embedded-orchestrator: embedded with EMBEDDED_THREADS=none / orchestrator,
                             to alternate with embedded in one run)
  --workload a,b             ${WORKLOADS.join(', ')} (default ${DEFAULT_WORKLOADS.join(',')})
  --rounds N                 rounds per workload and target, alternating targets (default 2)
  --seconds S                length of a runs.wait round (default 10; quick 4)
  --webhook-runs N           background runs per webhook round (default 200; quick 40)
  --inflight N               in-flight runs (default 1000; quick 100)
  --inflight-delay-ms MS     wait of each of the 3 model turns (default 1000)
  --inflight-deadline-s S    wait for webhooks this long after the last submission (default 45; quick 20)
  --submitters N             concurrent submitting clients for background runs (default 32)
  --env K=V                  extra environment for AgentLoop processes (repeatable), e.g. RUN_CONCURRENCY=256
  --peer-jobs N              langgraph dev --n-jobs-per-worker (default 10, its default)
  --pause-others             SIGSTOP the targets not under load during each runs.wait round (SIGCONT after)
  --warmup-runs N            warm each target up by N runs at 4 clients per V8 isolate that executes runs (an
                             embedded target with N orchestrator threads: N × that) instead of a fixed time
  --profile / --trace        add the CPU profile / span breakdown phases
  --profile-seconds S        length of the profiled runs.wait ×4 load (default 20; quick 8)
  --inflight-profile         CPU profile of each embedded target's main thread during its in-flight phase
                             (with --env EMBEDDED_THREADS=none it is the whole orchestrator)
  --trace-runs N             runs traced (default 10)
  --out DIR                  logs, profile and results (default bench/throughput/.out/<timestamp>)
  --snapshot REF             run AgentLoop from a read-only copy of commit REF (git archive), e.g. HEAD,
                             to measure while the working tree is being edited
  --agentloop-root DIR       run AgentLoop from DIR instead of this repository`);
  process.exit(0);
}

const quick = args.quick;
const num = (v: string | undefined, dflt: number, name: string) => {
  const n = v === undefined ? dflt : Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got "${v}"`);
  return n;
};
const ROUNDS = num(args.rounds, 2, 'rounds');
const SECONDS = num(args.seconds, quick ? 4 : 10, 'seconds');
const WEBHOOK_RUNS = num(args['webhook-runs'], quick ? 40 : 200, 'webhook-runs');
const INFLIGHT = num(args.inflight, quick ? 100 : 1000, 'inflight');
const INFLIGHT_DELAY = num(args['inflight-delay-ms'], 1000, 'inflight-delay-ms');
const INFLIGHT_DEADLINE_S = num(args['inflight-deadline-s'], quick ? 20 : 45, 'inflight-deadline-s');
const SUBMITTERS = num(args.submitters, 32, 'submitters');
const PROFILE_SECONDS = num(args['profile-seconds'], quick ? 8 : 20, 'profile-seconds');
const TRACE_RUNS = num(args['trace-runs'], 10, 'trace-runs');
const WARMUP_RUNS = args['warmup-runs'] === undefined ? undefined : num(args['warmup-runs'], 0, 'warmup-runs');

const list = <T extends string>(raw: string | undefined, allowed: readonly T[], what: string): T[] | undefined => {
  if (raw === undefined) return undefined;
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const i of items) if (!allowed.includes(i as T)) throw new Error(`--${what}: "${i}" is not one of ${allowed.join(', ')}`);
  return items as T[];
};
const targetNames = list(args.only, TARGET_NAMES, 'only') ?? [...DEFAULT_TARGET_NAMES];
const workloads = list(args.workload, WORKLOADS, 'workload') ?? [...DEFAULT_WORKLOADS];
if (args.profile && !workloads.includes('profile')) workloads.push('profile');
if (args.trace && !workloads.includes('trace')) workloads.push('trace');
const extraEnv: NodeJS.ProcessEnv = {};
for (const kv of args.env ?? []) {
  const i = kv.indexOf('=');
  if (i <= 0) throw new Error(`--env expects KEY=VALUE, got "${kv}"`);
  extraEnv[kv.slice(0, i)] = kv.slice(i + 1);
}

const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
const outDir = path.resolve(args.out ?? path.join(here, '.out', stamp));
mkdirSync(outDir, { recursive: true });
// Each line carries the 1-minute load average: on a shared machine it says how far to trust a figure.
const log = (s: string) => console.log(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s, load ${os.loadavg()[0]!.toFixed(1).padStart(4)}] ${s}`);
const t0 = performance.now();
let agentloopRoot = path.resolve(args['agentloop-root'] ?? REPO_ROOT);
let agentloopCode = agentloopRoot === REPO_ROOT ? 'working tree' : agentloopRoot;
if (args.snapshot) {
  // Under the OS temp dir, not .out/: a copy of the repository inside it would be linted with it.
  const snap = prepareSnapshot(REPO_ROOT, args.snapshot, os.tmpdir());
  agentloopRoot = snap.root;
  agentloopCode = `commit ${snap.commit.slice(0, 12)} (${args.snapshot})`;
}
/** The V8 isolates that execute a target's runs: for embedded ones, one per orchestrator thread, else the main thread's. */
const isolatesOf = (name: TargetName): number =>
  isEmbeddedTarget(name) ? Math.max(1, embeddedThreads({ ...process.env, ...extraEnv, ...targetEnv(name) })) : 1;
const embeddedIsolates = isolatesOf('embedded');
const startOpts: StartOptions = { outDir, env: extraEnv, peerJobsPerWorker: num(args['peer-jobs'], 10, 'peer-jobs'), log, agentloopRoot };

const machine = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`,
  memory: fmtBytes(os.totalmem()),
  loadavgStart: os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' '),
  loadavgEnd: '',
  env: extraEnv,
  agentloop: agentloopCode,
};
console.log(`bench:throughput ${machine.date} — node ${machine.node}, ${machine.cpus}, ${machine.memory}, load average ${machine.loadavgStart}`);
console.log(
  `targets: ${targetNames.join(', ')}; workloads: ${workloads.join(', ')}; AgentLoop from the ${agentloopCode}; logs in ${path.relative(process.cwd(), outDir)}`,
);
if (Object.keys(extraEnv).length)
  console.log(
    `AgentLoop environment: ${Object.entries(extraEnv)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  );

interface WaitResult {
  workload: string;
  target: TargetName;
  rounds: WaitRound[];
}
interface BackgroundResult {
  workload: string;
  target: TargetName;
  rounds: BackgroundRound[];
}
const waitResults: WaitResult[] = [];
const backgroundResults: BackgroundResult[] = [];
const started: Target[] = [];
const clientCpu0 = process.cpuUsage();

process.on('SIGINT', () => void shutdown(130));
process.on('SIGTERM', () => void shutdown(143));
let shuttingDown = false;
async function shutdown(code: number): Promise<never> {
  if (!shuttingDown) {
    shuttingDown = true;
    await Promise.allSettled(started.map((t) => t.stop()));
  }
  process.exit(code);
}

try {
  await main();
} catch (err) {
  console.error(err);
  await shutdown(1);
}
await shutdown(0);

async function main(): Promise<void> {
  const throughput = workloads.filter((w) => w in WAIT_WORKLOADS || w === 'webhook' || w === 'inflight');
  if (targetNames.includes('peer') && throughput.length > 0) ensurePeerInstalled(log);
  if (throughput.length > 0) await throughputPhase(throughput);
  if (workloads.includes('profile')) await profilePhase();
  if (workloads.includes('trace')) await tracePhase();
  machine.loadavgEnd = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  const cpu = process.cpuUsage(clientCpu0);
  console.log(
    `\nload average at the end ${machine.loadavgEnd}; the load generator (this process) used ${fmt((cpu.user + cpu.system) / 1000)} ms CPU; total ${fmt((performance.now() - t0) / 1000)} s`,
  );
  const results = {
    machine,
    settings: { ROUNDS, SECONDS, WEBHOOK_RUNS, INFLIGHT, INFLIGHT_DELAY, INFLIGHT_DEADLINE_S, SUBMITTERS },
    waitResults: strip(waitResults),
    backgroundResults: strip(backgroundResults),
  };
  writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(results, null, 2));
  console.log(`results: ${path.relative(process.cwd(), path.join(outDir, 'results.json'))}`);
}

/** Results without the raw latency arrays, plus their percentiles. */
function strip<T extends { rounds: Array<WaitRound | BackgroundRound> }>(rs: T[]) {
  return rs.map((r) => ({
    ...r,
    rounds: r.rounds.map((round) => {
      const { latencies, ...rest } = round as WaitRound & BackgroundRound;
      const waitLatencies = (round as WaitRound).waitLatencies;
      return {
        ...rest,
        waitLatencies: undefined,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        ...(waitLatencies ? { waitP50: percentile(waitLatencies, 50) } : {}),
      };
    }),
  }));
}

/**
 * `--warmup-runs`: about 600 runs per isolate are what V8 needs to optimize a run's code (thread-cpu.ts
 * --rounds, bench/throughput/README.md), which a fixed time gives a threaded target only on a quiet machine.
 */
async function warmByRuns(t: Target, want: number): Promise<{ runs: number; errors: number; firstError?: string }> {
  const total = { runs: 0, errors: 0, firstError: undefined as string | undefined };
  while (total.runs < want) {
    const w = await waitLoad(t, { concurrency: 4, seconds: 1 });
    total.runs += w.runs;
    total.errors += w.errors;
    total.firstError ??= w.firstError;
    if (w.runs === 0) break;
  }
  return total;
}

async function throughputPhase(selected: Workload[]): Promise<void> {
  const targets: Target[] = [];
  for (const name of targetNames) {
    const s = performance.now();
    log(`starting ${name}...`);
    const t = await startTarget(name, startOpts);
    started.push(t);
    targets.push(t);
    log(`${name} ready at ${t.url} in ${fmt((performance.now() - s) / 1000)} s`);
  }
  // Warm-up: JIT, connection pools, first-thread paths; and a check that a run really completes.
  for (const t of targets) {
    const values = await sdkClient(t.url).runs.wait((await sdkClient(t.url).threads.create()).thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'What time is it?' }] },
      config: runConfig(0),
    });
    checkValues(values);
    // V8 optimizes each isolate's code on its own: with N orchestrator threads each sees 1/N of
    // the warm-up's runs, so an embedded target warms N times as long (thread-cpu.ts --rounds
    // shows the curve; bench/throughput/README.md, issue 9).
    const isolates = isolatesOf(t.name);
    const w = WARMUP_RUNS ? await warmByRuns(t, WARMUP_RUNS * isolates) : await waitLoad(t, { concurrency: 4, seconds: (quick ? 2 : 4) * isolates });
    log(`${t.name} warmed up: ${w.runs} runs, ${w.errors} errors${w.firstError ? ` (${w.firstError})` : ''}`);
    if (w.runs === 0) throw new Error(`${t.name}: no run completed during warm-up: ${w.firstError}`);
  }
  const receiver = await startWebhookReceiver();
  try {
    for (const w of selected) {
      if (w === 'inflight') continue;
      const results = new Map<TargetName, WaitResult | BackgroundResult>();
      for (let r = 0; r < ROUNDS; r++) {
        // A B C, then B C A...: every target in every position, load from elsewhere spread over all.
        const order = targets.map((_, i) => targets[(i + r) % targets.length]!);
        for (const t of order) {
          if (w === 'webhook') {
            const round = await backgroundLoad(t, receiver, { runs: WEBHOOK_RUNS, submitters: Math.min(SUBMITTERS, 8), delayMs: 0, deadlineMs: 60_000 });
            const res = (results.get(t.name) as BackgroundResult | undefined) ?? { workload: w, target: t.name, rounds: [] };
            res.rounds.push(round);
            results.set(t.name, res);
            log(
              `${w} ${t.name} round ${r + 1}: ${round.done}/${round.submitted} done, ${fmt((1000 * round.done) / round.elapsedMs)} runs/s, p50 ${fmt(percentile(round.latencies, 50))} ms${round.submitErrors ? `, ${round.submitErrors} submit errors (${round.firstError})` : ''}`,
            );
          } else {
            const others = targets.filter((o) => o !== t);
            const othersCpu0 = others.reduce((n, o) => n + sumCpu(o), 0);
            if (args['pause-others']) signalAll(others, 'SIGSTOP');
            const round = await waitLoad(t, { concurrency: WAIT_WORKLOADS[w as keyof typeof WAIT_WORKLOADS], seconds: SECONDS }).finally(() => {
              if (args['pause-others']) signalAll(others, 'SIGCONT');
            });
            // What the targets not being measured used meanwhile: CPU they took from this round.
            round.bystanderCpuMs = others.reduce((n, o) => n + sumCpu(o), 0) - othersCpu0;
            const res = (results.get(t.name) as WaitResult | undefined) ?? { workload: w, target: t.name, rounds: [] };
            res.rounds.push(round);
            results.set(t.name, res);
            log(
              `${w} ${t.name} round ${r + 1}: ${round.runs} runs, ${fmt((1000 * round.runs) / round.elapsedMs)} runs/s, p50 ${fmt(percentile(round.latencies, 50))} ms, CPU ${fmt(round.cpuMs / Math.max(1, round.runs))} ms/run, the other targets meanwhile ${fmt(round.bystanderCpuMs)} ms${round.errors ? `, ${round.errors} errors (${round.firstError})` : ''}`,
            );
          }
        }
      }
      for (const t of targets) {
        const res = results.get(t.name)!;
        if (w === 'webhook') backgroundResults.push(res as BackgroundResult);
        else waitResults.push(res as WaitResult);
      }
    }
    if (selected.includes('inflight')) {
      // Once per target, then that target is stopped: runs still queued at the deadline would
      // otherwise load the machine during the next target's measurement.
      for (const t of targets) {
        log(`inflight ${t.name}: ${INFLIGHT} runs × 3 model turns of ${INFLIGHT_DELAY} ms...`);
        const load = () =>
          backgroundLoad(t, receiver, {
            runs: INFLIGHT,
            submitters: SUBMITTERS,
            delayMs: INFLIGHT_DELAY,
            deadlineMs: INFLIGHT_DEADLINE_S * 1000,
          });
        const profileFile = path.join(outDir, `inflight-${t.name}.cpuprofile`);
        const round = args['inflight-profile'] && t.proc ? await profiled(t, profileFile, load) : await load();
        if (args['inflight-profile'] && t.proc) {
          const text = formatSummary(summarize(JSON.parse(readFileSync(profileFile, 'utf8')) as CpuProfile), { runs: round.done, top: 40 });
          writeFileSync(path.join(outDir, `inflight-${t.name}-profile.txt`), text + '\n');
          console.log(`\nCPU profile — ${t.name}, in flight, main thread\n${text}`);
        }
        backgroundResults.push({ workload: 'inflight', target: t.name, rounds: [round] });
        log(
          `inflight ${t.name}: ${round.done}/${round.submitted} done, submissions ${fmt((1000 * round.submitted) / round.submitMs)}/s, p99 ${fmt(percentile(round.latencies, 99))} ms` +
            (round.submitErrors ? `, ${round.submitErrors} submit errors (${round.firstError})` : ''),
        );
        await t.stop();
      }
    }
  } finally {
    await receiver.close();
    await Promise.allSettled(targets.map((t) => t.stop()));
  }
  printThroughput();
}

/** Sends `signal` to every process of the targets (a process already gone is skipped). */
function signalAll(targets: Target[], signal: NodeJS.Signals): void {
  for (const pid of targets.flatMap((t) => t.allPids())) {
    try {
      process.kill(pid, signal);
    } catch {
      // exited meanwhile
    }
  }
}

function printThroughput(): void {
  const flat = <T>(rounds: T[], f: (r: T) => number[]) => rounds.flatMap(f);
  const sum = <T>(rounds: T[], f: (r: T) => number) => rounds.reduce((n, r) => n + f(r), 0);
  const rate = (res: WaitResult) => (1000 * sum(res.rounds, (r) => r.runs)) / sum(res.rounds, (r) => r.elapsedMs);
  const bgRate = (res: BackgroundResult) => (1000 * sum(res.rounds, (r) => r.done)) / sum(res.rounds, (r) => r.elapsedMs);
  const ratio = (v: number, peer: number | undefined) => (peer ? `${fmt(v / peer)}x` : '—');

  if (waitResults.length > 0) {
    console.log(
      `\nruns.wait — new thread per run (threads.create + runs.wait), 3-step run, zero model latency; ${ROUNDS} rounds of ${SECONDS} s per target, alternating`,
    );
    const rows: string[][] = [];
    for (const w of Object.keys(WAIT_WORKLOADS)) {
      const peer = waitResults.find((r) => r.workload === w && r.target === 'peer');
      for (const res of waitResults.filter((r) => r.workload === w)) {
        const lat = flat(res.rounds, (r) => r.latencies);
        const runs = sum(res.rounds, (r) => r.runs);
        rows.push([
          w,
          res.target,
          String(runs),
          String(sum(res.rounds, (r) => r.errors)),
          fmt(rate(res)),
          ratio(rate(res), peer && rate(peer)),
          res.rounds.map((r) => fmt((1000 * r.runs) / r.elapsedMs)).join(' / '),
          fmt(percentile(lat, 50)),
          fmt(percentile(lat, 99)),
          fmt(
            percentile(
              flat(res.rounds, (r) => r.waitLatencies),
              50,
            ),
          ),
          ratio(
            percentile(lat, 50),
            peer &&
              percentile(
                flat(peer.rounds, (r) => r.latencies),
                50,
              ),
          ),
          fmt(sum(res.rounds, (r) => r.cpuMs) / runs),
        ]);
      }
    }
    console.log(
      formatTable(
        ['workload', 'target', 'runs', 'errors', 'runs/s', 'vs peer', 'per round', 'p50 ms', 'p99 ms', 'wait p50', 'p50 vs peer', 'CPU ms/run'],
        rows,
      ),
    );
  }
  const webhook = backgroundResults.filter((r) => r.workload === 'webhook');
  if (webhook.length > 0) {
    console.log(`\nbackground runs with webhooks — ${WEBHOOK_RUNS} runs per round (runs.create, new thread, webhook), zero model latency, 8 submitters`);
    const peer = webhook.find((r) => r.target === 'peer');
    console.log(
      formatTable(
        ['target', 'done/submitted', 'failed', 'submit/s', 'runs/s', 'vs peer', 'p50 submit→webhook', 'p99', 'CPU ms/run'],
        webhook.map((res) => {
          const done = sum(res.rounds, (r) => r.done);
          return [
            res.target,
            `${done}/${sum(res.rounds, (r) => r.submitted)}`,
            String(sum(res.rounds, (r) => r.failed + r.submitErrors)),
            fmt((1000 * sum(res.rounds, (r) => r.submitted)) / sum(res.rounds, (r) => r.submitMs)),
            fmt(bgRate(res)),
            ratio(bgRate(res), peer && bgRate(peer)),
            fmt(
              percentile(
                flat(res.rounds, (r) => r.latencies),
                50,
              ),
            ),
            fmt(
              percentile(
                flat(res.rounds, (r) => r.latencies),
                99,
              ),
            ),
            fmt(sum(res.rounds, (r) => r.cpuMs) / Math.max(1, done)),
          ];
        }),
      ),
    );
  }
  const inflight = backgroundResults.filter((r) => r.workload === 'inflight');
  if (inflight.length > 0) {
    const minimum = 3 * INFLIGHT_DELAY;
    console.log(
      `\nin-flight — ${INFLIGHT} runs × 3 model turns of ${INFLIGHT_DELAY} ms (minimum ${minimum} ms per run), ${SUBMITTERS} submitters, completion by webhook, deadline ${INFLIGHT_DEADLINE_S} s after the last submission`,
    );
    console.log(
      formatTable(
        ['target', 'done/submitted', 'failed', 'submit/s', 'p50 submit→webhook', 'p99', 'p99 / minimum', 'all done after s', 'RSS Δ/run', 'RSS peak', 'CPU s'],
        inflight.map((res) => {
          const r = res.rounds[0]!;
          return [
            res.target,
            `${r.done}/${r.submitted}`,
            String(r.failed + r.submitErrors),
            fmt((1000 * r.submitted) / r.submitMs),
            fmt(percentile(r.latencies, 50)),
            r.done < r.submitted ? `> ${fmt(INFLIGHT_DEADLINE_S * 1000 + r.submitMs)}` : fmt(percentile(r.latencies, 99)),
            r.done < r.submitted ? '—' : `${fmt(percentile(r.latencies, 99) / minimum)}x`,
            r.done < r.submitted ? 'not all' : fmt(r.elapsedMs / 1000),
            fmtBytes((r.rssPeak - r.rssBaseline) / Math.max(1, r.submitted)),
            fmtBytes(r.rssPeak),
            fmt(r.cpuMs / 1000),
          ];
        }),
      ),
    );
  }
}

/** `fn` run while the embedded target's main thread is CPU-profiled (500 µs) into `file`. */
async function profiled<T>(t: Target, file: string, fn: () => Promise<T>): Promise<T> {
  const child = t.proc!.child;
  const reply = (type: string) =>
    new Promise<void>((resolve) => {
      const on = (m: { type?: string }) => {
        if (m?.type === type) {
          child.off('message', on);
          resolve();
        }
      };
      child.on('message', on);
    });
  let p = reply('profile-started');
  child.send({ type: 'profile-start', intervalUs: 500 });
  await p;
  try {
    return await fn();
  } finally {
    p = reply('profile-written');
    child.send({ type: 'profile-stop', file });
    await p;
  }
}

/** CPU profile of AgentLoop embedded under runs.wait at 4 concurrent clients. */
async function profilePhase(): Promise<void> {
  log('profile: starting a separate AgentLoop embedded...');
  const t = await startEmbeddedTarget(startOpts, 'embedded-profile');
  started.push(t);
  try {
    await waitLoad(t, { concurrency: 4, seconds: (quick ? 3 : 5) * embeddedIsolates }); // as the throughput phase's warm-up
    const file = path.join(outDir, 'embedded-wait4.cpuprofile');
    const round = await profiled(t, file, () => waitLoad(t, { concurrency: 4, seconds: PROFILE_SECONDS }));
    log(
      `profile: ${round.runs} runs in ${fmt(round.elapsedMs / 1000)} s (${fmt((1000 * round.runs) / round.elapsedMs)} runs/s, p50 ${fmt(percentile(round.latencies, 50))} ms, ${round.errors} errors), written to ${path.relative(process.cwd(), file)}`,
    );
    const text = formatSummary(summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile), { runs: round.runs, top: 30 });
    writeFileSync(path.join(outDir, 'profile-summary.txt'), text + '\n');
    console.log(`\nCPU profile — AgentLoop embedded, runs.wait × 4 concurrent, ${PROFILE_SECONDS} s (main thread, V8 sampler at 500 µs)\n${text}`);
  } finally {
    await t.stop();
  }
}

/** Median span tree of `TRACE_RUNS` sequential runs, embedded (and cluster when selected). */
async function tracePhase(): Promise<void> {
  for (const name of targetNames.filter((n) => n === 'embedded' || n === 'cluster')) {
    const receiver = await startOtlpReceiver();
    let nowSpans: SpanRecord[] = [];
    let ledgerSpans: SpanRecord[] = [];
    log(`trace: starting AgentLoop ${name} exporting spans to ${receiver.url}...`);
    const opts = { ...startOpts, env: { ...startOpts.env, ...otlpEnv(receiver.url) } };
    const t = name === 'embedded' ? await startEmbeddedTarget(opts, 'embedded-trace') : await startClusterTarget(opts, 'cluster-trace');
    started.push(t);
    try {
      await waitLoad(t, { concurrency: 1, seconds: 2 });
      await new Promise((r) => setTimeout(r, 1000));
      const client = sdkClient(t.url);
      // The bench's run (`now`, idempotent: no ledger), then the same with `write_file` (ledger).
      const traced = async (config: { configurable: Record<string, unknown> }) => {
        for (let i = 0; i < TRACE_RUNS; i++) {
          const thread = await client.threads.create();
          checkValues(await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'What time is it?' }] }, config }));
        }
        await new Promise((r) => setTimeout(r, 1500));
      };
      receiver.spans.length = 0;
      await traced(runConfig(0));
      nowSpans = receiver.spans.splice(0);
      await traced(ledgerRunConfig());
      ledgerSpans = receiver.spans.splice(0);
    } finally {
      await t.stop();
      await receiver.close();
    }
    const root = /^POST .*\/runs\/wait$/;
    const { runs, text } = breakdown(nowSpans, root);
    const perCall = [toolCallCost(nowSpans, root), toolCallCost(ledgerSpans, root)].map((c) => c.text).join('\n');
    const perCallTitle = `Cost per tool call, AgentLoop ${name} (issue 9 target ≤ 2 ms p50 embedded): the orchestrator's span around each call — ledger (write_file only: not idempotent), request, tool-runner, answer`;
    writeFileSync(path.join(outDir, `trace-${name}.txt`), `${text}\n\n${perCallTitle}\n${perCall}\n`);
    console.log(
      `\nSpans of one runs.wait (median over ${runs} sequential runs, telemetry on), AgentLoop ${name}; "gap" = since the previous sibling ended (or the parent started), ±1 ms; "own" = time in the span not covered by a child span\n${text}`,
    );
    console.log(`\n${perCallTitle}\n${perCall}`);
    const ledger = breakdown(ledgerSpans, root);
    writeFileSync(path.join(outDir, `trace-${name}-write-file.txt`), ledger.text + '\n');
    console.log(`\nThe same run with write_file (through the effect ledger), median over ${ledger.runs} runs\n${ledger.text}`);
  }
}
