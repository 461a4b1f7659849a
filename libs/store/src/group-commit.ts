import type BetterSqlite3 from 'better-sqlite3';
import { isSqliteBusy, sqliteBusyBackoffMs } from '@agentloop/core';

/** When the pending writes are committed; by default the event loop's check phase (`setImmediate`). */
export type GroupCommitSchedule = (flush: () => void) => void;

interface PendingWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Until when it may wait for another connection's write lock: set when it first meets the lock. */
  deadline?: number;
}

/**
 * Group commit over one better-sqlite3 connection: the writes handed to {@link run} during one turn
 * of the event loop are executed together, in call order, in one transaction, and each caller's
 * promise settles only after that transaction's COMMIT — so a resolved write is as durable as one
 * committed alone, and nothing is promised for a write whose COMMIT has not happened.
 *
 * Why: in WAL mode with `synchronous = NORMAL` a commit costs more than a small INSERT (a WAL frame
 * per changed page, the WAL index update): embedded runs made ~28 commits each, 13 of them
 * single-statement checkpoint writes (issue 9, bench/throughput README). Concurrent runs write in
 * the same turns, so their writes can share commits.
 *
 * - better-sqlite3 is synchronous: the batch's BEGIN, statements and COMMIT run inside one callback,
 *   so no transaction stays open across turns. Other connections to the file (orchestrator threads)
 *   wait for its write lock no longer than one batch, and a read on this connection never sees the
 *   batch's rows uncommitted.
 * - A write that is alone in its turn runs in autocommit mode, as it did before: no BEGIN/COMMIT.
 * - Each `write` must be atomic by itself (one statement, or its own `db.transaction`, which nests
 *   as a savepoint inside the batch's transaction).
 * - A write that throws while the transaction stays open (a constraint, a bad binding: SQLite undid
 *   that statement only) rejects its own caller; the others still commit. A write after which
 *   SQLite rolled the whole transaction back (disk full, an I/O error, out of memory) also rejects
 *   only its own caller: the others are run again in a new transaction, so each write fails or
 *   commits as it would have alone. A write may therefore run more than once; only its last run
 *   is committed, so it must change nothing but the connection's database. When the COMMIT itself
 *   fails, every caller of the batch gets the error and none of the batch is in the file.
 * - {@link flush} commits what is pending at once: call it before reading what those writes wrote on
 *   this connection, before a write that must follow them, and before closing the connection.
 * - Another connection's write lock (an `EMBEDDED_THREADS=orchestrator` thread writing the same file)
 *   is waited for asynchronously (issue 9): with the connection's busy timeout SQLite would sleep
 *   in the BEGIN, and this thread's whole event loop with it. The scheduled flush runs its BEGIN
 *   IMMEDIATE (or the lone autocommit write) with `busy_timeout = 0`; one that fails with
 *   SQLITE_BUSY changed nothing (libs/core sqlite-busy.ts), so the writes stay pending, in call
 *   order, the writes called meanwhile joining behind them, and the flush is tried again after an
 *   asynchronous sleep. Each write waits so until the connection's busy timeout (read when this is
 *   made) has passed since it first met the lock; then its caller gets the SQLITE_BUSY error, as
 *   when SQLite waited. {@link flush} must commit before it returns, so it lets SQLite wait instead
 *   (rare: a read or a close finding the file locked while writes are pending).
 * - The connection's busy timeout is therefore this class's to set: it stays 0 after a flush, and
 *   {@link forSynchronousUse} gives it back for code that runs its own statements on the connection
 *   synchronously and so cannot wait any other way.
 */
export class SqliteGroupCommit {
  /** How long a write may wait for another connection's write lock: the connection's busy timeout. */
  readonly busyTimeoutMs: number;
  private pending: PendingWrite[] = [];
  private scheduled = false;
  /** The next try of a flush whose BEGIN met another connection's lock. */
  private retryTimer: NodeJS.Timeout | undefined;
  private retries = 0;
  /** The connection's busy timeout as this class last set it. */
  private busyTimeoutSet: number;
  private readonly begin: BetterSqlite3.Statement;
  private readonly commit: BetterSqlite3.Statement;
  private readonly rollback: BetterSqlite3.Statement;
  private readonly scheduledFlush = (): void => this.flushWaiting();

  /**
   * `busyTimeoutMs`: how long a write may wait for another connection's lock, when it is not the
   * connection's busy timeout (the store's connection runs with 0 and waits asynchronously itself,
   * sqlite-busy-wait.ts).
   */
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly schedule: GroupCommitSchedule = (flush) => setImmediate(flush),
    busyTimeoutMs?: number,
  ) {
    // IMMEDIATE: the write lock is taken (or found taken) by the BEGIN, never by a later statement
    // inside the batch.
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.busyTimeoutSet = db.pragma('busy_timeout', { simple: true }) as number;
    this.busyTimeoutMs = busyTimeoutMs ?? this.busyTimeoutSet;
  }

  /** Writes waiting for the next commit. */
  get size(): number {
    return this.pending.length;
  }

  /** Runs `write` (synchronous, atomic by itself) in the next group commit; resolves with its result after the COMMIT. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
      // While a flush waits for the lock, its next try takes this write too.
      if (!this.scheduled && this.retryTimer === undefined) {
        this.scheduled = true;
        this.schedule(this.scheduledFlush);
      }
    });
  }

  /** Commits the pending writes now (a no-op when there are none), waiting in SQLite for a lock if it must. */
  flush(): void {
    this.scheduled = false;
    if (this.retryTimer !== undefined) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    if (this.pending.length === 0) return;
    this.retries = 0;
    const busy = this.attempt(0);
    if (busy === undefined || this.expire(busy) === 0) return;
    // The caller reads or closes next and cannot wait asynchronously: SQLite sleeps this once, up
    // to the time left of the oldest write; whatever is still pending after it gets the error.
    const again = this.attempt(Math.max(1, this.pending[0]!.deadline! - Date.now()));
    this.setBusyTimeout(0);
    if (again === undefined) return;
    const batch = this.pending;
    this.pending = [];
    for (const item of batch) item.reject(again);
  }

  /**
   * Settles once the writes called before it are committed (or have failed: their callers get the
   * error, not this): the commit is tried now and, while another connection holds the file's lock,
   * waited for asynchronously as the scheduled flush does. For a reader that must see those writes
   * without stopping the event loop (the embedded checkpointer's `getTuple`, at every run start).
   */
  committed(): Promise<void> {
    if (this.pending.length === 0) return Promise.resolve();
    const barrier = this.run(() => undefined).then(
      () => undefined,
      () => undefined,
    );
    this.flushWaiting();
    return barrier;
  }

  /**
   * Commits the pending writes now unless another connection holds the file's write lock; true
   * when nothing is left pending. When the lock is held they stay pending and the flush is tried
   * again after an asynchronous sleep, as the scheduled one is: for a caller that must not run a
   * statement ahead of them and can wait asynchronously when this returns false ({@link committed}).
   */
  commitIfUnlocked(): boolean {
    this.flushWaiting();
    return this.pending.length === 0;
  }

  /**
   * Commits what is pending ({@link flush}) and gives the connection its busy timeout back, for a
   * caller that runs statements on it synchronously itself (SqliteSaver's `list` and `deleteThread`,
   * a checkpoint rewinder, a close) and so can only let SQLite wait for a lock, as before. The next
   * flush sets it to 0 again.
   */
  forSynchronousUse(): BetterSqlite3.Database {
    this.flush();
    this.setBusyTimeout(this.busyTimeoutMs);
    return this.db;
  }

  /** The scheduled flush: when the file is locked, the writes stay pending and it tries again later. */
  private flushWaiting(): void {
    this.scheduled = false;
    if (this.retryTimer !== undefined) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
    if (this.pending.length === 0) return;
    const busy = this.attempt(0);
    if (busy === undefined || this.expire(busy) === 0) {
      this.retries = 0;
      return;
    }
    this.retryTimer = setTimeout(this.scheduledFlush, sqliteBusyBackoffMs(this.retries++));
  }

  /**
   * Dates the pending writes that met the lock for the first time and rejects those whose wait is
   * over (the oldest: they are dated in call order); returns how many still wait.
   */
  private expire(busy: unknown): number {
    const now = Date.now();
    let over = 0;
    for (const item of this.pending) {
      item.deadline ??= now + this.busyTimeoutMs;
      if (item.deadline <= now) over++;
    }
    if (over > 0) for (const item of this.pending.splice(0, over)) item.reject(busy);
    return this.pending.length;
  }

  /**
   * One try at committing every pending write, with the connection's busy timeout set to
   * `busyTimeoutMs`. Returns the SQLITE_BUSY error when the batch's BEGIN IMMEDIATE (or the lone
   * autocommit write) found the file locked, leaving the writes pending; else every write has been
   * settled (undefined).
   */
  private attempt(busyTimeoutMs: number): unknown {
    const batch = this.pending;
    this.pending = [];
    // Writes called by a write while it runs come after the batch.
    const keep = (busy: unknown, writes: PendingWrite[] = batch): unknown => {
      this.pending = this.pending.length === 0 ? writes : writes.concat(this.pending);
      return busy;
    };
    try {
      this.setBusyTimeout(busyTimeoutMs);
    } catch (error) {
      // The connection is closed (or unusable): as a write on it would, every caller gets the error.
      for (const item of batch) item.reject(error);
      return undefined;
    }
    if (batch.length === 1) {
      const [only] = batch as [PendingWrite];
      // Read before: a statement inside a transaction left open is never run again.
      const inTransaction = this.db.inTransaction;
      let value: unknown;
      try {
        value = only.write();
      } catch (err) {
        // In autocommit mode a write that met the lock changed nothing (its own `db.transaction`,
        // if it is one, was rolled back by better-sqlite3): it waits.
        if (!inTransaction && isSqliteBusy(err) && !this.db.inTransaction) return keep(err);
        only.reject(err);
        return undefined;
      }
      only.resolve(value);
      return undefined;
    }
    // A write after which SQLite rolled the whole transaction back (disk full, an I/O error, out
    // of memory) is rejected alone and the rest of the batch is run again in a new transaction, as
    // if that write had not been called: each round drops one write, so this ends.
    let rest = batch;
    for (;;) {
      try {
        this.begin.run();
      } catch (error) {
        // A BEGIN that failed opened nothing: a transaction open then is not this batch's to roll
        // back, and one that met the lock (another connection's, taken after a rollback too)
        // changed nothing, so the batch waits.
        if (isSqliteBusy(error)) return keep(error, rest);
        for (const item of rest) item.reject(error);
        return undefined;
      }
      const outcome = this.runInTransaction(rest);
      if (outcome.rolledBackBy === undefined) return undefined;
      const culprit = outcome.rolledBackBy;
      rest[culprit]!.reject(outcome.error);
      rest = rest.filter((_, i) => i !== culprit);
      if (rest.length === 0) return undefined;
    }
  }

  /**
   * Runs `batch` inside the open transaction and commits it, settling every write; except when a
   * write's failure made SQLite roll the whole transaction back: then nothing is settled and the
   * index of that write is returned with its error, for {@link attempt} to run the rest again.
   */
  private runInTransaction(batch: PendingWrite[]): { rolledBackBy?: number; error?: unknown } {
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      for (let i = 0; i < batch.length; i++) {
        try {
          results.push({ ok: true, value: batch[i]!.write() });
        } catch (error) {
          if (!this.db.inTransaction) return { rolledBackBy: i, error };
          results.push({ ok: false, error });
        }
      }
      this.commit.run();
    } catch (error) {
      if (this.db.inTransaction) {
        try {
          this.rollback.run();
        } catch {
          // The connection is unusable; the callers get the error that caused it.
        }
      }
      for (const item of batch) item.reject(error);
      return {};
    }
    batch.forEach((item, i) => {
      const r = results[i]!;
      if (r.ok) item.resolve(r.value);
      else item.reject(r.error);
    });
    return {};
  }

  /**
   * Only when it changes: SQLite applies `PRAGMA busy_timeout = N` when the statement is prepared,
   * so a prepared one run again does nothing, and each change costs a prepare (~5 µs).
   */
  private setBusyTimeout(ms: number): void {
    if (ms === this.busyTimeoutSet) return;
    this.db.pragma(`busy_timeout = ${Math.ceil(ms)}`);
    this.busyTimeoutSet = ms;
  }
}
