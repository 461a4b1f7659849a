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
 */
import { CompiledQuery, SqliteDialect, type DatabaseConnection, type Dialect, type Driver, type QueryResult, type TransactionSettings } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import { sleep } from '@agentloop/core';
import { isSqliteBusy } from './repositories/rows.js';

/**
 * A compiled statement run at once on the connection, outside Kysely's executor (prepared-query.ts
 * uses it for the hot statements, issue 9). Kysely's path around one statement — executor,
 * connection provider, the SQLite driver's connection mutex, each an `async` step — cost ~3.5 µs
 * CPU of a hot statement's ~6 µs on a cached prepared statement, better-sqlite3's call ~2.5 µs.
 */
export interface DirectSqliteQueries {
  /**
   * The statement's result, run now; or undefined when it must go through Kysely instead: the
   * connection is held or awaited (a transaction, a statement queued in the mutex — running now
   * would put it inside that transaction, or before statements issued earlier), a transaction is
   * open, or another connection holds the write lock (Kysely's path waits for it; a statement that
   * failed with SQLITE_BUSY in autocommit mode changed nothing).
   */
  tryRun<R>(query: CompiledQuery): Promise<QueryResult<R>> | undefined;
}

/** Kysely's SQLite dialect over `sqlite` (opened with `busy_timeout = 0`), waiting up to `busyTimeoutMs` for a lock. */
export function busyWaitingSqliteDialect(sqlite: BetterSqlite3.Database, busyTimeoutMs: number): Dialect & { readonly direct: DirectSqliteQueries } {
  const inner = new SqliteDialect({ database: sqlite });
  // The driver of the Kysely instance made with this dialect (its transactions share it).
  let driver: BusyWaitingDriver | undefined;
  return {
    createAdapter: () => inner.createAdapter(),
    createDriver: () => (driver = new BusyWaitingDriver(inner.createDriver(), sqlite, busyTimeoutMs)),
    createIntrospector: (db) => inner.createIntrospector(db),
    createQueryCompiler: () => inner.createQueryCompiler(),
    direct: { tryRun: (query) => driver?.tryRun(query) },
  };
}

class BusyWaitingDriver implements Driver {
  private readonly wrapped = new WeakMap<DatabaseConnection, DatabaseConnection>();
  /**
   * Connections acquired and not yet released, or being waited for. Kysely asks for the
   * connection synchronously when a query or transaction starts (its SQLite driver's mutex
   * queues the asks in order), so zero means nothing holds the connection or is queued for it.
   */
  private claims = 0;

  constructor(
    private readonly inner: Driver,
    private readonly sqlite: BetterSqlite3.Database,
    private readonly busyTimeoutMs: number,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    this.claims++;
    let conn: DatabaseConnection;
    try {
      conn = await this.inner.acquireConnection();
    } catch (err) {
      this.claims--;
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
    this.claims--;
    return this.inner.releaseConnection(conn);
  }

  /** See DirectSqliteQueries; the result is Kysely's SQLite connection's, built the same way. */
  tryRun<R>(query: CompiledQuery): Promise<QueryResult<R>> | undefined {
    if (this.claims > 0 || this.sqlite.inTransaction) return undefined;
    try {
      const stmt = this.sqlite.prepare(query.sql);
      if (stmt.reader) return Promise.resolve({ rows: stmt.all(query.parameters) as R[] });
      const { changes, lastInsertRowid } = stmt.run(query.parameters);
      return Promise.resolve({ numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] });
    } catch (err) {
      if (isSqliteBusy(err)) return undefined;
      return Promise.reject(err as Error);
    }
  }

  destroy(): Promise<void> {
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
      return this.retry<R>(query, Date.now() + this.busyTimeoutMs);
    }
  }

  private async retry<R>(query: CompiledQuery, deadline: number): Promise<QueryResult<R>> {
    for (let attempt = 0; ; attempt++) {
      if (Date.now() >= deadline) return this.inner.executeQuery<R>(query);
      await sleep(Math.min(1 + attempt, 10) + Math.random() * 5);
      try {
        return await this.inner.executeQuery<R>(query);
      } catch (err) {
        if (!isSqliteBusy(err)) throw err;
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}
