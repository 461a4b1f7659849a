/**
 * Waiting for another SQLite connection's lock without blocking the thread (issue 9).
 *
 * better-sqlite3 is synchronous: with a connection `busy_timeout`, a statement that finds the file
 * locked by another connection (another process, or an `EMBEDDED_THREADS=orchestrator` thread's
 * connection in this process) sleeps inside SQLite, and the thread's whole event loop stops with
 * it. The store's, the checkpoint's and the queue's connections therefore try a statement with
 * `busy_timeout = 0` and, when it fails with SQLITE_BUSY, try it again after an asynchronous sleep
 * until their busy timeout has passed.
 *
 * Why a retry is safe only outside a transaction: a statement run in autocommit mode, or a BEGIN,
 * that fails with SQLITE_BUSY changed nothing, so running it again is the same as having waited for
 * the lock. Inside an open transaction SQLite may already have rolled the transaction back, and
 * running the statement again on its own would commit it outside its transaction; that error goes
 * to the caller. Each caller of these helpers checks that before it retries.
 *
 * This file is the one owner of what counts as "busy" and of the backoff; libs/store and
 * libs/queue (which do not depend on each other) both use it.
 */
import { sleep } from './ids.js';

/** Whether `err` is SQLite's "the file is locked by another connection" (SQLITE_BUSY*, SQLITE_LOCKED*). */
export function isSqliteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/**
 * The sleep before the `retry`-th retry (0 first) of a statement that met another connection's
 * lock: 1 ms doubling to 20 ms. A write lock is held for one transaction (well under a millisecond
 * to a few), so the first retries come soon; the cap keeps a long wait from costing a wake-up per
 * millisecond. ±25% so that two waiters do not keep retrying in step.
 */
export function sqliteBusyBackoffMs(retry: number): number {
  return Math.min(20, 2 ** Math.min(retry, 5)) * (0.75 + Math.random() * 0.5);
}

/**
 * Runs `attempt` again after asynchronous sleeps (sqliteBusyBackoffMs) while it fails with
 * SQLITE_BUSY, until `deadline` (a `Date.now()` time) has passed; then its last error is thrown.
 * For an attempt that has already failed once with SQLITE_BUSY and changes nothing when it does:
 * a read, or a statement run in autocommit mode (see above).
 */
export async function retryWhileSqliteBusy<T>(attempt: () => T | Promise<T>, deadline: number): Promise<T> {
  for (let retry = 0; ; retry++) {
    await sleep(sqliteBusyBackoffMs(retry));
    try {
      return await attempt();
    } catch (err) {
      if (!isSqliteBusy(err) || Date.now() >= deadline) throw err;
    }
  }
}
