/**
 * Durable JobQueue over one SQLite file (better-sqlite3) for the embedded mode: what MemoryQueue
 * does (job-id dedupe incl. kept completed/failed jobs, delays, retries with exponential backoff,
 * UnrecoverableJobError, ReleaseJobError, DeferJobError, concurrency, graceful close), and jobs
 * survive the process. Several queues share one file (`queue` column), e.g. `runs` and `webhooks`.
 *
 * Crash recovery (BullMQ's stalled jobs): every process using the file is an *owner* with a row in
 * `queue_owners` (host, pid, heartbeat); an active job carries its owner. When a worker starts, and
 * every `stalledIntervalMs` after, jobs active under an owner that is gone — its pid no longer
 * runs on this host, or its heartbeat is older than the lease — go back to waiting with their
 * `stalled` count increased (no attempt counted), or fail once they stalled more than
 * `maxStalledCount` times.
 *
 * Cost per job: one INSERT (enqueue), one UPDATE…RETURNING (take, through the partial index of
 * ready jobs: O(log n)), one UPDATE (settle); statements are prepared once. Workers are woken in
 * process on enqueue, by a timer only for the next delayed job, and by the stalled-job check.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import BetterSqlite3 from 'better-sqlite3';
import { UnavailableError, errorMessage, silentLogger, type Logger } from '@agentloop/core';
import {
  DeferJobError,
  ReleaseJobError,
  UnrecoverableJobError,
  type EnqueueOptions,
  type EnqueueResult,
  type Job,
  type JobHandler,
  type JobQueue,
  type JobState,
  type QueueWorker,
  type WorkerOptions,
} from './types.js';
import { assertQueueName, assertWorkerOptions, backoffDelay, DEFAULT_CLOSE_GRACE_MS, DEFAULT_RETENTION_MS, resolveEnqueue, settledWithin } from './validate.js';

/** Job states as stored. A queued job is `delayed` while its ready_at is in the future. */
const QUEUED = 0;
const ACTIVE = 1;
const COMPLETED = 2;
const FAILED = 3;

/** Jobs taken by one statement at most. */
const TAKE_BATCH = 256;
/** Finished jobs past the retention deleted by one statement at most (the sweep runs again a second later). */
const SWEEP_BATCH = 2_000;
const DEFAULT_LEASE_MS = 30_000;
const DEFAULT_STALLED_INTERVAL_MS = 30_000;

/** @internal exported for the tests (query plans). */
export const SQL = {
  schema: `
    CREATE TABLE IF NOT EXISTS queue_jobs (
      queue TEXT NOT NULL,
      id TEXT NOT NULL,
      payload BLOB NOT NULL,
      state INTEGER NOT NULL,
      attempts INTEGER NOT NULL,
      backoff_ms INTEGER NOT NULL,
      attempts_made INTEGER NOT NULL,
      stalled INTEGER NOT NULL,
      ready_at INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      run INTEGER NOT NULL,
      owner TEXT,
      finished_at INTEGER,
      error TEXT,
      UNIQUE (queue, id)
    );
    CREATE INDEX IF NOT EXISTS queue_jobs_ready ON queue_jobs (queue, ready_at, seq) WHERE state = ${QUEUED};
    CREATE INDEX IF NOT EXISTS queue_jobs_active ON queue_jobs (owner, queue) WHERE state = ${ACTIVE};
    CREATE INDEX IF NOT EXISTS queue_jobs_finished ON queue_jobs (queue, finished_at) WHERE finished_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS queue_owners (owner TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, heartbeat_at INTEGER NOT NULL);`,
  // A finished job past the retention is replaced; any other existing job makes the add a no-op.
  enqueue: `
    INSERT INTO queue_jobs (queue, id, payload, state, attempts, backoff_ms, attempts_made, stalled, ready_at, seq, run, owner, finished_at, error)
    VALUES (?, ?, ?, ${QUEUED}, ?, ?, 0, 0, ?, ?, 0, NULL, NULL, NULL)
    ON CONFLICT (queue, id) DO UPDATE SET payload = excluded.payload, state = ${QUEUED}, attempts = excluded.attempts,
      backoff_ms = excluded.backoff_ms, attempts_made = 0, stalled = 0, ready_at = excluded.ready_at, seq = excluded.seq,
      owner = NULL, finished_at = NULL, error = NULL
    WHERE queue_jobs.finished_at < ?`,
  take: `
    UPDATE queue_jobs SET state = ${ACTIVE}, owner = ?, run = run + 1
    WHERE rowid IN (SELECT rowid FROM queue_jobs WHERE queue = ? AND state = ${QUEUED} AND ready_at <= ? ORDER BY ready_at, seq LIMIT ?)
    RETURNING rowid AS rowid, id, payload, attempts, attempts_made AS attemptsMade, backoff_ms AS backoffMs, run, ready_at AS readyAt, seq`,
  nextReadyAt: `SELECT ready_at AS t FROM queue_jobs WHERE queue = ? AND state = ${QUEUED} ORDER BY ready_at, seq LIMIT 1`,
  settle: `
    UPDATE queue_jobs SET state = ?, owner = NULL, attempts_made = ?, ready_at = ?, seq = ?, finished_at = ?, error = ?
    WHERE rowid = ? AND run = ? AND owner = ? AND state = ${ACTIVE}`,
  get: `SELECT state, ready_at AS readyAt, finished_at AS finishedAt, payload FROM queue_jobs WHERE queue = ? AND id = ?`,
  sweep: `DELETE FROM queue_jobs WHERE rowid IN (SELECT rowid FROM queue_jobs WHERE queue = ? AND finished_at < ? LIMIT ${SWEEP_BATCH})`,
  requeueStalled: `
    UPDATE queue_jobs SET state = ${QUEUED}, owner = NULL, stalled = stalled + 1, ready_at = 0, seq = ?
    WHERE owner = ? AND queue = ? AND state = ${ACTIVE} AND stalled < ? RETURNING id`,
  failStalled: `
    UPDATE queue_jobs SET state = ${FAILED}, owner = NULL, stalled = stalled + 1, finished_at = ?, error = ?
    WHERE owner = ? AND queue = ? AND state = ${ACTIVE} RETURNING id`,
  ownerBusy: `SELECT 1 FROM queue_jobs WHERE owner = ? AND state = ${ACTIVE} LIMIT 1`,
  orphanOwners: `SELECT DISTINCT owner FROM queue_jobs WHERE state = ${ACTIVE} AND owner IS NOT NULL AND owner NOT IN (SELECT owner FROM queue_owners)`,
  owners: `SELECT owner, host, pid, heartbeat_at AS heartbeatAt FROM queue_owners WHERE owner <> ?`,
  beat: `INSERT INTO queue_owners (owner, host, pid, heartbeat_at) VALUES (?, ?, ?, ?) ON CONFLICT (owner) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
  forgetOwner: `DELETE FROM queue_owners WHERE owner = ?`,
} as const;

/** Owners of this process that are open: another owner row with this pid is a previous life of it. */
const liveOwners = new Set<string>();

export interface SqliteQueueDatabaseOptions {
  /** Database file (`:memory:` for a private, non-durable one). */
  path: string;
  /**
   * How long an owner may go without a heartbeat before its active jobs count as stalled (default
   * 30 s). An owner on this host whose pid no longer runs counts at once.
   */
  leaseMs?: number;
  /** How long a statement waits for another process's write lock (default 5000 ms). */
  busyTimeoutMs?: number;
}

/** One SQLite file of queues, opened once per process; `queue(name)` gives its queues. */
export class SqliteQueueDatabase {
  /** @internal */
  readonly db: BetterSqlite3.Database;
  /** @internal this process's owner id in the file. */
  readonly owner = randomUUID();
  private readonly host = hostname();
  private readonly leaseMs: number;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly queues = new Set<SqliteQueue>();
  private readonly stmts: Record<Exclude<keyof typeof SQL, 'schema'>, BetterSqlite3.Statement>;
  private lastSeq = 0;
  private closed = false;

  constructor(opts: SqliteQueueDatabaseOptions) {
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.db = new BetterSqlite3(opts.path);
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000))}`);
    this.db.pragma('journal_mode = WAL');
    // Safe with WAL: a process crash loses nothing, a power loss at most the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SQL.schema);
    const { schema: _, ...statements } = SQL;
    this.stmts = Object.fromEntries(Object.entries(statements).map(([k, sql]) => [k, this.db.prepare(sql)])) as SqliteQueueDatabase['stmts'];
    liveOwners.add(this.owner);
    this.beat();
    this.heartbeat = setInterval(() => this.beat(), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.heartbeat.unref();
  }

  /** A queue of this file (closing it leaves the file open). */
  queue(name: string, opts: Omit<SqliteQueueOptions, 'database' | 'path'> = {}): SqliteQueue {
    return new SqliteQueue(name, { ...opts, database: this });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** @internal */
  stmt(name: keyof SqliteQueueDatabase['stmts']): BetterSqlite3.Statement {
    if (this.closed) throw new UnavailableError('The queue database is closed');
    return this.stmts[name];
  }

  /** @internal ordering of queued jobs with the same ready_at: increasing within the process, roughly across processes. */
  nextSeq(): number {
    this.lastSeq = Math.max(this.lastSeq + 1, Date.now() * 1000);
    return this.lastSeq;
  }

  /** @internal */
  attach(q: SqliteQueue): void {
    this.queues.add(q);
  }

  /** @internal */
  detach(q: SqliteQueue): void {
    this.queues.delete(q);
  }

  /** @internal owners whose process is gone; with `orphans`, also owners of active jobs that have no row. */
  deadOwners(orphans: boolean): string[] {
    const stale = Date.now() - this.leaseMs;
    const dead = (this.stmt('owners').all(this.owner) as Array<{ owner: string; host: string; pid: number; heartbeatAt: number }>)
      .filter((o) => o.heartbeatAt < stale || (o.host === this.host && processGone(o.pid, o.owner)))
      .map((o) => o.owner);
    if (orphans) for (const r of this.stmt('orphanOwners').all() as Array<{ owner: string }>) if (r.owner !== this.owner) dead.push(r.owner);
    return dead;
  }

  /** @internal drops the row of a dead owner once no queue has an active job of it left. */
  forgetOwnerIfIdle(owner: string): void {
    if (!this.stmt('ownerBusy').get(owner)) this.stmt('forgetOwner').run(owner);
  }

  /** @internal */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Closes every queue of the file (default worker grace), then the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.queues].map((q) => q.close()));
    clearInterval(this.heartbeat);
    try {
      // A clean exit: nothing of ours is active any more, so no one need wait for our lease.
      this.forgetOwnerIfIdle(this.owner);
    } finally {
      this.closed = true;
      liveOwners.delete(this.owner);
      this.db.close();
    }
  }

  private beat(): void {
    if (this.closed) return;
    try {
      this.stmts.beat.run(this.owner, this.host, process.pid, Date.now());
    } catch {
      // Busy (another process holds the write lock): the next beat comes well within the lease.
    }
  }
}

/** True when an owner that ran on this host with this pid is certainly gone. */
function processGone(pid: number, owner: string): boolean {
  if (pid === process.pid) return !liveOwners.has(owner);
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

export interface SqliteQueueOptions {
  /** The file's database, shared with other queues; or `path`, a file this queue opens and closes. */
  database?: SqliteQueueDatabase;
  path?: string;
  /** How long completed/failed jobs are kept, so their ids stay deduplicated (default 24 h). */
  retentionMs?: number;
  logger?: Logger;
}

/** A job taken by a worker, as the worker keeps it. */
interface Taken {
  rowid: number;
  id: string;
  payload: Uint8Array;
  attempts: number;
  attemptsMade: number;
  backoffMs: number;
  run: number;
  readyAt: number;
  seq: number;
}

/** What became of one attempt. */
type Outcome = { ok: true } | { ok: false; err: unknown } | { requeue: true } | { deferMs: number };

export class SqliteQueue implements JobQueue {
  private readonly database: SqliteQueueDatabase;
  private readonly ownsDatabase: boolean;
  private readonly retentionMs: number;
  private readonly logger: Logger;
  private readonly workers = new Set<SqliteWorker>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  /**
   * False once a take found no ready job, until something may have made one ready (an add, a
   * hand-back, a timer, the stalled-job check): the pump after each finished job then costs nothing.
   */
  private mayHaveReady = true;
  private lastSweep = 0;
  private closed = false;

  constructor(
    readonly name: string,
    opts: SqliteQueueOptions,
  ) {
    assertQueueName(name);
    this.logger = (opts.logger ?? silentLogger()).child({ component: 'queue', queue: name });
    if (!opts.database && !opts.path) throw new Error('SqliteQueue needs a database or a path');
    this.ownsDatabase = !opts.database;
    this.database = opts.database ?? new SqliteQueueDatabase({ path: opts.path! });
    this.database.attach(this);
    this.retentionMs = opts.retentionMs ?? DEFAULT_RETENTION_MS;
  }

  async enqueue(payload: Uint8Array, opts: EnqueueOptions): Promise<EnqueueResult> {
    if (this.closed) throw new UnavailableError(`Queue ${this.name} is closed`);
    const r = resolveEnqueue(opts);
    const now = Date.now();
    this.sweep(now);
    const readyAt = now + r.delayMs;
    const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    const { changes } = this.database.stmt('enqueue').run(this.name, opts.jobId, bytes, r.attempts, r.backoffMs, readyAt, this.database.nextSeq(), now - this.retentionMs);
    if (changes === 0) return { jobId: opts.jobId, added: false };
    if (r.delayMs > 0) this.wakeAt(readyAt);
    else this.wakeAll();
    return { jobId: opts.jobId, added: true };
  }

  async process(handler: JobHandler, opts: WorkerOptions): Promise<QueueWorker> {
    if (this.closed) throw new UnavailableError(`Queue ${this.name} is closed`);
    assertWorkerOptions(opts);
    const w = new SqliteWorker(this, handler, opts, this.logger);
    this.workers.add(w);
    // Jobs a dead process had taken come back before this worker takes anything.
    this.recoverStalled(opts.maxStalledCount ?? 1, true);
    this.wakeAll();
    return w;
  }

  async getState(jobId: string): Promise<JobState> {
    const row = this.row(jobId);
    if (!row) return 'unknown';
    switch (row.state) {
      case QUEUED:
        return row.readyAt > Date.now() ? 'delayed' : 'waiting';
      case ACTIVE:
        return 'active';
      case COMPLETED:
        return 'completed';
      case FAILED:
        return 'failed';
      default:
        return 'unknown';
    }
  }

  async getPayload(jobId: string): Promise<Uint8Array | undefined> {
    const p = this.row(jobId)?.payload;
    return p === undefined ? undefined : new Uint8Array(p);
  }

  /** Closes the workers (default grace) and, when it opened it, the file. Jobs stay in the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.workers].map((w) => w.close()));
    clearTimeout(this.timer);
    this.database.detach(this);
    if (this.ownsDatabase) await this.database.close();
  }

  /** @internal */
  get databaseClosed(): boolean {
    return this.database.isClosed;
  }

  /** @internal up to `max` ready jobs, now active under this process, oldest first. */
  take(max: number): Taken[] {
    if (!this.mayHaveReady) return [];
    const limit = Math.min(max, TAKE_BATCH);
    const rows = this.database.stmt('take').all(this.database.owner, this.name, Date.now(), limit) as Array<Omit<Taken, 'payload'> & { payload: Buffer }>;
    if (rows.length < limit) {
      // Nothing more is ready: wake up when the next delayed job is due.
      this.mayHaveReady = false;
      const next = this.database.stmt('nextReadyAt').get(this.name) as { t: number } | undefined;
      if (next) this.wakeAt(next.t);
    }
    if (rows.length > 1) rows.sort((a, b) => a.readyAt - b.readyAt || a.seq - b.seq);
    return rows.map((r) => ({ ...r, payload: new Uint8Array(r.payload.buffer, r.payload.byteOffset, r.payload.byteLength) }));
  }

  /** @internal records the outcome of one attempt (ignored when the job was handed to someone else meanwhile). */
  settle(job: Taken, outcome: Outcome): void {
    const now = Date.now();
    let state = QUEUED;
    let attemptsMade = job.attemptsMade;
    let readyAt = now;
    let finishedAt: number | null = null;
    let error: string | null = null;
    if ('requeue' in outcome) {
      // Handed back by a closing worker: first in line again, not a failed attempt.
      readyAt = 0;
    } else if ('deferMs' in outcome) {
      // Deferred by its handler: behind the others, not a failed attempt.
      readyAt = now + outcome.deferMs;
    } else if (outcome.ok) {
      state = COMPLETED;
      finishedAt = now;
    } else {
      attemptsMade++;
      error = errorMessage(outcome.err).slice(0, 2_000);
      if (outcome.err instanceof UnrecoverableJobError || attemptsMade >= job.attempts) {
        this.logger.warn({ job_id: job.id, attempts_made: attemptsMade, err: outcome.err }, 'job failed');
        state = FAILED;
        finishedAt = now;
      } else {
        this.logger.info({ job_id: job.id, attempts_made: attemptsMade, err: outcome.err }, 'job attempt failed; retrying');
        readyAt = now + backoffDelay(job.backoffMs, attemptsMade);
      }
    }
    this.database.stmt('settle').run(state, attemptsMade, readyAt, this.database.nextSeq(), finishedAt, error, job.rowid, job.run, this.database.owner);
    if (state === QUEUED) this.wakeAt(readyAt);
  }

  /** @internal jobs active under dead owners back to waiting (or failed past maxStalledCount). */
  recoverStalled(maxStalledCount: number, orphans: boolean): void {
    if (this.closed) return;
    const dead = this.database.deadOwners(orphans);
    if (dead.length === 0) return;
    const now = Date.now();
    let requeued: Array<{ id: string }> = [];
    let failed: Array<{ id: string }> = [];
    this.database.transaction(() => {
      for (const owner of dead) {
        requeued = requeued.concat(this.database.stmt('requeueStalled').all(this.database.nextSeq(), owner, this.name, maxStalledCount) as Array<{ id: string }>);
        const reason = `job stalled more than ${maxStalledCount} time(s): the process running it stopped`;
        failed = failed.concat(this.database.stmt('failStalled').all(now, reason, owner, this.name) as Array<{ id: string }>);
        this.database.forgetOwnerIfIdle(owner);
      }
    });
    for (const j of requeued) this.logger.warn({ job_id: j.id }, 'job stalled (its process stopped); back in the queue');
    for (const j of failed) this.logger.warn({ job_id: j.id, max_stalled: maxStalledCount }, 'job stalled too many times; failed');
    if (requeued.length > 0) this.wakeAll();
  }

  /** @internal */
  removeWorker(w: SqliteWorker): void {
    this.workers.delete(w);
    if (this.workers.size === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
    }
  }

  /** @internal something may be ready now (added elsewhere, or handed back): the workers look. */
  wakeAll(): void {
    this.mayHaveReady = true;
    for (const w of this.workers) w.schedule();
  }

  private wakeAt(t: number): void {
    if (this.workers.size === 0 || this.closed) return;
    const now = Date.now();
    if (t <= now) return this.wakeAll();
    if (t >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = t;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.wakeAll();
    }, t - now);
    this.timer.unref();
  }

  private row(jobId: string): { state: number; readyAt: number; finishedAt: number | null; payload: Buffer } | undefined {
    const row = this.database.stmt('get').get(this.name, jobId) as { state: number; readyAt: number; finishedAt: number | null; payload: Buffer } | undefined;
    if (!row || (row.finishedAt !== null && row.finishedAt < Date.now() - this.retentionMs)) return undefined;
    return row;
  }

  /** Deletes finished jobs past the retention, at most once a second (through the index of finished jobs). */
  private sweep(now: number): void {
    if (now - this.lastSweep < 1_000) return;
    this.lastSweep = now;
    this.database.stmt('sweep').run(this.name, now - this.retentionMs);
  }
}

interface ActiveRun {
  job: Taken;
  ac: AbortController;
  done: Promise<void>;
}

class SqliteWorker implements QueueWorker {
  private readonly active = new Map<number, ActiveRun>();
  private readonly concurrency: number;
  private readonly maintenance: NodeJS.Timeout;
  private scheduled = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly queue: SqliteQueue,
    private readonly handler: JobHandler,
    opts: WorkerOptions,
    private readonly logger: Logger,
  ) {
    this.concurrency = opts.concurrency;
    const maxStalled = opts.maxStalledCount ?? 1;
    // The stalled-job check; its pump also picks up jobs another process added to a shared file.
    this.maintenance = setInterval(() => {
      try {
        this.queue.recoverStalled(maxStalled, false);
      } catch (err) {
        this.logger.warn({ err: errorMessage(err) }, 'stalled-job check failed');
      }
      // Jobs another process added to a shared file are seen here.
      this.queue.wakeAll();
    }, opts.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS);
    this.maintenance.unref();
  }

  /** Takes jobs soon (once, however many wake-ups come before). */
  schedule(): void {
    if (this.scheduled || this.closing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    try {
      while (!this.closing && this.active.size < this.concurrency) {
        const want = Math.min(this.concurrency - this.active.size, TAKE_BATCH);
        const jobs = this.queue.take(want);
        for (const job of jobs) this.start(job);
        if (jobs.length < want) return;
      }
    } catch (err) {
      // The file is busy or failing: try again shortly rather than stall until the next wake-up.
      this.logger.warn({ err: errorMessage(err) }, 'could not take jobs; retrying in 1 s');
      setTimeout(() => this.schedule(), 1_000).unref();
    }
  }

  private start(job: Taken): void {
    const ac = new AbortController();
    // The payload was read for this attempt alone: the handler may keep it.
    const view: Job = { id: job.id, payload: job.payload, attemptsMade: job.attemptsMade, attempts: job.attempts };
    const entry: ActiveRun = { job, ac, done: Promise.resolve() };
    entry.done = (async () => {
      let outcome: Outcome;
      try {
        await this.handler(view, ac.signal);
        outcome = { ok: true };
      } catch (err) {
        if (err instanceof DeferJobError) outcome = { deferMs: Math.max(0, err.delayMs) };
        else outcome = err instanceof ReleaseJobError || (ac.signal.aborted && this.closing) ? { requeue: true } : { ok: false, err };
      }
      // Not active any more: handed back by close() after the grace period; this late outcome is void.
      if (!this.active.delete(job.rowid)) return;
      this.settle(job, outcome);
      this.schedule();
    })();
    this.active.set(job.rowid, entry);
  }

  /** Records an outcome; if the file refuses it, retries a few times (else the job is recovered as stalled after a restart). */
  private settle(job: Taken, outcome: Outcome, tries = 0): void {
    try {
      this.queue.settle(job, outcome);
    } catch (err) {
      if (this.queue.databaseClosed) return;
      if (tries >= 30) {
        this.logger.error({ job_id: job.id, err: errorMessage(err) }, 'could not record the outcome of a job; it stays active until the stalled-job check of a restart');
        return;
      }
      this.logger.warn({ job_id: job.id, err: errorMessage(err) }, 'could not record the outcome of a job; retrying in 1 s');
      setTimeout(() => this.settle(job, outcome, tries + 1), 1_000).unref();
    }
  }

  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.closing ??= this.doClose(graceMs);
    return this.closing;
  }

  private async doClose(graceMs: number): Promise<void> {
    clearInterval(this.maintenance);
    const all = () => Promise.all([...this.active.values()].map((a) => a.done));
    if (!(await settledWithin(all(), graceMs))) {
      this.logger.warn({ active: this.active.size, grace_ms: graceMs }, 'worker close: aborting active jobs after the grace period');
      const stuck = [...this.active.values()];
      for (const a of stuck) a.ac.abort(new UnavailableError('The worker is shutting down'));
      if (!(await settledWithin(all(), Math.min(graceMs, 5_000)))) {
        // Handlers that ignore the signal: hand their jobs back; their late outcome is ignored (state no longer active).
        for (const a of stuck) if (this.active.delete(a.job.rowid)) this.settle(a.job, { requeue: true });
      }
    }
    this.queue.removeWorker(this);
  }
}
