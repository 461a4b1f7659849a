/**
 * What one cluster run costs, counted rather than timed (issue 9, README "Cluster mode"): N
 * sequential `runs.wait` runs (one client, so nothing queues), and per run the CPU of each process
 * (/proc; its main thread apart) and the statements, transactions and commits MariaDB executed
 * (its global status counters, read before and after). CPU time and statement counts barely
 * depend on what else runs on the machine; latency does, so it is printed but only as a median.
 * Also the messages the RUN_EVENTS JetStream stream stored per run (its publishes).
 *
 *   npx tsx --conditions=@agentloop/source bench/throughput/cluster-cost.ts [--runs 40] [--snapshot REF] [--env K=V]...
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { checkValues, runConfig, sdkClient } from './load.js';
import { cpuMs, mainThreadCpuMs } from './proc.js';
import { prepareSnapshot } from './snapshot.js';
import { REPO_ROOT, startClusterTarget } from './targets.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '40' }, snapshot: { type: 'string' }, env: { type: 'string', multiple: true }, statements: { type: 'boolean' } },
});
const runs = Number(args.runs);
const snap = args.snapshot ? prepareSnapshot(REPO_ROOT, args.snapshot, os.tmpdir()) : undefined;
const outDir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-cluster-cost-'));
const target = await startClusterTarget({
  outDir,
  env: Object.fromEntries((args.env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])),
  peerJobsPerWorker: 10,
  log: () => undefined,
  agentloopRoot: snap?.root ?? REPO_ROOT,
});

/** A process's name: the service of a node process, else its command. */
function nameOf(pid: number): string {
  const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  const main = cmd.find((a) => a.includes('/services/'));
  return main ? (main.split('/services/')[1]?.split('/')[0] ?? main) : path.basename(cmd[0] ?? String(pid));
}

function mariadbPort(): number {
  for (const pid of target.allPids()) {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const port = cmd.find((a) => a.startsWith('--port='));
    if (port) return Number(port.slice('--port='.length));
  }
  throw new Error('mariadbd not found among the target processes');
}

/** The RUN_EVENTS stream's messages and bytes: JetStream publishes (each a request its publisher awaits the ack of) per run. */
async function runEventMessages(): Promise<{ messages: number; bytes: number }> {
  for (const pid of target.allPids()) {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!path.basename(cmd[0] ?? '').startsWith('nats-server')) continue;
    const port = cmd[cmd.indexOf('-p') + 1];
    const nc = await connect({ servers: `127.0.0.1:${port}` });
    try {
      const { state } = await (await jetstreamManager(nc)).streams.info('RUN_EVENTS');
      return { messages: state.messages, bytes: state.bytes };
    } finally {
      await nc.close();
    }
  }
  throw new Error('nats-server not found among the target processes');
}

function serverPort(binary: string, flag: string): number {
  for (const pid of target.allPids()) {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (!path.basename(cmd[0] ?? '').startsWith(binary)) continue;
    const i = cmd.indexOf(flag);
    if (i >= 0) return Number(cmd[i + 1]);
    // redis-server's title is `redis-server host:port`
    const m = /:(\d+)$/.exec(cmd[0] ?? '');
    if (m) return Number(m[1]);
  }
  throw new Error(`${binary} not found among the target processes`);
}

/** Redis commands by name (INFO commandstats), the read itself excluded by the caller. */
async function redisCommands(redis: Redis): Promise<Map<string, number>> {
  const info = await redis.info('commandstats');
  const out = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}

/** The general log's statements per run by text (values replaced by `?`), most frequent first. */
async function printStatements(): Promise<void> {
  await db.query('SET GLOBAL general_log = 0');
  const [rows] = await db.query<Array<{ t: string; n: number } & import('mysql2').RowDataPacket>>(
    "SELECT CONVERT(argument USING utf8mb4) AS t, COUNT(*) AS n FROM mysql.general_log WHERE command_type IN ('Query', 'Execute') GROUP BY t",
  );
  const byShape = new Map<string, number>();
  const bytesByShape = new Map<string, number>();
  let packets = 0;
  for (const r of rows) {
    packets += Number(r.n);
    // A multi-statement query is one entry (one round trip): named by its statements' count and first one.
    const statements = r.t.split(/;\s*\n/).length;
    const shape =
      (statements > 1 ? `[${statements} statements] ` : '') +
      r.t
        .replace(/'(?:[^'\\]|\\.)*'/g, '?')
        .replace(/\b\d+\b/g, '?')
        .replace(/\s+/g, ' ')
        .slice(0, 150);
    byShape.set(shape, (byShape.get(shape) ?? 0) + Number(r.n));
    bytesByShape.set(shape, (bytesByShape.get(shape) ?? 0) + Buffer.byteLength(r.t) * Number(r.n));
  }
  console.log(`MariaDB round trips per run (general log: queries and prepared executes): ${(packets / runs).toFixed(1)}`);
  console.log('MariaDB statements per run by text (general log): count, bytes of text, text');
  for (const [t, n] of [...byShape].sort((a, b) => b[1] - a[1]))
    if (n / runs >= 0.5) console.log(`  ${(n / runs).toFixed(1).padStart(5)} ${((bytesByShape.get(t) ?? 0) / runs).toFixed(0).padStart(7)} B  ${t}`);
}

// The InnoDB ones say what the writes did to the pages: pages created (an insert into a full page
// splits it; keys in insertion order fill pages instead), bytes of redo log written.
const COUNTERS = [
  'Questions',
  'Bytes_received',
  'Bytes_sent',
  'Com_begin',
  'Com_commit',
  'Com_insert',
  'Com_update',
  'Com_select',
  'Com_stmt_execute',
  'Innodb_pages_created',
  'Innodb_os_log_written',
  'Innodb_buffer_pool_write_requests',
];
const db = await createConnection({ host: '127.0.0.1', port: mariadbPort(), user: 'root' });
async function counters(): Promise<Record<string, number>> {
  const [rows] = await db.query<Array<{ Variable_name: string; Value: string } & import('mysql2').RowDataPacket>>('SHOW GLOBAL STATUS');
  return Object.fromEntries(rows.filter((r) => COUNTERS.includes(r.Variable_name)).map((r) => [r.Variable_name, Number(r.Value)]));
}
const redis = new Redis({ host: '127.0.0.1', port: serverPort('redis-server', '--port'), lazyConnect: false });
// Every NATS message the server routes (requests, replies, publishes, JetStream acks), by subject's first two tokens.
const natsTap = await connect({ servers: `127.0.0.1:${serverPort('nats-server', '-p')}` });
const natsCounts = new Map<string, number>();
let natsCounting = false;
natsTap.subscribe('>', {
  callback: (_err, msg) => {
    if (!natsCounting) return;
    const key = msg.subject.startsWith('_INBOX') || msg.subject.startsWith('_R_') ? '(replies)' : msg.subject.split('.').slice(0, 3).join('.');
    natsCounts.set(key, (natsCounts.get(key) ?? 0) + 1);
  },
});
const cpu = () => new Map(target.allPids().map((pid) => [pid, cpuMs(pid)]));
const mainCpu = () => new Map(target.allPids().map((pid) => [pid, mainThreadCpuMs(pid)]));
/** Read and write system calls of a process so far (/proc/<pid>/io; a socket write is one, whatever its size). */
function syscalls(pid: number): { r: number; w: number } {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    return { r: Number(/syscr: (\d+)/.exec(io)?.[1] ?? 0), w: Number(/syscw: (\d+)/.exec(io)?.[1] ?? 0) };
  } catch {
    return { r: 0, w: 0 };
  }
}
const sys = () => new Map(target.allPids().map((pid) => [pid, syscalls(pid)]));

const client = sdkClient(target.url);
const config = runConfig(0);
const input = { messages: [{ role: 'user', content: 'What time is it?' }] };
const oneRun = async (): Promise<number> => {
  const t0 = performance.now();
  const thread = await client.threads.create();
  checkValues(await client.runs.wait(thread.thread_id, 'agent', { input, config }));
  return performance.now() - t0;
};
try {
  for (let i = 0; i < 10; i++) await oneRun();
  // --statements: MariaDB's general log (to its mysql.general_log table) over the measured runs, grouped by statement text.
  if (args.statements) await db.query("SET GLOBAL log_output = 'TABLE', GLOBAL general_log = 1");
  await natsTap.flush();
  natsCounting = true;
  const [cpu0, main0, sys0, db0, js0, rc0] = [cpu(), mainCpu(), sys(), await counters(), await runEventMessages(), await redisCommands(redis)];
  const latencies: number[] = [];
  for (let i = 0; i < runs; i++) latencies.push(await oneRun());
  const [cpu1, main1, sys1, db1, js1, rc1] = [cpu(), mainCpu(), sys(), await counters(), await runEventMessages(), await redisCommands(redis)];
  natsCounting = false;
  latencies.sort((a, b) => a - b);
  console.log(
    `AgentLoop cluster from ${snap ? `commit ${snap.commit.slice(0, 12)}` : 'the working tree'}; ${runs} sequential runs; load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(`latency p50 ${latencies[Math.floor(runs / 2)]?.toFixed(1)} ms (threads.create + runs.wait)`);
  const perProcess = new Map<string, number>();
  for (const [pid, before] of cpu0) perProcess.set(nameOf(pid), (perProcess.get(nameOf(pid)) ?? 0) + ((cpu1.get(pid) ?? before) - before) / runs);
  const perProcessMain = new Map<string, number>();
  for (const [pid, before] of main0) perProcessMain.set(nameOf(pid), (perProcessMain.get(nameOf(pid)) ?? 0) + ((main1.get(pid) ?? before) - before) / runs);
  const total = [...perProcess.values()].reduce((a, b) => a + b, 0);
  console.log(`CPU ms per run: total ${total.toFixed(1)}`);
  const perProcessSys = new Map<string, { r: number; w: number }>();
  for (const [pid, before] of sys0) {
    const after = sys1.get(pid) ?? before;
    const acc = perProcessSys.get(nameOf(pid)) ?? { r: 0, w: 0 };
    perProcessSys.set(nameOf(pid), { r: acc.r + (after.r - before.r) / runs, w: acc.w + (after.w - before.w) / runs });
  }
  // The main thread's share: a profile of a node process samples that thread only (mariadbd and
  // nats-server do their work on other threads, so theirs reads ~0).
  console.log(`  ${'process'.padEnd(16)} CPU ms  main thread  write/read syscalls`);
  for (const [name, ms] of [...perProcess].sort((a, b) => b[1] - a[1])) {
    const sc = perProcessSys.get(name);
    const main = (perProcessMain.get(name) ?? 0).toFixed(1).padStart(11);
    console.log(`  ${name.padEnd(16)} ${ms.toFixed(1).padStart(6)}  ${main}  ${sc ? `${sc.w.toFixed(1)} / ${sc.r.toFixed(1)}` : ''}`);
  }
  console.log('MariaDB per run (the read of the counters itself excluded):');
  // SHOW GLOBAL STATUS counts itself once per read (Questions, Com_show_status): one of the two reads is inside the window.
  for (const k of COUNTERS) console.log(`  ${k.padEnd(16)} ${((db1[k]! - db0[k]! - (k === 'Questions' ? 1 : 0)) / runs).toFixed(1)}`);
  if (args.statements) await printStatements();
  rc1.set('info', (rc1.get('info') ?? 1) - 1);
  const redisPerRun = [...rc1].map(([k, n]) => [k, (n - (rc0.get(k) ?? 0)) / runs] as const).filter(([, n]) => n > 0);
  console.log(`Redis commands per run: ${redisPerRun.reduce((a, [, n]) => a + n, 0).toFixed(1)}`);
  for (const [k, n] of redisPerRun.sort((a, b) => b[1] - a[1])) console.log(`  ${k.padEnd(16)} ${n.toFixed(1)}`);
  const natsTotal = [...natsCounts.values()].reduce((a, b) => a + b, 0);
  console.log(`NATS messages per run (all subjects; the bench's own reads of the stream included): ${(natsTotal / runs).toFixed(1)}`);
  for (const [k, n] of [...natsCounts].sort((a, b) => b[1] - a[1])) if (n / runs >= 0.1) console.log(`  ${k.padEnd(40)} ${(n / runs).toFixed(1)}`);
  console.log('JetStream (RUN_EVENTS) per run:');
  console.log(`  messages         ${((js1.messages - js0.messages) / runs).toFixed(1)}`);
  console.log(`  bytes            ${((js1.bytes - js0.bytes) / runs).toFixed(0)}`);
} finally {
  await db.end();
  redis.disconnect();
  await natsTap.close();
  await target.stop();
}
