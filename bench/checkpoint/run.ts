/**
 * Checkpointer throughput: our MySQLSaver on MariaDB vs the official
 * PostgresSaver on PostgreSQL, same machine, same data, one run.
 *
 *   npx tsx --conditions=@agentloop/source bench/checkpoint/run.ts [--threads 20] [--steps 50] [--reads 300] [--concurrency 8] [--profile]
 *
 * Prints ops/s per operation (sequential and with a promise pool), the
 * MySQL/Postgres ratio, round trips per operation, and the geometric mean of
 * the ratios. `--profile` also prints EXPLAINs and the serialization share.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createPool } from 'mysql2/promise';
import type { BaseCheckpointSaver, CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { MySQLSaver } from '@agentloop/checkpoint-mysql';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { startPostgres } from '@agentloop/devservers';
import { generateWorkload, type StepData, type Workload } from './data.js';
import { fmt, formatTable, geometricMean, runPool, runSequential, seededRandom, type Measurement, type Op } from './harness.js';
import { profile, type Statement } from './profile.js';

const { values: args } = parseArgs({
  options: {
    threads: { type: 'string', default: '20' },
    steps: { type: 'string', default: '50' },
    reads: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '8' },
    'pool-size': { type: 'string', default: '10' },
    'server-defaults': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
  },
});
const THREADS = Number(args.threads);
const STEPS = Number(args.steps);
const READS = Number(args.reads);
const CONCURRENCY = Number(args.concurrency);
const POOL_SIZE = Number(args['pool-size']);
const CHUNKS = 4;
if (![THREADS, STEPS, READS, CONCURRENCY, POOL_SIZE].every((n) => Number.isInteger(n) && n > 0) || THREADS < 2) {
  throw new Error('--threads (>= 2), --steps, --reads, --concurrency and --pool-size must be positive integers');
}

/** A saver under test, with a counter of statements sent to its server. */
export interface Subject {
  name: string;
  saver: BaseCheckpointSaver & { end(): Promise<void> };
  roundTrips: () => number;
  /** Statements (text and parameters) that `fn` sends to the server. */
  trace(fn: () => Promise<unknown>): Promise<Statement[]>;
  /** Runs one statement on the saver's pool (for EXPLAIN and round-trip floor measurements). */
  query(sql: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
}

// `pg` ships no type declarations and @types/pg is not installed; this is the little we use.
interface PgClient {
  query: (...a: unknown[]) => unknown;
}
interface PgPool {
  on(event: 'connect', fn: (client: PgClient) => void): void;
  on(event: 'error', fn: (err: Error) => void): void;
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  end(): Promise<void>;
}
type PgModule = { default: { Pool: new (opts: { connectionString: string; max: number }) => PgPool } };

/** Counts (and, while tracing, records) the statements a driver's connection sends. */
function instrument(toStatement: (a: unknown[]) => Statement) {
  let count = 0;
  let recording: Statement[] | undefined;
  return {
    wrap<K extends string>(target: Record<K, (...a: unknown[]) => unknown>, method: K) {
      const original = target[method].bind(target);
      target[method] = (...a: unknown[]) => {
        count++;
        recording?.push(toStatement(a));
        return original(...a);
      };
    },
    count: () => count,
    async trace(fn: () => Promise<unknown>): Promise<Statement[]> {
      const seen: Statement[] = [];
      recording = seen;
      try {
        await fn();
      } finally {
        recording = undefined;
      }
      return seen;
    },
  };
}

async function mysqlSubject(url: string): Promise<Subject> {
  // Same pool options as MySQLSaver.fromConnString, built here so the connections can be instrumented.
  const pool = createPool({ uri: url, connectionLimit: POOL_SIZE, charset: 'utf8mb4', supportBigNumbers: true });
  // Every statement, including START TRANSACTION / COMMIT, goes through the core connection's query(),
  // called either with (sql, values, cb) or with a Query command object carrying sql and values.
  const meter = instrument((a) => {
    const first = a[0] as string | { sql: string; values?: unknown[] };
    return typeof first === 'string' ? { sql: first, values: Array.isArray(a[1]) ? (a[1] as unknown[]) : [] } : { sql: first.sql, values: first.values ?? [] };
  });
  // execute() (binary protocol) is counted once per call; its first call per connection also prepares.
  pool.pool.on('connection', (conn) => {
    const c = conn as unknown as Record<'query' | 'execute', (...a: unknown[]) => unknown>;
    meter.wrap(c, 'query');
    meter.wrap(c, 'execute');
  });
  const saver = new MySQLSaver(pool);
  await saver.setup();
  return {
    name: 'MySQLSaver',
    saver,
    roundTrips: meter.count,
    trace: meter.trace,
    query: async (sql, values) => (await pool.query(sql, values))[0] as Record<string, unknown>[],
  };
}

async function postgresSubject(url: string): Promise<Subject> {
  const pg = (await import('pg' as string)) as PgModule;
  const pool = new pg.default.Pool({ connectionString: url, max: POOL_SIZE });
  const meter = instrument((a) => ({ sql: String(a[0]), values: Array.isArray(a[1]) ? (a[1] as unknown[]) : [] }));
  pool.on('connect', (client) => meter.wrap(client, 'query'));
  // An idle client cut off by the server (e.g. at shutdown) is reported here; unhandled, it would crash the run.
  pool.on('error', () => undefined);
  const saver = new PostgresSaver(pool as never);
  await saver.setup();
  return {
    name: 'PostgresSaver',
    saver,
    roundTrips: meter.count,
    trace: meter.trace,
    query: async (sql, values) => (await pool.query(sql, values)).rows,
  };
}

// ---------------------------------------------------------------------------
// Operations

const cfg = (threadId: string, checkpointId?: string) => ({
  configurable: { thread_id: threadId, checkpoint_ns: '', ...(checkpointId ? { checkpoint_id: checkpointId } : {}) },
});

/** Steps of the given threads in step-major order (every thread's step 0, then step 1, ...). */
function stepMajor(w: Workload, threads: string[]): StepData[] {
  const out: StepData[] = [];
  for (let step = 0; step < STEPS; step++) for (const t of threads) out.push(w.steps.get(t)![step]!);
  return out;
}

const putOps = (s: Subject, steps: StepData[]): Op[] =>
  steps.map((d) => () => s.saver.put(cfg(d.threadId, d.parentId), d.checkpoint, d.metadata, d.newVersions));
const putWritesOps = (s: Subject, steps: StepData[]): Op[] => steps.map((d) => () => s.saver.putWrites(cfg(d.threadId, d.checkpoint.id), d.writes, d.taskId));

async function drain(it: AsyncGenerator<CheckpointTuple>): Promise<number> {
  let n = 0;
  for await (const _ of it) n++;
  return n;
}

/** Read targets, drawn once from a seeded PRNG so both savers read the same things. */
function readTargets(w: Workload, n: number, seed: number): StepData[] {
  const rand = seededRandom(seed);
  return Array.from({ length: n }, () => {
    const t = w.threads[Math.floor(rand() * w.threads.length)]!;
    return w.steps.get(t)![Math.floor(rand() * STEPS)]!;
  });
}

const getLatestOps = (s: Subject, targets: StepData[]): Op[] => targets.map((d) => () => s.saver.getTuple(cfg(d.threadId)));
const getByIdOps = (s: Subject, targets: StepData[]): Op[] => targets.map((d) => () => s.saver.getTuple(cfg(d.threadId, d.checkpoint.id)));
const listOps = (s: Subject, targets: StepData[]): Op[] => targets.map((d) => () => drain(s.saver.list(cfg(d.threadId), { limit: 10 })));

interface Row {
  op: string;
  mode: string;
  results: { m: Measurement; roundTrips: number }[];
}

async function measure(subject: Subject, ops: Op[], concurrency: number): Promise<{ m: Measurement; roundTrips: number }> {
  const before = subject.roundTrips();
  const m = concurrency === 1 ? await runSequential(ops) : await runPool(ops, concurrency);
  return { m, roundTrips: (subject.roundTrips() - before) / ops.length };
}

// ---------------------------------------------------------------------------

async function main(): Promise<void> {
  const started = Date.now();
  const log = (msg: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}\n`);

  log('starting MariaDB and PostgreSQL');
  const servers: DevServer[] = [];
  const subjects: Subject[] = [];
  try {
    const [maria, postgres] = await Promise.all([startMariaDb({ mode: 'binary' }), startPostgres()]);
    servers.push(maria, postgres);
    if (!args['server-defaults']) {
      // startMariaDb is tuned to boot fast for tests (64 MB buffer pool, 8 MB redo log); PostgreSQL runs
      // with its defaults (128 MB shared_buffers, 1 GB max_wal_size). Give InnoDB the same memory and a
      // redo log that does not force a checkpoint every few hundred puts (both are dynamic in MariaDB 10.9+).
      const { createConnection } = await import('mysql2/promise');
      const admin = await createConnection(maria.url);
      await admin.query('SET GLOBAL innodb_buffer_pool_size = 134217728');
      await admin.query('SET GLOBAL innodb_log_file_size = 268435456');
      await admin.end();
    }
    const mysql = await mysqlSubject(maria.url);
    const pgs = await postgresSubject(postgres.url);
    subjects.push(mysql, pgs);

    const work = generateWorkload({ threads: THREADS, steps: STEPS, prefix: 'bench' });
    const warm = generateWorkload({ threads: 2, steps: STEPS, prefix: 'warm', seed: 7 });
    const half = Math.floor(THREADS / 2);
    const seqThreads = work.threads.slice(0, half);
    const parThreads = work.threads.slice(half);
    log(`workload: ${THREADS} threads × ${STEPS} steps, ${fmt(work.meanMessageBytes)} B/message, last checkpoint ${2 * STEPS - 1} messages`);

    // Warm-up: JIT, pools at full size, server caches; not measured.
    for (const s of subjects) {
      const steps = stepMajor(warm, warm.threads);
      await runPool(putOps(s, steps), CONCURRENCY);
      await runPool(putWritesOps(s, steps), CONCURRENCY);
      const targets = readTargets(warm, 100, 3);
      await runPool([...getLatestOps(s, targets), ...getByIdOps(s, targets), ...listOps(s, targets.slice(0, 30))], CONCURRENCY);
      await runSequential([...getLatestOps(s, targets.slice(0, 30)), ...getByIdOps(s, targets.slice(0, 30))]);
    }
    log('warm-up done');

    const rows: Row[] = [];
    // Each phase is cut into chunks run alternately (A B, B A, A B, ...), so a burst of load from
    // another process on this shared machine hits both savers rather than whichever ran at the time.
    const phase = async (op: string, build: (s: Subject, mode: 'seq' | 'par') => Op[]) => {
      for (const mode of ['seq', 'par'] as const) {
        const concurrency = mode === 'seq' ? 1 : CONCURRENCY;
        const all = subjects.map((s) => build(s, mode));
        const totals = subjects.map(() => ({ ops: 0, seconds: 0, statements: 0 }));
        for (let c = 0; c < CHUNKS; c++) {
          const order = c % 2 === 0 ? [0, 1] : [1, 0];
          for (const i of order) {
            const ops = all[i]!;
            const chunk = ops.slice(Math.floor((c * ops.length) / CHUNKS), Math.floor(((c + 1) * ops.length) / CHUNKS));
            if (chunk.length === 0) continue;
            const r = await measure(subjects[i]!, chunk, concurrency);
            totals[i]!.ops += r.m.ops;
            totals[i]!.seconds += r.m.seconds;
            totals[i]!.statements += r.roundTrips * r.m.ops;
          }
        }
        const results = totals.map((t) => ({ m: { ops: t.ops, seconds: t.seconds, opsPerSec: t.ops / t.seconds }, roundTrips: t.statements / t.ops }));
        rows.push({ op, mode: mode === 'seq' ? 'sequential' : `concurrency ${CONCURRENCY}`, results });
        log(`${op} ${mode}: ${results.map((r, i) => `${subjects[i]!.name} ${fmt(r.m.opsPerSec)}/s`).join(', ')}`);
      }
    };

    // Writes: the sequential run writes the first half of the threads, the concurrent one the second half.
    await phase('put', (s, mode) => putOps(s, stepMajor(work, mode === 'seq' ? seqThreads : parThreads)));
    await phase('putWrites (2 writes)', (s, mode) => putWritesOps(s, stepMajor(work, mode === 'seq' ? seqThreads : parThreads)));
    const latest = readTargets(work, READS, 11);
    const byId = readTargets(work, READS, 12);
    const lists = readTargets(work, Math.max(1, Math.floor(READS / 6)), 13);
    await phase('getTuple (latest)', (s) => getLatestOps(s, latest));
    await phase('getTuple (by id)', (s) => getByIdOps(s, byId));
    await phase('list (limit 10)', (s) => listOps(s, lists));

    // Both savers must have stored and returned the same thing, or the figures mean nothing.
    const probe = work.steps.get(work.threads[0]!)![STEPS - 1]!;
    for (const s of subjects) {
      const t = await s.saver.getTuple(cfg(probe.threadId));
      const msgs = (t?.checkpoint.channel_values.messages as unknown[] | undefined)?.length;
      const listed = await drain(s.saver.list(cfg(probe.threadId), { limit: 10 }));
      if (t?.checkpoint.id !== probe.checkpoint.id || msgs !== 2 * STEPS - 1 || t.pendingWrites?.length !== 2 || listed !== Math.min(10, STEPS)) {
        throw new Error(
          `${s.name} returned an unexpected checkpoint: id ${t?.checkpoint.id}, ${msgs} messages, ${t?.pendingWrites?.length} writes, list ${listed}`,
        );
      }
    }
    log('results checked: both savers return the same latest checkpoint (messages, pending writes, list)');

    printReport(rows, subjects);
    if (args.profile) await profile({ mysql, postgres: pgs, work, steps: STEPS, cfg });
    log(`done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    for (const s of subjects) await s.saver.end().catch(() => undefined);
    await Promise.all(servers.map((s) => s.stop()));
  }
}

function printReport(rows: Row[], subjects: Subject[]): void {
  const [a, b] = subjects;
  const ratios = rows.map((r) => r.results[0]!.m.opsPerSec / r.results[1]!.m.opsPerSec);
  const table = formatTable(
    // Two ratios, because "MySQL/PG" alone was read both ways: throughput (>1: MySQL faster) and time per op (<1: MySQL faster).
    ['operation', 'mode', `${a!.name} ops/s`, `${b!.name} ops/s`, 'ops/s MySQL÷PG', 'time MySQL÷PG', 'MySQL stmts/op', 'PG stmts/op'],
    rows.map((r, i) => [
      r.op,
      r.mode,
      fmt(r.results[0]!.m.opsPerSec),
      fmt(r.results[1]!.m.opsPerSec),
      fmt(ratios[i]!, 2),
      fmt(1 / ratios[i]!, 2),
      fmt(r.results[0]!.roundTrips, 1),
      fmt(r.results[1]!.roundTrips, 1),
    ]),
  );
  const gm = geometricMean(ratios);
  const load = os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  process.stdout.write(
    `\nCheckpointer throughput — ${THREADS} threads × ${STEPS} steps, reads ${READS}, pool ${POOL_SIZE} connections each\n` +
      `MariaDB ${args['server-defaults'] ? 'as startMariaDb configures it (64 MB buffer pool, 8 MB redo log)' : 'with 128 MB buffer pool and 256 MB redo log (PostgreSQL defaults: 128 MB shared_buffers, 1 GB max_wal_size)'}; ` +
      `${os.cpus().length} CPUs, load average ${load} at the end\n` +
      `MySQLSaver on MariaDB (startMariaDb) vs PostgresSaver on PostgreSQL (startPostgres); stmts/op = statements sent per operation\n\n` +
      `${table}\n\ngeometric mean of time per op, MySQL÷PG: ${fmt(1 / gm, 2)} (${gm >= 1 ? '≤ 1.0: MySQL at least as fast' : '> 1.0: MySQL slower'}); of throughput, MySQL÷PG: ${fmt(gm, 2)}\n`,
  );
}

await main();
