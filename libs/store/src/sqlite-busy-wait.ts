/**
 * Waiting for another connection's SQLite write lock without blocking the process.
 *
 * better-sqlite3 is synchronous: with a connection `busy_timeout`, a statement that finds the file
 * locked by another connection (another process, or `EMBEDDED_THREADS=orchestrator`'s second
 * connection in this process) sleeps inside SQLite and the whole event loop stops with it. The
 * store's connection therefore runs with `busy_timeout = 0`, set once when it is opened, and this
 * Kysely driver does the waiting instead: a statement that fails with SQLITE_BUSY while no
 * transaction was open is retried after an asynchronous sleep, until the store's busy timeout has
 * passed. It used to be done by setting `busy_timeout` to 0 and back around every BEGIN IMMEDIATE,
 * two statements more per write transaction (issue 9, bench/throughput/embedded-cost.ts).
 *
 * Why a retry is safe only outside a transaction: a statement run in autocommit mode (or a BEGIN)
 * that fails with SQLITE_BUSY changed nothing, so running it again is the same as having waited for
 * the lock. Inside an open transaction SQLite may already have rolled the transaction back, and
 * running the statement again on its own would commit it outside its transaction; that error goes
 * to the caller. Write transactions begin with BEGIN IMMEDIATE (SqlWriter), so they take the lock
 * in their first statement and do not meet SQLITE_BUSY after it.
 *
 * The backoff and what counts as busy are libs/core's (sqlite-busy.ts), shared with the checkpoint
 * connection's group commit and the queue's connection, which wait the same way (issue 9).
 */
import { CompiledQuery, SqliteDialect, type DatabaseConnection, type Dialect, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import { isSqliteBusy, retryWhileSqliteBusy } from '@agentloop/core';
import type { SqliteGroupCommit } from './group-commit.js';

/**
 * How many of Kysely's callers want or hold the connection: up when one asks for it, down when it
 * gives it back. While it is not 0, a prepared statement does not run on the connection directly
 * (prepared-query.ts runDirectlyOn): it queues behind them, so statements keep the order they were
 * issued in (a transaction begun but not yet open, a query waiting out another connection's lock).
 */
export interface KyselyUse {
  users: number;
  /**
   * The connection's group commit of the statements that may share a commit (prepared-query.ts
   * `groupCommit`): a caller of Kysely's path waits for its pending writes before it gets the
   * connection, so it never runs ahead of them, nor opens a transaction they would be committed in.
   */
  group?: SqliteGroupCommit;
}

/** Kysely's SQLite dialect over `sqlite` (opened with `busy_timeout = 0`), waiting up to `busyTimeoutMs` for a lock. */
export function busyWaitingSqliteDialect(sqlite: BetterSqlite3.Database, busyTimeoutMs: number, use: KyselyUse = { users: 0 }): Dialect {
  const inner = new SqliteDialect({ database: sqlite });
  return {
    createAdapter: () => inner.createAdapter(),
    createDriver: () => new BusyWaitingDriver(inner.createDriver(), sqlite, busyTimeoutMs, use),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
  };
}

class BusyWaitingDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly sqlite: BetterSqlite3.Database,
    private readonly busyTimeoutMs: number,
    private readonly use: KyselyUse,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.use.users++;
    let conn: DatabaseConnection;
    try {
      // Grouped writes issued before this caller commit first (while users > 0 none is added).
      if (this.use.group !== undefined && this.use.group.size > 0) await this.use.group.committed();
      conn = await this.inner.acquireConnection();
    } catch (err) {
      this.use.users--;
      throw err;
    }
    let out = this.wrapped.get(conn);
    if (!out) {
      out = new BusyWaitingConnection(conn, this.sqlite, this.busyTimeoutMs);
      this.wrapped.set(conn, out);
    }
    return out;
  }

  beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(conn, settings);
  }

  commitTransaction(conn: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(conn);
  }

  rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(conn);
  }

  async savepoint(conn: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['savepoint']>>[2]): Promise<void> {
    await this.inner.savepoint!(conn, name, compile);
  }

  async rollbackToSavepoint(conn: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['rollbackToSavepoint']>>[2]): Promise<void> {
    await this.inner.rollbackToSavepoint!(conn, name, compile);
  }

  async releaseSavepoint(conn: DatabaseConnection, name: string, compile: Parameters<NonNullable<Driver['releaseSavepoint']>>[2]): Promise<void> {
    await this.inner.releaseSavepoint!(conn, name, compile);
  }

  releaseConnection(conn: DatabaseConnection): Promise<void> {
    this.use.users--;
    return this.inner.releaseConnection(conn);
  }

  async destroy(): Promise<void> {
    // Closing commits what is pending, as closing a connection after an autocommit write would.
    if (this.use.group !== undefined && this.use.group.size > 0) await this.use.group.committed();
    return this.inner.destroy();
  }
}

class BusyWaitingConnection implements DatabaseConnection {
  constructor(
    private readonly inner: DatabaseConnection,
    private readonly sqlite: BetterSqlite3.Database,
    private readonly busyTimeoutMs: number,
  ) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // Read before running: after a failure SQLite may have ended the transaction itself.
    if (this.sqlite.inTransaction) return this.inner.executeQuery<R>(query);
    // Kysely's SQLite connection runs the statement synchronously and throws: the common case
    // (no lock in the way) costs no extra promise here.
    try {
      return this.inner.executeQuery<R>(query);
    } catch (err) {
      if (!isSqliteBusy(err)) throw err;
      return retryWhileSqliteBusy(() => this.inner.executeQuery<R>(query), Date.now() + this.busyTimeoutMs);
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}
