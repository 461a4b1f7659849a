/**
 * The statements `RunLifecycle` makes for every run — its admission, its start, its end — built and
 * compiled once (prepared-query.ts, issue 9). Each is the same guarded statement the lifecycle
 * wrote inline before; the guards (`where` on the holder, on an active status) are what make the
 * transitions safe against a racing cancel or a second worker, and they are unchanged here. The
 * rarer transitions (dead letter, redrive, recovery, deletion) keep their builder chains in
 * run-lifecycle.ts.
 */
import { sql, type ExpressionBuilder, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from './schema.js';
import { preparedQuery } from './prepared-query.js';
import { RUN_RECORD_COLUMNS } from './repositories/rows.js';
import type { RunStatusName } from './types.js';

/** The statuses of a run not ended yet (the guard of every start and end). */
export const ACTIVE: RunStatusName[] = ['pending', 'running'];

/** Admission: the run takes the thread when no run holds it (the database decides between racing admissions). */
const takeThreadWhere = (db: Kysely<Database>, p: { tenantId: string; threadId: string; runId: string; now: number }) =>
  db
    .updateTable('threads')
    .set({ active_run_id: p.runId, status: 'busy', updated_at: p.now })
    .where('tenant_id', '=', p.tenantId)
    .where('thread_id', '=', p.threadId)
    .where('active_run_id', 'is', null);
export const takeThread = preparedQuery(takeThreadWhere);

/**
 * Admission, the same take when the run also stamps its graph and assistant into the thread's
 * metadata (`AdmitRequest.threadMetadata`): one statement where the take and a metadata update were two.
 */
const takeThreadStampingWhere = (db: Kysely<Database>, p: { tenantId: string; threadId: string; runId: string; now: number; metadata: string }) =>
  db
    .updateTable('threads')
    .set({ active_run_id: p.runId, status: 'busy', updated_at: p.now, metadata: p.metadata })
    .where('tenant_id', '=', p.tenantId)
    .where('thread_id', '=', p.threadId)
    .where('active_run_id', 'is', null);
export const takeThreadStamping = preparedQuery(takeThreadStampingWhere);

/**
 * Admission on SQLite: the same takes, returning whether the thread has uploads waiting for a run,
 * so that the claim below runs only when there is one to claim — most threads have none, and the
 * claim that found nothing was a statement on every run (issue 9). The transaction holds the write
 * lock (BEGIN IMMEDIATE), so no upload lands between this read and the claim.
 */
const uploadsWaiting = (eb: ExpressionBuilder<Database, 'threads'>, p: { tenantId: string; threadId: string }) =>
  eb
    .exists(
      eb
        .selectFrom('thread_uploads')
        .select(sql.lit(1).as('one'))
        .where('thread_uploads.tenant_id', '=', p.tenantId)
        .where('thread_uploads.thread_id', '=', p.threadId)
        .where('thread_uploads.run_id', 'is', null),
    )
    .as('uploads_waiting');
export const takeThreadReturning = preparedQuery((db, p: { tenantId: string; threadId: string; runId: string; now: number }) =>
  takeThreadWhere(db, p).returning((eb) => uploadsWaiting(eb, p)),
);
export const takeThreadStampingReturning = preparedQuery((db, p: { tenantId: string; threadId: string; runId: string; now: number; metadata: string }) =>
  takeThreadStampingWhere(db, p).returning((eb) => uploadsWaiting(eb, p)),
);

/**
 * Admission on MySQL (no RETURNING): the take and the claim of the thread's waiting uploads in one
 * multi-table UPDATE, where they were two round trips (issue 9). The thread row comes first (the
 * left table of the join), then its uploads, the order the two statements locked them in. Returns
 * the rows matched: 0 when another run holds the thread (nothing claimed then), else 1 for the
 * thread plus the uploads claimed. Kysely builds no MySQL UPDATE … JOIN, hence the SQL text.
 */
export async function takeThreadClaimingMysql(
  db: Kysely<Database>,
  p: { tenantId: string; threadId: string; runId: string; now: number; metadata: string | undefined },
): Promise<bigint> {
  const stamp = p.metadata === undefined ? sql`` : sql`, threads.metadata = ${p.metadata}`;
  const res = await sql`update threads left join thread_uploads
      on thread_uploads.tenant_id = threads.tenant_id and thread_uploads.thread_id = threads.thread_id and thread_uploads.run_id is null
    set threads.active_run_id = ${p.runId}, threads.status = 'busy', threads.updated_at = ${p.now}${stamp}, thread_uploads.run_id = ${p.runId}
    where threads.tenant_id = ${p.tenantId} and threads.thread_id = ${p.threadId} and threads.active_run_id is null`.execute(db);
  return res.numAffectedRows ?? 0n;
}

/** Admission: the thread's pending uploads handed to the run. SQLite returns the rows claimed; MySQL reads them after. */
const claimUploadsWhere = (db: Kysely<Database>, p: { tenantId: string; threadId: string; runId: string }) =>
  db.updateTable('thread_uploads').set({ run_id: p.runId }).where('tenant_id', '=', p.tenantId).where('thread_id', '=', p.threadId).where('run_id', 'is', null);
export const claimUploadsReturning = preparedQuery((db, p: { tenantId: string; threadId: string; runId: string }) => claimUploadsWhere(db, p).returningAll());
export const claimUploads = preparedQuery(claimUploadsWhere);

/** Admission: the run's record. */
export interface RunInsert {
  runId: string;
  threadId: string;
  tenantId: string;
  assistantId: string;
  now: number;
  metadata: string;
  kwargs: string;
  multitaskStrategy: string;
  deferred: number;
  job: string | null;
}
export const insertRun = preparedQuery((db, p: RunInsert) =>
  db.insertInto('runs').values({
    run_id: p.runId,
    thread_id: p.threadId,
    tenant_id: p.tenantId,
    assistant_id: p.assistantId,
    status: 'pending',
    created_at: p.now,
    updated_at: p.now,
    started_at: null,
    ended_at: null,
    error: null,
    metadata: p.metadata,
    kwargs: p.kwargs,
    multitask_strategy: p.multitaskStrategy,
    deferred: p.deferred,
    job: p.job,
  }),
);

/** Start: pending (or running: a retry) → running, one more attempt, started_at kept from the first start. */
const startRunWhere = (db: Kysely<Database>, p: { tenantId: string; runId: string; now: number }) =>
  db
    .updateTable('runs')
    .set((eb) => ({ status: 'running', updated_at: p.now, attempts: eb('attempts', '+', 1), started_at: sql<number>`coalesce(started_at, ${p.now})` }))
    .where('tenant_id', '=', p.tenantId)
    .where('run_id', '=', p.runId)
    .where('status', 'in', ACTIVE)
    .where('deferred', '=', 0);
export const startRun = preparedQuery(startRunWhere);
/** Start on SQLite: the same update returning the run it started, where a read came before it (issue 9). */
export const startRunReturning = preparedQuery((db, p: { tenantId: string; runId: string; now: number }) => startRunWhere(db, p).returning(RUN_RECORD_COLUMNS));

/** End on SQLite (not a dead letter, whose update carries more): only a run still pending or running ends. MySQL's: `endRunMysqlPacket`. */
const endRunWhere = (db: Kysely<Database>, p: { tenantId: string; runId: string; status: string; now: number; error: string | null }) =>
  db
    .updateTable('runs')
    .set({ status: p.status, ended_at: p.now, updated_at: p.now, error: p.error, deferred: 0 })
    .where('tenant_id', '=', p.tenantId)
    .where('run_id', '=', p.runId)
    .where('status', 'in', ACTIVE);
export const endRunReturning = preparedQuery((db, p: { tenantId: string; runId: string; status: string; now: number; error: string | null }) =>
  endRunWhere(db, p).returning(RUN_RECORD_COLUMNS),
);

/**
 * End on SQLite: the thread handed to its oldest deferred run, or freed with the status the run
 * leaves it in, in one update (run-lifecycle.ts, `releaseSqlite`). `values`: the thread's values
 * after the run, or null to leave them as they are.
 */
export const releaseThreadSqlite = preparedQuery(
  (db, p: { tenantId: string; threadId: string; runId: string; after: string; now: number; values: string | null }) => {
    const nextId = db
      .selectFrom('runs')
      .select('run_id')
      .where('tenant_id', '=', p.tenantId)
      .where('thread_id', '=', p.threadId)
      .where('deferred', '=', 1)
      .where('status', '=', 'pending')
      .orderBy('seq')
      .limit(1);
    return db
      .updateTable('threads')
      .set({
        status: sql<string>`case when (${nextId}) is null then ${p.after} else 'busy' end`,
        active_run_id: sql<string | null>`(${nextId})`,
        updated_at: p.now,
        state_values: sql<string | null>`coalesce(${p.values}, state_values)`,
      })
      .where('tenant_id', '=', p.tenantId)
      .where('thread_id', '=', p.threadId)
      .where('active_run_id', '=', p.runId)
      .returning(['status', 'active_run_id']);
  },
);

/**
 * Start on MySQL (no RETURNING): the guarded update and the read of the run in one packet, where
 * they were two round trips (issue 9); `started` is the update's `row_count()`, so the read also
 * says why nothing started (missing, deferred, ended) without a third. Two statements, as before,
 * not one transaction: the record read is the run's right after the update, as it was.
 */
export function startRunMysqlPacket(p: { tenantId: string; runId: string; now: number }): RawBuilder<unknown> {
  return sql`update runs set status = 'running', updated_at = ${p.now}, attempts = attempts + 1, started_at = coalesce(started_at, ${p.now})
    where tenant_id = ${p.tenantId} and run_id = ${p.runId} and status in ('pending', 'running') and deferred = 0;
    select ${RUN_COLUMNS}, row_count() as started from runs where tenant_id = ${p.tenantId} and run_id = ${p.runId}`;
}

const RUN_COLUMNS = sql.join(RUN_RECORD_COLUMNS.map((c) => sql.ref(c)));

/** What `endRunMysqlPacket` is given: the end (`endRunReturning`'s parameters) and what the thread becomes. */
export interface MysqlEnd {
  tenantId: string;
  runId: string;
  status: string;
  now: number;
  error: string | null;
  /** The thread's status after the run when no deferred run takes it (`threadStatusAfter`). */
  after: string;
  /** The thread's values after the run (JSON), or null to leave them. */
  values: string | null;
  /** A dead letter's columns: its reason, and its job (JSON) to keep when the run stores none. */
  deadLetter?: { reason: string; job: string | null } | undefined;
}

/**
 * End on MySQL: the statements of the end's transaction — the run's guarded update, the thread's
 * oldest deferred run read under FOR UPDATE, the thread handed to it or freed, that run no longer
 * deferred, or only the values left on a free thread when the run had ended first — with the
 * decisions a client made between them taken by the server from user variables, so that the
 * transaction travels in one packet (`mysqlTransactionPacket`): one round trip where it took six
 * (BEGIN, update, read, read, update, COMMIT; issue 9). Same statements, same guards, the same
 * rows locked in the same order (the run, the thread's oldest deferred run, the thread), so a
 * cancel of that deferred run racing this end still waits for it or is seen by it, as before.
 * The last two statements read the ended run (`ended_here`: whether this end ended it; `released`:
 * whether it held the thread) and the run promoted, if any. Kysely builds no user variables or
 * SELECT … INTO, hence the SQL text; every value is a parameter.
 */
export function endRunMysqlPacket(p: MysqlEnd): { statements: RawBuilder<unknown>[]; ended: number; promoted: number } {
  const d = p.deadLetter;
  const deadLetter =
    d === undefined
      ? sql``
      : sql`, dead_letter_reason = ${d.reason}, dead_lettered_at = ${p.now}${d.job === null ? sql`` : sql`, job = coalesce(job, ${d.job})`}`;
  const statements = [
    sql`update runs set status = ${p.status}, ended_at = ${p.now}, updated_at = ${p.now}, error = ${p.error}, deferred = 0${deadLetter}
      where tenant_id = ${p.tenantId} and run_id = ${p.runId} and status in ('pending', 'running')`,
    // The values travel once (a thread's values are kilobytes), used by either update of the thread below.
    sql`set @agentloop_ended = row_count(), @agentloop_thread = null, @agentloop_next = null, @agentloop_released = 0, @agentloop_values = ${p.values}`,
    sql`select thread_id into @agentloop_thread from runs where tenant_id = ${p.tenantId} and run_id = ${p.runId}`,
    sql`select run_id into @agentloop_next from runs
      where tenant_id = ${p.tenantId} and thread_id = @agentloop_thread and deferred = 1 and status = 'pending' and @agentloop_ended > 0
      order by seq limit 1 for update`,
    sql`update threads set status = if(@agentloop_next is null, ${p.after}, 'busy'), active_run_id = @agentloop_next, updated_at = ${p.now},
        state_values = coalesce(@agentloop_values, state_values)
      where tenant_id = ${p.tenantId} and thread_id = @agentloop_thread and active_run_id = ${p.runId} and @agentloop_ended > 0`,
    sql`set @agentloop_released = row_count()`,
    sql`update runs set deferred = 0, updated_at = ${p.now} where tenant_id = ${p.tenantId} and run_id = @agentloop_next and @agentloop_released > 0`,
    // Ended first by someone else (a cancel): the values of where the run stopped still land on its
    // thread, unless another run holds it by now.
    ...(p.values === null
      ? []
      : [
          sql`update threads set state_values = @agentloop_values, updated_at = ${p.now}
            where tenant_id = ${p.tenantId} and thread_id = @agentloop_thread and active_run_id is null and @agentloop_ended = 0`,
        ]),
    // The values (kilobytes to megabytes) are not kept on the pooled connection after the packet.
    sql`set @agentloop_values = null`,
    sql`select ${RUN_COLUMNS}, @agentloop_ended as ended_here, @agentloop_released as released from runs where tenant_id = ${p.tenantId} and run_id = ${p.runId}`,
    sql`select * from runs where tenant_id = ${p.tenantId} and run_id = @agentloop_next and @agentloop_released > 0`,
  ];
  // Indexes in the packet's results: START TRANSACTION comes first.
  return { statements, ended: statements.length - 1, promoted: statements.length };
}

/**
 * Admission on MySQL, the common case in one packet (`mysqlTransactionPacket`): the run takes a
 * thread no run holds — and, when it claims uploads, that has none waiting — and is inserted, where
 * BEGIN, the take, the INSERT and COMMIT were four round trips (issue 9). The INSERT is made only
 * when the take matched (`row_count()`), so a packet that took nothing changes nothing, and
 * `took` (the last statement) says so: the caller then admits through its transaction (another
 * run holds the thread, uploads wait to be claimed — the job is built from them —, no such thread).
 * An upload stored while this runs is either seen by the `not exists` (the packet takes nothing,
 * the transaction claims it) or stays for the next run — as it would arriving just after the claim.
 */
export function admitMysqlPacket(p: Omit<RunInsert, 'deferred'> & { threadMetadata: string | undefined; claimUploads: boolean }): RawBuilder<unknown>[] {
  const stamp = p.threadMetadata === undefined ? sql`` : sql`, metadata = ${p.threadMetadata}`;
  const noUploads = p.claimUploads
    ? sql` and not exists (select 1 from thread_uploads where thread_uploads.tenant_id = ${p.tenantId} and thread_uploads.thread_id = ${p.threadId} and thread_uploads.run_id is null)`
    : sql``;
  return [
    sql`update threads set active_run_id = ${p.runId}, status = 'busy', updated_at = ${p.now}${stamp}
      where tenant_id = ${p.tenantId} and thread_id = ${p.threadId} and active_run_id is null${noUploads}`,
    sql`set @agentloop_took = row_count()`,
    sql`insert into runs (run_id, thread_id, tenant_id, assistant_id, status, created_at, updated_at, started_at, ended_at, error, metadata, kwargs, multitask_strategy, deferred, job)
      select ${p.runId}, ${p.threadId}, ${p.tenantId}, ${p.assistantId}, 'pending', ${p.now}, ${p.now}, null, null, null, ${p.metadata}, ${p.kwargs}, ${p.multitaskStrategy}, 0, ${p.job}
      from dual where @agentloop_took > 0`,
    sql`select @agentloop_took as took`,
  ];
}
