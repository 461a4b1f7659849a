/**
 * The SQLite file behind SqliteQueue (sqlite-queue.ts, whose header describes the design): its
 * schema and prepared statements, and the *owners* — the processes using the file, each with a
 * heartbeat — that crash recovery asks about.
 *
 * Waiting for another connection's write lock (issue 9): the file is shared with other processes
 * and, in embedded mode, with the `EMBEDDED_THREADS=orchestrator` threads' connections. With a
 * connection busy timeout SQLite would sleep in the statement, and this thread's whole event loop
 * with it (bench/throughput README, "Orchestrator threads at 4 clients and in flight"). So the
 * connection runs with `busy_timeout = 0`, and the queue's statements go through {@link
 * SqliteQueueDatabase.run}: one that fails with SQLITE_BUSY outside a transaction changed nothing
 * (libs/core sqlite-busy.ts), and is tried again after an asynchronous sleep, in call order, until
 * the busy timeout has passed. Statements others prepare on `db` (the cron scheduler's, run
 * synchronously by their callers) still let SQLite wait (othersWaitInSqlite).
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import BetterSqlite3 from 'better-sqlite3';
import { isSqliteBusy, sqliteBusyBackoffMs, UnavailableError } from '@agentloop/core';

import { SqliteQueue, type SqliteQueueOptions } from './sqlite-queue.js';

/** Job states as stored. A queued job is `delayed` while its ready_at is in the future. */
export const QUEUED = 0;
export const ACTIVE = 1;
export const COMPLETED = 2;
export const FAILED = 3;

/** Jobs taken by one statement at most. */
export const TAKE_BATCH = 256;
/** Finished jobs past the retention deleted by one statement at most (the sweep runs again a second later). */
export const SWEEP_BATCH = 2_000;
export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_STALLED_INTERVAL_MS = 30_000;

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
      tag REAL NOT NULL DEFAULT 0,
      grp TEXT NOT NULL DEFAULT '',
      parked INTEGER NOT NULL DEFAULT 0,
      finish REAL,
      UNIQUE (queue, id)
    );
    CREATE INDEX IF NOT EXISTS queue_jobs_ready ON queue_jobs (queue, ready_at, seq) WHERE state = ${QUEUED};
    CREATE INDEX IF NOT EXISTS queue_jobs_fair ON queue_jobs (queue, tag, ready_at, seq) WHERE state = ${QUEUED};
    CREATE INDEX IF NOT EXISTS queue_jobs_parked ON queue_jobs (queue, grp, tag, seq) WHERE parked = 1;
    CREATE TABLE IF NOT EXISTS queue_fair_finish (queue TEXT NOT NULL, grp TEXT NOT NULL, finish REAL NOT NULL, PRIMARY KEY (queue, grp));
    CREATE TABLE IF NOT EXISTS queue_fair_vtime (queue TEXT PRIMARY KEY, v REAL NOT NULL);
    -- The fair scheduler's bookkeeping (fair-tags.ts), done by the statement that adds or takes a
    -- job rather than by a second statement in a transaction around it (issue 9: an add and a take
    -- were BEGIN, two statements, COMMIT each; now one statement each, as atomic).
    -- A job added by a fair queue carries its group's next finish tag: the group's finish tag moves on.
    CREATE TRIGGER IF NOT EXISTS queue_fair_finish_on_add AFTER INSERT ON queue_jobs WHEN new.finish IS NOT NULL BEGIN
      INSERT INTO queue_fair_finish (queue, grp, finish) VALUES (new.queue, new.grp, new.finish)
        ON CONFLICT (queue, grp) DO UPDATE SET finish = excluded.finish;
    END;
    -- The same for a finished job past the retention added again (the add's upsert updates its row).
    CREATE TRIGGER IF NOT EXISTS queue_fair_finish_on_readd AFTER UPDATE OF finish ON queue_jobs WHEN new.finish IS NOT NULL BEGIN
      INSERT INTO queue_fair_finish (queue, grp, finish) VALUES (new.queue, new.grp, new.finish)
        ON CONFLICT (queue, grp) DO UPDATE SET finish = excluded.finish;
    END;
    -- A job taken: the virtual time moves on to its tag (never back). Untagged jobs (tag 0: a queue
    -- without fairness, or jobs from before it) cannot move it, so they skip the write.
    CREATE TRIGGER IF NOT EXISTS queue_fair_advance_on_take AFTER UPDATE OF state ON queue_jobs WHEN new.state = ${ACTIVE} AND new.tag > 0 BEGIN
      INSERT INTO queue_fair_vtime (queue, v) VALUES (new.queue, new.tag) ON CONFLICT (queue) DO UPDATE SET v = max(v, excluded.v);
    END;
    CREATE INDEX IF NOT EXISTS queue_jobs_active ON queue_jobs (owner, queue) WHERE state = ${ACTIVE};
    CREATE INDEX IF NOT EXISTS queue_jobs_finished ON queue_jobs (queue, finished_at) WHERE finished_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS queue_owners (owner TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, heartbeat_at INTEGER NOT NULL);`,
  // A finished job past the retention is replaced; any other existing job makes the add a no-op.
  enqueue: `
    INSERT INTO queue_jobs (queue, id, payload, state, attempts, backoff_ms, attempts_made, stalled, ready_at, seq, run, owner, finished_at, error, tag, grp)
    VALUES (?, ?, ?, ${QUEUED}, ?, ?, 0, 0, ?, ?, 0, NULL, NULL, NULL, ?, ?)
    ON CONFLICT (queue, id) DO UPDATE SET payload = excluded.payload, state = ${QUEUED}, attempts = excluded.attempts,
      backoff_ms = excluded.backoff_ms, attempts_made = 0, stalled = 0, ready_at = excluded.ready_at, seq = excluded.seq,
      owner = NULL, finished_at = NULL, error = NULL, tag = excluded.tag, grp = excluded.grp, parked = 0, finish = NULL
    WHERE queue_jobs.finished_at < ?`,
  // The same add on a fair queue, its start tag computed in the statement (fair-tags.ts startTag:
  // max(V, the group's finish tag)), where a read of V and the finish tag came first, and its
  // finish tag (fair-tags.ts finishTag: tag + 1/weight, `@step`) stored with it for the trigger
  // that moves the group's finish tag on (issue 9). A no-op add changes nothing, finish tag included.
  enqueueFair: `
    INSERT INTO queue_jobs (queue, id, payload, state, attempts, backoff_ms, attempts_made, stalled, ready_at, seq, run, owner, finished_at, error, tag, grp, finish)
    SELECT @queue, @id, @payload, ${QUEUED}, @attempts, @backoffMs, 0, 0, @readyAt, @seq, 0, NULL, NULL, NULL, start.tag, @grp, start.tag + @step
    FROM (SELECT max(coalesce((SELECT v FROM queue_fair_vtime WHERE queue = @queue), 0),
      coalesce((SELECT finish FROM queue_fair_finish WHERE queue = @queue AND grp = @grp), 0)) AS tag) AS start
    WHERE true
    ON CONFLICT (queue, id) DO UPDATE SET payload = excluded.payload, state = ${QUEUED}, attempts = excluded.attempts,
      backoff_ms = excluded.backoff_ms, attempts_made = 0, stalled = 0, ready_at = excluded.ready_at, seq = excluded.seq,
      owner = NULL, finished_at = NULL, error = NULL, tag = excluded.tag, grp = excluded.grp, parked = 0, finish = excluded.finish
    WHERE queue_jobs.finished_at < @retainedSince`,
  // Fairness tag first (all 0 on a queue without fairness: FIFO by readiness). Each row also
  // carries when the next delayed job is due (`nextReadyAt` of the jobs not ready at @now, which
  // this update does not touch), so a take that finds jobs needs no second statement for it.
  take: `
    UPDATE queue_jobs SET state = ${ACTIVE}, owner = @owner, run = run + 1, parked = 0
    WHERE rowid IN (SELECT rowid FROM queue_jobs WHERE queue = @queue AND state = ${QUEUED} AND ready_at <= @now ORDER BY tag, ready_at, seq LIMIT @limit)
    RETURNING rowid AS rowid, id, payload, attempts, attempts_made AS attemptsMade, backoff_ms AS backoffMs, run, ready_at AS readyAt, seq, tag, grp AS "group",
      (SELECT min(ready_at) FROM queue_jobs WHERE queue = @queue AND state = ${QUEUED} AND ready_at > @now) AS nextReadyAt`,
  // The take of one job (issue 9): what a worker does when one job became ready, the usual case.
  // `rowid = (scalar subquery)` updates in one pass, where the batch take's `rowid IN (…ORDER BY…
  // LIMIT)` builds an ephemeral index of rowids first and updates in two passes: ~2.4x its CPU for
  // one row. Its `nextReadyAt` is the earliest ready_at of the *other* queued jobs (so it does not
  // matter whether SQLite computes it before or after this row changed): at most @now means more
  // jobs are ready (the batch take follows), later means when the next delayed one is due.
  takeOne: `
    UPDATE queue_jobs SET state = ${ACTIVE}, owner = @owner, run = run + 1, parked = 0
    WHERE rowid = (SELECT rowid FROM queue_jobs WHERE queue = @queue AND state = ${QUEUED} AND ready_at <= @now ORDER BY tag, ready_at, seq LIMIT 1)
    RETURNING rowid AS rowid, id, payload, attempts, attempts_made AS attemptsMade, backoff_ms AS backoffMs, run, ready_at AS readyAt, seq, tag, grp AS "group",
      (SELECT min(o.ready_at) FROM queue_jobs AS o WHERE o.queue = @queue AND o.state = ${QUEUED} AND o.rowid <> queue_jobs.rowid) AS nextReadyAt`,
  wakeParked: `
    UPDATE queue_jobs SET ready_at = ?, parked = 0
    WHERE rowid IN (SELECT rowid FROM queue_jobs WHERE queue = ? AND grp = ? AND parked = 1 ORDER BY tag, seq LIMIT ?) RETURNING id`,
  nextReadyAt: `SELECT ready_at AS t FROM queue_jobs WHERE queue = ? AND state = ${QUEUED} ORDER BY ready_at, seq LIMIT 1`,
  settle: `
    UPDATE queue_jobs SET state = ?, owner = NULL, attempts_made = ?, ready_at = ?, seq = ?, finished_at = ?, error = ?, parked = ?
    WHERE rowid = ? AND run = ? AND owner = ? AND state = ${ACTIVE}`,
  // Over the partial indexes of queued and active jobs; failed ones are few (kept for the retention only).
  statsQueued: `
    SELECT COALESCE(SUM(ready_at <= ?), 0) AS waiting, COUNT(*) AS queued, MIN(CASE WHEN ready_at <= ? AND ready_at > 0 THEN ready_at END) AS oldest
    FROM queue_jobs WHERE queue = ? AND state = ${QUEUED}`,
  statsActive: `SELECT COUNT(*) AS n FROM queue_jobs WHERE queue = ? AND state = ${ACTIVE}`,
  statsFailed: `SELECT COUNT(*) AS n FROM queue_jobs WHERE queue = ? AND state = ${FAILED}`,
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

/**
 * Owners of this process that are open: another owner row with this pid is a previous life of it.
 * Module state is per thread, so a database opened by another thread of this process (embedded
 * mode's orchestrator thread) is made known here with `adoptLiveOwner`.
 */
const liveOwners = new Set<string>();

/**
 * Declares `owner` (a database of another thread of this process, opened with that `owner` id)
 * alive, so this thread's stalled-job checks leave its active jobs alone; the returned function
 * takes that back (the thread ended).
 */
export function adoptLiveOwner(owner: string): () => void {
  liveOwners.add(owner);
  return () => void liveOwners.delete(owner);
}

export interface SqliteQueueDatabaseOptions {
  /** Database file (`:memory:` for a private, non-durable one). */
  path: string;
  /**
   * How long an owner may go without a heartbeat before its active jobs count as stalled (default
   * 30 s). An owner on this host whose pid no longer runs counts at once.
   */
  leaseMs?: number;
  /** How long a statement waits for another connection's write lock (default 5000 ms), asynchronously. */
  busyTimeoutMs?: number;
  /** This database's owner id (default: a new UUID); another thread of the process adopts it (adoptLiveOwner). */
  owner?: string;
  /**
   * This connection's automatic WAL checkpoint threshold in pages (SQLite's default 1,000): higher
   * when another thread checkpoints the file (libs/store wal-checkpointer.ts).
   */
  walAutocheckpointPages?: number;
}

/** A statement waiting for another connection's write lock. */
interface Waiting {
  attempt: () => unknown;
  deadline: number;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** One SQLite file of queues, opened once per process; `queue(name)` gives its queues. */
export class SqliteQueueDatabase {
  /** @internal */
  readonly db: BetterSqlite3.Database;
  /** @internal this process's owner id in the file. */
  readonly owner: string;
  /** @internal how long a statement waits for another connection's write lock. */
  readonly busyTimeoutMs: number;
  private readonly host = hostname();
  private readonly leaseMs: number;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly queues = new Set<SqliteQueue>();
  private readonly stmts: Record<Exclude<keyof typeof SQL, 'schema'>, BetterSqlite3.Statement>;
  private lastSeq = 0;
  private closed = false;
  /** Statements that met another connection's lock, oldest first, and the timer of the next try. */
  private readonly waiting: Waiting[] = [];
  private waitTimer: NodeJS.Timeout | undefined;
  private waitRetries = 0;
  /** Transactions begun by `transaction`: an error after one began is never tried again. */
  private transactionsBegun = 0;
  /** A heartbeat is waiting for the lock: the next one is skipped. */
  private beating = false;
  private readonly retryWaiting = (): void => this.tryWaiting();

  constructor(opts: SqliteQueueDatabaseOptions) {
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.owner = opts.owner ?? randomUUID();
    this.busyTimeoutMs = Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000));
    this.db = new BetterSqlite3(opts.path);
    // Opening (WAL, schema, an older file's columns) is synchronous: SQLite waits, as before.
    this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    this.db.pragma('journal_mode = WAL');
    // Safe with WAL: a process crash loses nothing, a power loss at most the last commits.
    this.db.pragma('synchronous = NORMAL');
    if (opts.walAutocheckpointPages !== undefined) this.db.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(opts.walAutocheckpointPages))}`);
    // The batch take's list of rowids is an ephemeral index: with the default store (a temporary
    // file, opened lazily) it costs a pager set up and torn down per statement, ~40 µs of that
    // take's ~105 µs CPU (issue 9, measured with a 3,000-job loop). It holds at most TAKE_BATCH
    // rowids, so keeping it in memory adds no new bound.
    this.db.pragma('temp_store = MEMORY');
    addFairnessColumns(this.db);
    this.db.exec(SQL.schema);
    const { schema: _, ...statements } = SQL;
    this.stmts = Object.fromEntries(Object.entries(statements).map(([k, sql]) => [k, this.db.prepare(sql)])) as SqliteQueueDatabase['stmts'];
    // The first heartbeat waits in SQLite, as the schema did: this owner's row must exist before
    // any take can mark a job active under it, or another database's orphan check (an owner with no
    // row counts as dead) would hand that job out a second time while it runs here.
    liveOwners.add(this.owner);
    this.stmts.beat.run(this.owner, this.host, process.pid, Date.now());
    // From here on the queue's statements wait asynchronously (run); others' wait in SQLite.
    this.db.pragma('busy_timeout = 0');
    othersWaitInSqlite(this.db, this.busyTimeoutMs);
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

  /**
   * @internal BEGIN IMMEDIATE: the write lock is taken up front, so it is the BEGIN that meets
   * another connection's lock (and, in {@link run}, waits for it). A deferred transaction that reads
   * first (enqueue's fairness state) fails at once with "database is locked" when another
   * connection — another process, or embedded mode's orchestrator thread — wrote since its read:
   * SQLite cannot wait for a lock it would need a newer snapshot for.
   */
  transaction<T>(fn: () => T): T {
    return this.db
      .transaction(() => {
        this.transactionsBegun++;
        return fn();
      })
      .immediate();
  }

  /**
   * @internal Runs `attempt` now or, when it (or a statement called before it) met another
   * connection's write lock, once that is released, in call order: its result, or a promise of it
   * when it had to wait. Past the busy timeout its caller gets the SQLITE_BUSY error.
   *
   * `attempt` must change nothing when it fails with SQLITE_BUSY, which is what makes trying it
   * again safe: reads, at most one write run in autocommit mode (last), or a {@link transaction}
   * (last), whose BEGIN IMMEDIATE is what meets the lock. An error once a transaction began is
   * never tried again (SQLite may have rolled it back), nor is anything run inside an open
   * transaction: that runs once, as it is. Its promise (when it waits) always settles.
   */
  run<T>(attempt: () => T): T | Promise<T> {
    if (this.db.inTransaction) return attempt();
    if (this.waiting.length > 0) return this.wait(attempt);
    const begun = this.transactionsBegun;
    try {
      return attempt();
    } catch (err) {
      if (!this.mayTryAgain(err, begun)) throw err;
      return this.wait(attempt);
    }
  }

  /** Closes every queue of the file (default worker grace), then the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.allSettled([...this.queues].map((q) => q.close()));
    clearInterval(this.heartbeat);
    try {
      // A clean exit: nothing of ours is active any more, so no one need wait for our lease. In
      // call order, so after the statements still waiting for the lock (a job's outcome).
      await this.run(() => this.forgetOwnerIfIdle(this.owner));
    } finally {
      this.closed = true;
      liveOwners.delete(this.owner);
      clearTimeout(this.waitTimer);
      for (const w of this.waiting.splice(0)) w.reject(new UnavailableError('The queue database is closed'));
      this.db.close();
    }
  }

  private beat(): void {
    if (this.closed || this.beating) return;
    let out: unknown;
    try {
      out = this.run(() => this.stmts.beat.run(this.owner, this.host, process.pid, Date.now()));
    } catch {
      // The file is failing: the next beat comes well within the lease.
      return;
    }
    if (!(out instanceof Promise)) return;
    // Waiting for another connection's lock; past the busy timeout it is given up, as above.
    this.beating = true;
    const done = (): void => void (this.beating = false);
    out.then(done, done);
  }

  private mayTryAgain(err: unknown, transactionsBegun: number): boolean {
    return isSqliteBusy(err) && transactionsBegun === this.transactionsBegun && !this.db.inTransaction;
  }

  private wait<T>(attempt: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ attempt, deadline: Date.now() + this.busyTimeoutMs, resolve: resolve as (value: unknown) => void, reject });
      this.waitTimer ??= setTimeout(this.retryWaiting, sqliteBusyBackoffMs(this.waitRetries++));
    });
  }

  /** Tries the waiting statements in order, until one meets the lock again (a later try) or none is left. */
  private tryWaiting(): void {
    this.waitTimer = undefined;
    while (this.waiting.length > 0) {
      const w = this.waiting[0]!;
      const begun = this.transactionsBegun;
      let value: unknown;
      try {
        if (this.closed) throw new UnavailableError('The queue database is closed');
        value = w.attempt();
      } catch (err) {
        if (this.mayTryAgain(err, begun) && Date.now() < w.deadline) {
          this.waitTimer = setTimeout(this.retryWaiting, sqliteBusyBackoffMs(this.waitRetries++));
          return;
        }
        this.waiting.shift();
        w.reject(err);
        continue;
      }
      this.waiting.shift();
      w.resolve(value);
    }
    this.waitRetries = 0;
  }
}

/**
 * Makes the statements others prepare on `db` (SqliteScheduler's, tests'), and their `exec`, let
 * SQLite wait for a lock up to `busyTimeoutMs`, as before, while the connection otherwise has
 * `busy_timeout = 0` (issue 9): their callers run them synchronously and cannot wait any other way.
 * Two pragmas around each such statement (a few a second: the scheduler's poll, a cron's change)
 * rather than around every statement of the queue. Statements prepared by the database itself (its
 * constructor, before this) are untouched; `iterate` is not wrapped (nobody iterates here).
 */
function othersWaitInSqlite(db: BetterSqlite3.Database, busyTimeoutMs: number): void {
  const prepare = db.prepare.bind(db);
  const exec = db.exec.bind(db);
  let depth = 0;
  const waiting = <T>(run: () => T): T => {
    if (depth === 0) db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    depth++;
    try {
      return run();
    } finally {
      if (--depth === 0 && db.open) db.pragma('busy_timeout = 0');
    }
  };
  db.prepare = ((sql: string) => {
    const stmt = prepare(sql) as unknown as Record<'run' | 'get' | 'all', (...args: unknown[]) => unknown>;
    for (const method of ['run', 'get', 'all'] as const) {
      const inner = stmt[method].bind(stmt);
      stmt[method] = (...args: unknown[]) => waiting(() => inner(...args));
    }
    return stmt;
  }) as unknown as BetterSqlite3.Database['prepare'];
  db.exec = (sql: string) => {
    waiting(() => exec(sql));
    return db;
  };
}

/**
 * A file made before fair scheduling (docs/adr/0008) gets its columns; their defaults make old jobs
 * untagged (FIFO). A file made before the finish tag moved into the job's row gets `finish`: its
 * jobs have none (NULL), their add had moved their group's finish tag on already.
 */
function addFairnessColumns(db: BetterSqlite3.Database): void {
  const columns = new Set((db.prepare(`SELECT name FROM pragma_table_info('queue_jobs')`).all() as Array<{ name: string }>).map((c) => c.name));
  if (columns.size === 0) return;
  if (!columns.has('tag')) {
    db.exec(`
      ALTER TABLE queue_jobs ADD COLUMN tag REAL NOT NULL DEFAULT 0;
      ALTER TABLE queue_jobs ADD COLUMN grp TEXT NOT NULL DEFAULT '';
      ALTER TABLE queue_jobs ADD COLUMN parked INTEGER NOT NULL DEFAULT 0;`);
  }
  if (!columns.has('finish')) db.exec(`ALTER TABLE queue_jobs ADD COLUMN finish REAL`);
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
