import { Kysely, MysqlDialect } from 'kysely';
import { createPool } from 'mysql2';
import { ConfigError } from '@agentloop/core';
import type { Database } from './schema.js';
import { SqlStore } from './sql-store.js';
import type { Store } from './types.js';

export interface MysqlStoreOptions {
  /** `mysql://user:password@host:port/database` (MySQL 8 or MariaDB 10.6+). */
  url: string;
  /** Pool size (default 10). */
  connectionLimit?: number;
  /** Called with the SQL text of each query sent, one per round trip (tests count them). */
  onQuery?: (sqlText: string) => void;
}

/** The session's sql_mode without NO_BACKSLASH_ESCAPES, the rest as the server set it. */
const WITHOUT_NO_BACKSLASH_ESCAPES = "SET SESSION sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), ',NO_BACKSLASH_ESCAPES,', ','))";

/** The cluster-mode store over a mysql2 connection pool (connections are opened lazily). */
export function createMysqlStore(opts: MysqlStoreOptions): Store {
  let url: URL;
  try {
    url = new URL(opts.url);
  } catch (err) {
    throw new ConfigError(`Invalid MySQL URL (expected mysql://user:password@host:port/database)`, { cause: err });
  }
  if (url.protocol !== 'mysql:' || url.pathname.length <= 1) {
    throw new ConfigError(`Invalid MySQL URL ${url.protocol}//${url.host}${url.pathname}: expected mysql://user:password@host:port/database`);
  }
  const pool = createPool({
    uri: opts.url,
    connectionLimit: opts.connectionLimit ?? 10,
    charset: 'utf8mb4',
    // BIGINT millisecond timestamps fit in a double; keep them numbers.
    supportBigNumbers: true,
    bigNumberStrings: false,
    // A run's start and end each travel as one packet of several statements (run-lifecycle.ts,
    // issue 9). Every statement's values are parameters, so this admits no statement a value could
    // smuggle in; the checkpointer's pool has it too (checkpoint-mysql saver.ts).
    multipleStatements: true,
  });
  // mysql2 escapes the values it interpolates with backslashes. A server whose sql_mode has
  // NO_BACKSLASH_ESCAPES reads them as text, so a quote in a value would end its string — with
  // multipleStatements, the start of another statement. Each connection turns the flag off for
  // itself before its first query (the handler's query is queued ahead of it); one that cannot
  // is destroyed, so nothing runs under the wrong mode.
  pool.on('connection', (conn) => {
    conn.query(WITHOUT_NO_BACKSLASH_ESCAPES, (err) => {
      if (err) conn.destroy();
    });
  });
  const onQuery = opts.onQuery;
  const db = new Kysely<Database>({ dialect: new MysqlDialect({ pool }), ...(onQuery ? { log: (e) => onQuery(e.query.sql) } : {}) });
  return new SqlStore({ dialect: 'mysql', db });
}
