/**
 * A Kysely query built and compiled once, then run with new values: for the statements a run makes
 * per run or per step (issue 9). Building a query (its frozen operation-node tree) and compiling it
 * (the compiler's node visitor) was ~1.3 ms of Kysely's own JavaScript per embedded run, more than
 * SQLite took to run the statements (bench/throughput README). Only the hot queries use this; every
 * other query stays an ordinary builder chain.
 *
 * The query is written once as an ordinary, typed builder chain over named parameters:
 *
 *   const getRun = preparedQuery((db, p: { tenantId: string; runId: string }) =>
 *     db.selectFrom('runs').selectAll().where('tenant_id', '=', p.tenantId).where('run_id', '=', p.runId));
 *   const row = await getRun.first(db, { tenantId, runId });
 *
 * `p` hands the builder a marker object per name; compiling puts the markers among the statement's
 * parameters, in whatever order the dialect's compiler emits them, and each later call substitutes
 * the values by name — so values cannot be passed in the wrong order, and a name used twice gets
 * its value twice. A marker the compiler inlined into the SQL text instead of passing it as a
 * parameter (`sql.raw`, `sql.lit`) is refused at the first compile: its value would be frozen.
 *
 * Compiled once per Kysely instance (per store): SQLite and MySQL quote identifiers differently and
 * MySQL has no `RETURNING`, so the SQL text is the dialect's own. A transaction of the instance
 * shares its compiled text. The compiled query keeps its operation tree and id, so the executor
 * runs it exactly as it would have run the builder's (the instance's plugins applied when it was
 * compiled; the store configures none, and one added later with `withPlugin` would not apply) — on
 * SQLite the statement cache then finds the prepared statement by text.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';
import { AgentLoopError } from '@agentloop/core';
import { isSqliteBusy } from './repositories/rows.js';
import type { KyselyUse } from './sqlite-busy-wait.js';
import type { Database } from './schema.js';

/** Stands for a named value while the query is compiled. */
class Slot {
  constructor(readonly name: string) {}
}

/** A parameter of the compiled statement: a constant the builder was given, or a named value. */
type Binding = { constant: unknown } | { name: string };

interface Template {
  compiled: CompiledQuery;
  bindings: Binding[];
  /** The instance's SQLite connection when it may run the statement itself (see runDirectlyOn). */
  direct: DirectConnection | undefined;
}

interface DirectConnection {
  sqlite: BetterSqlite3.Database;
  /** Kysely's callers wanting or holding the connection (sqlite-busy-wait.ts KyselyUse). */
  use: KyselyUse;
}

/** Kysely instances (by adapter, shared with their transactions) whose prepared queries may run on the connection itself. */
const directConnections = new WeakMap<object, DirectConnection>();

/**
 * Lets the prepared queries of `db`, a Kysely instance over the one better-sqlite3 connection
 * `sqlite`, run on that connection directly when nobody else is using it, instead of through
 * Kysely's executor: the same compiled SQL, statement (statement-cache.ts) and result, without the
 * connection provider, its mutex and the ~8 promises of each query — each promise also tagged by
 * the process's AsyncLocalStorage hook. A run makes ~25 store statements (issue 9,
 * bench/throughput README "Store statements without Kysely's executor; checkpoint writes without promises").
 *
 * What keeps it equivalent: better-sqlite3 runs a statement synchronously, so nothing interleaves
 * with it; and it runs directly only when no transaction is open on the connection (SQLite's
 * `inTransaction`) and no caller of Kysely's path wants or holds it (`use`, counted by the
 * dialect's driver). Otherwise it goes through Kysely and takes its turn, as before: so it never
 * joins another caller's transaction (nor is undone by its rollback), and never overtakes a
 * statement or transaction issued before it (a transaction begun but not yet open, a query waiting
 * out another connection's lock). A statement that finds the file locked by another connection
 * (SQLITE_BUSY: it changed nothing) is handed to Kysely's path, which waits for the lock
 * (sqlite-busy-wait.ts). Only for a store's own instance: the dialect configures no plugin, whose
 * result transforms this path would skip.
 */
export function runDirectlyOn(db: Kysely<Database>, sqlite: BetterSqlite3.Database, use: KyselyUse): void {
  directConnections.set(db.getExecutor().adapter, { sqlite, use });
}

/** Connection-bound instances (`db.connection()`) inside the write transaction they opened (see runsInItsTransaction). */
const transactionHolders = new WeakSet<object>();

/**
 * Marks `conn`, the connection-bound instance a SQLite write transaction runs its statements on
 * (write-transaction.ts `sqliteImmediate`), as the holder of the transaction open on the
 * connection from now until `end` is called: its prepared queries then run on the connection
 * directly too — they are that transaction's statements, in the order they are issued — while
 * everyone else's still wait for the transaction to end.
 */
export function runsInItsTransaction(conn: Kysely<Database>): { end: () => void } {
  transactionHolders.add(conn);
  return { end: () => transactionHolders.delete(conn) };
}

/** Kysely's SQLite driver's result of `stmt` run with `parameters` (kysely/dist/esm/dialect/sqlite/sqlite-driver.js). */
function runSqlite<O>(sqlite: BetterSqlite3.Database, sql: string, parameters: readonly unknown[]): QueryResult<O> {
  const stmt = sqlite.prepare(sql);
  if (stmt.reader) return { rows: stmt.all(parameters) as O[] };
  const { changes, lastInsertRowid } = stmt.run(parameters);
  return {
    numAffectedRows: changes !== undefined && changes !== null ? BigInt(changes) : undefined,
    insertId: lastInsertRowid !== undefined && lastInsertRowid !== null ? BigInt(lastInsertRowid) : undefined,
    rows: [],
  };
}

export interface PreparedQuery<P extends object, O> {
  /** Runs the statement with `params` on `db` (the store's instance or one of its transactions). */
  execute(db: Kysely<Database>, params: P): Promise<QueryResult<O>>;
  /** Its rows. */
  rows(db: Kysely<Database>, params: P): Promise<O[]>;
  /** Its first row, if any (`executeTakeFirst` of a select or a `returning`). */
  first(db: Kysely<Database>, params: P): Promise<O | undefined>;
  /** Rows inserted, updated or deleted (Kysely's `numUpdatedRows` / `numDeletedRows` / `numInsertedOrUpdatedRows`). */
  affected(db: Kysely<Database>, params: P): Promise<bigint>;
}

export interface PreparedQueryOptions {
  /**
   * A write that may share its commit with the other such writes of the same event-loop turn, on a
   * store's SQLite connection (group-commit.ts; on MySQL, or inside a transaction, it runs as any
   * statement). Its promise still settles only after its COMMIT, and any other statement issued
   * after it runs after that COMMIT, so no reader of the connection sees a difference. For writes
   * that many concurrent runs make and that do not need their own commit: a run's recording events
   * and token-usage increments, 8 of an embedded run's 11 commits of the store's file (issue 9,
   * bench/throughput README "Recording and usage writes share commits"). A write that must be
   * visible to another connection without its caller awaiting it must not use this. A write that
   * fails (a constraint, or an error after which SQLite rolls the whole transaction back) fails
   * alone, as it would have in its own commit.
   */
  groupCommit?: boolean;
}

/**
 * Builds the query `build` describes once per Kysely instance and returns a statement to run with
 * named parameters. `build` must be pure: it is called once per instance, with markers for values.
 */
export function preparedQuery<P extends object, O>(build: (db: Kysely<Database>, p: P) => Compilable<O>, opts: PreparedQueryOptions = {}): PreparedQuery<P, O> {
  const grouped = opts.groupCommit === true;
  // Keyed by the instance's adapter: one per Kysely instance, shared by its transactions.
  const templates = new WeakMap<object, Template>();
  const template = (db: Kysely<Database>): Template => {
    const key = db.getExecutor().adapter;
    let t = templates.get(key);
    if (!t) {
      t = { ...compile(db, build), direct: directConnections.get(key) };
      templates.set(key, t);
    }
    return t;
  };
  const execute = (db: Kysely<Database>, params: P): Promise<QueryResult<O>> => {
    let t: Template;
    try {
      t = template(db);
    } catch (err) {
      // A query that does not compile fails its promise, as an async call would.
      return Promise.reject(err as Error);
    }
    const { compiled, bindings, direct } = t;
    const values = params as Record<string, unknown>;
    const parameters = bindings.map((b) => ('name' in b ? values[b.name] : b.constant));
    if (direct !== undefined && transactionHolders.has(db)) {
      // The transaction's own statement, in the order its code issues them: never run again after
      // a failure (SQLite may have rolled the transaction back), as Kysely's path does not either.
      try {
        return Promise.resolve(runSqlite<O>(direct.sqlite, compiled.sql, parameters));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    if (direct !== undefined && direct.use.users === 0 && !direct.sqlite.inTransaction) {
      const group = direct.use.group;
      if (group !== undefined && grouped) return group.run(() => runSqlite<O>(direct.sqlite, compiled.sql, parameters));
      // Any other statement runs after the grouped writes issued before it: committed now, or, while
      // another connection holds the lock, waited for on Kysely's path (BusyWaitingDriver).
      if (group === undefined || group.size === 0 || group.commitIfUnlocked())
        try {
          return Promise.resolve(runSqlite<O>(direct.sqlite, compiled.sql, parameters));
        } catch (err) {
          // Locked by another connection: Kysely's path waits for the lock (nothing was changed).
          if (!isSqliteBusy(err)) return Promise.reject(err as Error);
        }
    }
    return db.executeQuery<O>({ ...compiled, parameters } as CompiledQuery<O>);
  };
  return {
    execute,
    rows: (db, params) => execute(db, params).then((r) => r.rows),
    first: (db, params) => execute(db, params).then((r) => r.rows[0]),
    affected: (db, params) => execute(db, params).then((r) => r.numAffectedRows ?? 0n),
  };
}

function compile<P extends object, O>(db: Kysely<Database>, build: (db: Kysely<Database>, p: P) => Compilable<O>): Omit<Template, 'direct'> {
  const used = new Set<string>();
  const markers = new Proxy({} as P, {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      used.add(name);
      return new Slot(name);
    },
  });
  const compiled = build(db, markers).compile();
  const bindings: Binding[] = compiled.parameters.map((v) => (v instanceof Slot ? { name: v.name } : { constant: v }));
  const bound = new Set(bindings.flatMap((b) => ('name' in b ? [b.name] : [])));
  const inlined = [...used].filter((name) => !bound.has(name));
  if (inlined.length > 0) {
    throw new AgentLoopError('INTERNAL', `Prepared query parameter(s) ${inlined.join(', ')} did not compile to statement parameters: ${compiled.sql}`);
  }
  return { compiled, bindings };
}
