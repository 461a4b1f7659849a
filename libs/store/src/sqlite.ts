import BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { SqlStore } from './sql-store.js';
import { cachePreparedStatements } from './statement-cache.js';
import { SqliteGroupCommit } from './group-commit.js';
import { busyWaitingSqliteDialect, type KyselyUse } from './sqlite-busy-wait.js';
import { runDirectlyOn } from './prepared-query.js';
import type { Store } from './types.js';

export interface SqliteStoreOptions {
  /** Database file, or `:memory:` for a private in-memory database. */
  path: string;
  /** How long a statement waits for another connection's write lock (default 5000 ms). */
  busyTimeoutMs?: number;
  /** How long `migrate()` retries while another process migrates the same file (default 60 s). */
  migrateTimeoutMs?: number;
  /** This connection's automatic WAL checkpoint threshold in pages (SQLite's default 1,000; wal-checkpointer.ts). */
  walAutocheckpointPages?: number;
}

/**
 * The embedded-mode store: one SQLite file in WAL mode (readers never block the
 * writer), with a busy timeout so several processes can share the file. SQLite's own busy
 * timeout is 0: the wait for another connection's lock is asynchronous (sqlite-busy-wait.ts).
 */
export function createSqliteStore(opts: SqliteStoreOptions): Store {
  const sqlite = new BetterSqlite3(opts.path);
  const busyTimeoutMs = Math.max(0, Math.floor(opts.busyTimeoutMs ?? 5000));
  sqlite.pragma('busy_timeout = 0');
  sqlite.pragma('journal_mode = WAL');
  // Safe with WAL: a crash loses at most the last commits, never corrupts.
  sqlite.pragma('synchronous = NORMAL');
  if (opts.walAutocheckpointPages !== undefined) sqlite.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(opts.walAutocheckpointPages))}`);
  // Writes that may share a commit (prepared-query.ts groupCommit) wait for another connection's
  // lock as long as the store's statements do.
  const group = new SqliteGroupCommit(sqlite, undefined, busyTimeoutMs);
  const use: KyselyUse = { users: 0, group };
  const db = new Kysely<Database>({ dialect: busyWaitingSqliteDialect(cachePreparedStatements(sqlite), busyTimeoutMs, use) });
  runDirectlyOn(db, sqlite, use);
  // Kysely's destroy closes the connection only if its executor ran a query: a store used only
  // through prepared statements (the direct path) is committed and closed here.
  const onClose = async (): Promise<void> => {
    if (!sqlite.open) return;
    await group.committed();
    sqlite.close();
  };
  return new SqlStore({ dialect: 'sqlite', db, onClose, ...(opts.migrateTimeoutMs !== undefined ? { migrateTimeoutMs: opts.migrateTimeoutMs } : {}) });
}
