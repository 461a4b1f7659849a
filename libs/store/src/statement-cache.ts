import BetterSqlite3 from 'better-sqlite3';

/** Distinct SQL texts kept prepared per database; beyond it the least recently used is dropped. */
export const DEFAULT_STATEMENT_CACHE_SIZE = 256;

/**
 * Makes `db.prepare(sql)` reuse the statement already prepared for the same SQL text. Kysely's
 * SQLite driver and LangGraph's SqliteSaver prepare every statement on every query; parsing and
 * planning the SQL again each time was a tenth of an embedded run's CPU (issue 9, bench/throughput).
 *
 * Reuse is safe because better-sqlite3 is synchronous: a statement finishes `run`/`all`/`get`
 * before anything else can use it. The one exception is a statement still being iterated
 * (`iterate()`, its `busy` flag): then a fresh one is prepared, as before. Statement modes
 * (`raw`, `pluck`, `expand`, `safeIntegers`) would stick to a shared statement; neither caller
 * sets them, and a caller that does must not use this cache.
 */
export function cachePreparedStatements(db: BetterSqlite3.Database, maxSize = DEFAULT_STATEMENT_CACHE_SIZE): BetterSqlite3.Database {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, BetterSqlite3.Statement>();
  const cached = (sql: string): BetterSqlite3.Statement => {
    const hit = cache.get(sql);
    if (hit && !hit.busy) {
      // Map order is insertion order: re-inserting keeps the most recently used last.
      cache.delete(sql);
      cache.set(sql, hit);
      return hit;
    }
    const stmt = prepare(sql);
    if (!hit) {
      cache.set(sql, stmt);
      if (cache.size > maxSize) cache.delete(cache.keys().next().value!);
    }
    return stmt;
  };
  db.prepare = cached as BetterSqlite3.Database['prepare'];
  return db;
}

/**
 * Opens the embedded checkpoint database (LangGraph's SqliteSaver, which prepares its statements
 * per call) with those statements cached and the same durability settings as the store and the
 * queue: WAL, `synchronous = NORMAL`, a busy timeout.
 *
 * SqliteSaver itself only switches to WAL, leaving SQLite's default `synchronous = FULL`: an fsync
 * of the WAL on every commit, ~0.25 ms of this machine's main thread per checkpoint write, and a
 * run writes ~11 of them (issue 9, bench/throughput README). With NORMAL in WAL mode a commit
 * survives the process being killed (it is in the OS's page cache before `run` returns); only an OS
 * crash or power loss can drop the last commits, never corrupt the file — and the store and the
 * queue, written in the same steps, already run that way, so FULL here bought no consistent state.
 * The busy timeout matters when a second connection of this process writes the file
 * (`EMBEDDED_THREADS=orchestrator`: the gateway rolls checkpoints back while the worker writes).
 * It is how long a write waits for the other connection's lock: the embedded saver's group commit
 * (group-commit.ts) reads it and waits that long asynchronously, with `busy_timeout = 0` on the
 * connection, since SQLite's own wait would stop the thread's event loop (issue 9); the saver's
 * synchronous users of `db` get it back and let SQLite wait, as before.
 */
export function openCheckpointSqlite(file: string, busyTimeoutMs = 5000, walAutocheckpointPages?: number): BetterSqlite3.Database {
  const db = new BetterSqlite3(file);
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  if (file !== ':memory:') db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // A WalCheckpointer's files (wal-checkpointer.ts): the writer checkpoints itself only past this.
  if (walAutocheckpointPages !== undefined) db.pragma(`wal_autocheckpoint = ${Math.max(0, Math.floor(walAutocheckpointPages))}`);
  return cachePreparedStatements(db);
}
