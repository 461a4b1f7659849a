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
 * Opens a SQLite file for a component that prepares its statements per call (LangGraph's
 * SqliteSaver in embedded mode) with those statements cached.
 */
export function openCachedSqlite(file: string): BetterSqlite3.Database {
  return cachePreparedStatements(new BetterSqlite3(file));
}
