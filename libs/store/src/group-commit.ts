import type BetterSqlite3 from 'better-sqlite3';

/** When the pending writes are committed; by default the event loop's check phase (`setImmediate`). */
export type GroupCommitSchedule = (flush: () => void) => void;

interface PendingWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
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
 *   that statement only) rejects its own caller; the others still commit. When SQLite rolled the
 *   whole transaction back (I/O error, disk full, SQLITE_BUSY), or the COMMIT fails, every caller of
 *   the batch gets the error and none of the batch is in the file.
 * - {@link flush} commits what is pending at once: call it before reading what those writes wrote on
 *   this connection, before a write that must follow them, and before closing the connection.
 */
export class SqliteGroupCommit {
  private pending: PendingWrite[] = [];
  private scheduled = false;
  private readonly begin: BetterSqlite3.Statement;
  private readonly commit: BetterSqlite3.Statement;
  private readonly rollback: BetterSqlite3.Statement;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly schedule: GroupCommitSchedule = (flush) => setImmediate(flush),
  ) {
    // IMMEDIATE: the write lock is taken (or waited for, with the connection's busy timeout) by the
    // BEGIN, never by a later statement inside the batch.
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /** Writes waiting for the next commit. */
  get size(): number {
    return this.pending.length;
  }

  /** Runs `write` (synchronous, atomic by itself) in the next group commit; resolves with its result after the COMMIT. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        this.schedule(() => this.flush());
      }
    });
  }

  /** Commits the pending writes now (a no-op when there are none). */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    if (batch.length === 1) {
      const [only] = batch as [PendingWrite];
      try {
        only.resolve(only.write());
      } catch (err) {
        only.reject(err);
      }
      return;
    }
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    let began = false;
    try {
      this.begin.run();
      began = true;
      for (const item of batch) {
        try {
          results.push({ ok: true, value: item.write() });
        } catch (error) {
          // SQLite rolled the whole transaction back: nothing of this batch will be committed.
          if (!this.db.inTransaction) throw error;
          results.push({ ok: false, error });
        }
      }
      this.commit.run();
    } catch (error) {
      // A BEGIN that failed opened nothing: a transaction open then is not this batch's to roll back.
      if (began && this.db.inTransaction) {
        try {
          this.rollback.run();
        } catch {
          // The connection is unusable; the callers get the error that caused it.
        }
      }
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const r = results[i]!;
      if (r.ok) item.resolve(r.value);
      else item.reject(r.error);
    });
  }
}
