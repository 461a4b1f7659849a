/**
 * The store's write primitives, apart from any table: `RunLifecycle` (through `Store`) and the
 * audit repository need the same transaction on the same Kysely instance, and on SQLite the
 * same remembered busy timeout, so one `SqlWriter` per `SqlStore` serves both.
 */
import { sql, type Kysely } from 'kysely';
import { sleep } from '@agentloop/core';
import type { Database, SqlDialectName } from './schema.js';
import { isSqliteBusy } from './repositories/rows.js';

export class SqlWriter {
  /** The connection's busy_timeout as configured (see sqliteImmediate). */
  private sqliteBusyTimeoutMs: number | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlDialectName,
  ) {}

  /** See `Store.writeStatement`: one statement is atomic by itself, no BEGIN/COMMIT around it. */
  writeStatement<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return fn(this.db);
  }

  /** See `Store.writeTransaction`. */
  async writeTransaction<T>(fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    if (this.dialect === 'sqlite') return this.sqliteImmediate(fn);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute(fn);
      } catch (err) {
        // Deadlock or lock wait timeout: the transaction was rolled back; try again.
        const errno = (err as { errno?: number }).errno;
        if ((errno === 1213 || errno === 1205) && attempt < 10) {
          await sleep(5 + Math.random() * 20 * attempt);
          continue;
        }
        throw err;
      }
    }
  }

  /**
   * SQLite: one transaction that takes the write lock up front (BEGIN IMMEDIATE), so writers on
   * several connections to one file queue instead of failing on a lock upgrade. better-sqlite3 is
   * synchronous: a busy timeout would block this whole process while another connection of the
   * same process holds the lock, so the wait for the lock is done asynchronously instead.
   */
  sqliteImmediate<T>(fn: (conn: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.connection().execute(async (conn) => {
      const deadline = Date.now() + 30_000;
      // Read once: only this method changes it, and it always puts it back (a statement less per transaction).
      this.sqliteBusyTimeoutMs ??= (await sql<{ timeout: number }>`pragma busy_timeout`.execute(conn)).rows[0]?.timeout ?? 5000;
      const saved = this.sqliteBusyTimeoutMs;
      await sql.raw('pragma busy_timeout = 0').execute(conn);
      try {
        for (;;) {
          try {
            await sql`begin immediate`.execute(conn);
            break;
          } catch (err) {
            if (!isSqliteBusy(err) || Date.now() > deadline) throw err;
            await sleep(2 + Math.random() * 10);
          }
        }
      } finally {
        await sql.raw(`pragma busy_timeout = ${Math.max(0, Math.floor(Number(saved)))}`).execute(conn);
      }
      try {
        const out = await fn(conn);
        await sql`commit`.execute(conn);
        return out;
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw err;
      }
    });
  }
}
