/**
 * The store's write primitives, apart from any table: `RunLifecycle` (through `Store`) and the
 * audit and assistant repositories need the same transaction on the same Kysely instance, so one
 * `SqlWriter` per `SqlStore` serves them all.
 */
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
import { sleep } from '@agentloop/core';
import type { Database, SqlDialectName } from './schema.js';
import { isSqliteBusy } from './repositories/rows.js';
import { runsInItsTransaction } from './prepared-query.js';

// Compiled once: every run's admission and end is a transaction (issue 9).
const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

export class SqlWriter {
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
    return retryingLockConflicts(() => this.db.transaction().execute(fn));
  }

  /**
   * SQLite: one transaction that takes the write lock up front (BEGIN IMMEDIATE), so writers on
   * several connections to one file queue instead of failing on a lock upgrade. The store's
   * connection has `busy_timeout = 0` and its driver waits for a lock asynchronously
   * (sqlite-busy-wait.ts), since a synchronous wait would stop this whole process; this loop
   * only lets a transaction keep waiting past that busy timeout, up to 30 s.
   */
  sqliteImmediate<T>(fn: (conn: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.connection().execute(async (conn) => {
      const deadline = Date.now() + 30_000;
      for (;;) {
        try {
          await conn.executeQuery(BEGIN_IMMEDIATE);
          break;
        } catch (err) {
          if (!isSqliteBusy(err) || Date.now() > deadline) throw err;
          await sleep(2 + Math.random() * 10);
        }
      }
      // Its prepared statements run on the connection at their call (prepared-query.ts), until the COMMIT or ROLLBACK.
      const holder = runsInItsTransaction(conn);
      try {
        const out = await fn(conn);
        holder.end();
        await conn.executeQuery(COMMIT);
        return out;
      } catch (err) {
        holder.end();
        await conn.executeQuery(ROLLBACK).catch(() => undefined);
        throw err;
      }
    });
  }
}

/** MySQL: runs `fn` again (up to 10 times) when it fails on a deadlock or a lock wait timeout, after which its transaction was rolled back. */
async function retryingLockConflicts<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
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
 * MySQL: `statements` as one transaction sent in one packet (the store's pool has
 * `multipleStatements`, mysql.ts): START TRANSACTION, the statements, COMMIT, one round trip where
 * a transaction of n statements took n + 2 (issue 9). Whatever the statements decide between them
 * (user variables, `row_count()`) is decided by the server inside the transaction, as a client
 * reading results between statements would. MySQL stops a packet at its first failing statement,
 * leaving the transaction open on the connection: it is rolled back there before the connection
 * goes back to the pool, and a deadlock or lock wait timeout is retried as `writeTransaction` does.
 * Returns each statement's result, in order, the START TRANSACTION's first (mysql2's: the rows of a
 * select, a result header for the others).
 */
export function mysqlTransactionPacket(db: Kysely<Database>, statements: RawBuilder<unknown>[]): Promise<unknown[]> {
  const packet = sql.join([sql`start transaction`, ...statements, sql`commit`], sql`; `);
  return retryingLockConflicts(() =>
    db.connection().execute(async (conn) => {
      try {
        return (await packet.execute(conn)).rows;
      } catch (err) {
        await sql`rollback`.execute(conn).catch(() => undefined);
        throw err;
      }
    }),
  );
}
