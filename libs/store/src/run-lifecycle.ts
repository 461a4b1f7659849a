/**
 * The one owner of run and thread status (issue 10). One file on purpose (over 400 lines): every
 * guarded transition and the invariants they keep together must be read side by side to review them. Every transition of a run — admitted,
 * deferred, started, ended (finished, cancelled, abandoned), promoted — and every status change of
 * its thread is one guarded update in one transaction here; nothing else writes `runs.status`,
 * `threads.status`, `threads.active_run_id` or `runs.deferred`. Each transition returns a typed
 * result and emits a typed event after its commit; subscribers (the orchestrator's end
 * announcement, the gateway's `end` event for a cancel...) do the side effects.
 *
 * The model (after Trigger.dev's run engine):
 * - A thread is held by at most one run, `threads.active_run_id`: the run admitted with its job
 *   queued, then running, until it ends. Admission takes the thread with
 *   `update threads ... where active_run_id is null`, so the database decides between two gateway
 *   replicas racing on one thread — no lock in memory.
 * - A run admitted while the thread is held, with multitask_strategy "enqueue", is stored
 *   `pending` with `deferred = 1` and its queue job (`runs.job`). The transition that ends the
 *   holder hands the thread to the oldest deferred run in the same transaction, and its job is
 *   enqueued after the commit (job id = run id: enqueueing twice is a no-op). Nothing waits in a
 *   process's memory: any gateway or orchestrator that ends the holder promotes the next run, and
 *   `recoverPending` (the sweeper) enqueues a job lost between a commit and its enqueue.
 * - Invariant: `threads.active_run_id = R` implies run R is pending (not deferred) or running.
 * - Dead letter: a run whose queue job failed for good without the run recording an outcome (its
 *   worker died more than RUN_MAX_STALLED times — a poison run — or its job is gone) is ended by
 *   `deadLetter`: status `error` (LangGraph's statuses are kept), `dead_letter_reason` and
 *   `dead_lettered_at` set, the job kept in `runs.job`; it emits `run.ended` (cause
 *   `dead_lettered`) like every other end, so its webhook, cleanup and delegation parent follow.
 *   `redrive` takes such a run back: pending again on its thread, with a new queue job
 *   (`runJobId`: attempts reset) that resumes from its last checkpoint. Only dead-lettered runs.
 *
 * Longer than ~400 lines on purpose: every status transition lives here, in one place to audit.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import { AgentLoopError, UnavailableError, assertNever, errorMessage, type Logger } from '@agentloop/core';
import type { Database, RunsTable, ThreadUploadsTable } from './schema.js';
import { checkId, isDuplicateKey, toRun, toUpload, type RunRow } from './repositories/rows.js';
import { selectRun } from './repositories/runs.js';
import {
  ACTIVE,
  admitMysqlPacket,
  claimUploads,
  claimUploadsReturning,
  endRunMysqlPacket,
  endRunReturning,
  insertRun,
  releaseThreadSqlite,
  startRun,
  startRunMysqlPacket,
  startRunReturning,
  takeThread,
  takeThreadClaimingMysql,
  takeThreadReturning,
  takeThreadStamping,
  takeThreadStampingReturning,
} from './lifecycle-statements.js';
import { mysqlTransactionPacket } from './write-transaction.js';
import type { JsonObject, NewRun, RunRecord, RunStatusName, Store, ThreadStatus, UploadRecord } from './types.js';

/**
 * The queue job id of a run's current execution: the run id, then `<run id>-redrive-<n>` after its
 * n-th redrive (a new job: the failed one keeps its id in the queue for a while).
 */
export function runJobId(run: Pick<RunRecord, 'runId' | 'redrives'>): string {
  return run.redrives > 0 ? `${run.runId}-redrive-${run.redrives}` : run.runId;
}

export type TerminalRunStatus = Exclude<RunStatusName, 'pending' | 'running'>;

/** `{error, message}` of a failed run, as events and webhooks report it. */
export interface RunErrorInfo {
  error: string;
  message: string;
}

/** A run's queue job. */
export interface RunJobSpec {
  payload: Uint8Array;
  attempts?: number;
  backoffMs?: number;
  /** Delay before its first attempt (after_seconds). */
  delayMs?: number;
}

/** Where run jobs go (the `runs` JobQueue fits). `group`: the run's tenant, for fair scheduling (docs/adr/0008). */
export interface RunJobSink {
  enqueue(payload: Uint8Array, opts: { jobId: string; attempts?: number; backoffMs?: number; delayMs?: number; group?: string }): Promise<{ added: boolean }>;
  /** The state of a job (the sweeper: was a pending run's job ever enqueued?). */
  getState?(jobId: string): Promise<string>;
}

export interface AdmitRequest {
  run: NewRun;
  /** When another run holds the thread: refuse this one (`busy`), or store it to run after the runs before it. */
  whenBusy: 'reject' | 'defer';
  /** Hand the thread's pending uploads to this run, in the same transaction (given to `job`). */
  claimUploads?: boolean;
  /**
   * The thread's metadata to write when the run takes the thread (`admitted`), in the statement
   * that takes it: the gateway's stamp of the run's graph and assistant, one statement less per run
   * (issue 9). Not written when the run is deferred or refused: the caller writes it then.
   */
  threadMetadata?: JsonObject;
  /**
   * The run's queue job, built in the transaction from the claimed uploads (keep it pure: it may be
   * called more than once — MySQL first tries the admission of a free thread without uploads in one
   * round trip, with the job built for none — and the run keeps what its last call returned). Stored
   * with the run; enqueued after the commit when the run holds the thread. Without it the caller
   * enqueues (delegated runs).
   */
  job?: (uploads: UploadRecord[]) => RunJobSpec;
  /**
   * Store `job` with the run but do not enqueue it: the caller enqueues it later (a delegated run,
   * after its parent's ledger entry is claimed). Stored, it can be re-driven from the dead letter.
   */
  callerEnqueues?: boolean;
}

export type AdmitResult =
  /** The run holds the thread; its job (if given) is enqueued. */
  | { kind: 'admitted'; run: RunRecord }
  /** The run waits for `behind` (and any deferred run before it) to end. */
  | { kind: 'deferred'; run: RunRecord; behind: string }
  /** `whenBusy: reject` and the thread is held. */
  | { kind: 'busy'; holder: RunRecord | undefined }
  /** A run with this id exists already (a retried delegation): nothing changed. */
  | { kind: 'exists'; run: RunRecord }
  | { kind: 'no_thread' };

export type StartResult =
  | { kind: 'started'; run: RunRecord }
  /** The run ended before it could start (a cancel). */
  | { kind: 'ended'; run: RunRecord }
  /** The run waits for its thread: not startable now. */
  | { kind: 'deferred'; run: RunRecord }
  | { kind: 'missing' };

/** Why a run ended. */
export type EndCause =
  /** Its execution finished (any outcome). */
  | 'finished'
  /** A client (or multitask_strategy interrupt, or a cancelled parent) cancelled it. */
  | 'cancelled'
  /** Its job failed for good without the run recording an outcome (the sweeper, the last attempt). */
  | 'abandoned'
  /** Its job could not be enqueued at admission. */
  | 'enqueue_failed'
  /** Its job failed for good at queue level (a poison run) or is gone: dead-lettered (`deadLetter`). */
  | 'dead_lettered';

export interface EndRequest {
  tenantId: string;
  runId: string;
  status: TerminalRunStatus;
  error?: RunErrorInfo | undefined;
  /** The thread's values after the run (written when the run held the thread; null/undefined: unchanged). */
  values?: JsonObject | null | undefined;
  /** The run stopped to wait for a human: its thread becomes `interrupted`. */
  waitsForHuman?: boolean;
  cause: EndCause;
  /** Dead-letter the run (`deadLetter`): the reason, and its job to keep when the run stores none. */
  deadLetter?: { reason: string; job?: RunJobSpec | undefined };
}

export interface DeadLetterRequest {
  tenantId: string;
  runId: string;
  /** Why: shown by the API (`dead_letter_reason`) and as the run's error. */
  reason: string;
  /** The run's job as the queue had it, kept for a redrive when the run stores none. */
  job?: RunJobSpec | undefined;
}

export type RedriveResult =
  /** The run is pending again, holding its thread; its new job (`jobId`) is enqueued. */
  | { kind: 'redriven'; run: RunRecord; jobId: string }
  /** Only dead-lettered runs can be re-driven. */
  | { kind: 'not_dead_lettered'; run: RunRecord }
  /** Another run holds the run's thread now: end or cancel it first. */
  | { kind: 'thread_busy'; run: RunRecord; holder: string }
  /** No job is stored for the run (dead-lettered before jobs were kept): it cannot be re-driven. */
  | { kind: 'no_job'; run: RunRecord }
  | { kind: 'missing' };

export type RunDeleteResult =
  | { kind: 'deleted'; run: RunRecord }
  /** Pending or running: cancel it first. */
  | { kind: 'active'; run: RunRecord }
  | { kind: 'missing' };

export type EndResult =
  | {
      kind: 'ended';
      run: RunRecord;
      /** The thread's status afterwards; undefined when the run did not hold it (a deferred run cancelled). */
      threadStatus: ThreadStatus | undefined;
      /** The deferred run the thread was handed to. */
      promoted: RunRecord | undefined;
    }
  /** The record had ended first (e.g. cancelled while it ran): nothing changed but the thread's values. */
  | { kind: 'already_ended'; run: RunRecord }
  | { kind: 'missing' };

/** Events, emitted after each transition's commit (and `run.ended` again by `replayEnd`). */
export type LifecycleEvent<C> =
  | { type: 'run.admitted'; run: RunRecord; deferred: boolean }
  | { type: 'run.started'; run: RunRecord }
  | {
      type: 'run.ended';
      run: RunRecord;
      /** `replay`: announced again for a run that had ended (a retried job). */
      cause: EndCause | 'replay';
      threadStatus: ThreadStatus | undefined;
      values: JsonObject | null;
      error: RunErrorInfo | undefined;
      /** What the caller of the transition passed along (the orchestrator: the run's job). */
      ctx: C | undefined;
    }
  | { type: 'run.promoted'; run: RunRecord; after: string }
  | { type: 'run.redriven'; run: RunRecord; jobId: string };

export type LifecycleEventType = LifecycleEvent<unknown>['type'];
type EventOf<C, T extends LifecycleEventType> = Extract<LifecycleEvent<C>, { type: T }>;
export type LifecycleSubscriber<C, T extends LifecycleEventType> = (event: EventOf<C, T>) => void | Promise<void>;

export interface RunLifecycleOptions {
  /** Where the jobs of admitted and promoted runs go; without it, runs are recorded but not enqueued. */
  jobs?: RunJobSink;
  logger?: Logger;
  /** Clock in epoch ms (tests). */
  now?: () => number;
}

/** The thread's status once its run ended with `status`. A cancelled run leaves its thread usable. */
export function threadStatusAfter(status: TerminalRunStatus, waitsForHuman = false): ThreadStatus {
  switch (status) {
    case 'success':
      return waitsForHuman ? 'interrupted' : 'idle';
    case 'interrupted':
      return 'idle';
    case 'error':
    case 'timeout':
      return 'error';
    default:
      return assertNever(status, 'run status');
  }
}

/** The error a terminal record reports (`error`/`timeout`). */
export function recordedError(run: RunRecord): RunErrorInfo | undefined {
  if (run.status === 'error') return { error: 'Error', message: run.error ?? 'The run failed.' };
  if (run.status === 'timeout') return { error: 'TimeoutError', message: run.error ?? 'The run exceeded its time limit.' };
  return undefined;
}

interface StoredJob {
  b64: string;
  attempts?: number;
  backoff_ms?: number;
  delay_ms?: number;
}

const encodeJob = (j: RunJobSpec): string =>
  JSON.stringify({
    b64: Buffer.from(j.payload).toString('base64'),
    ...(j.attempts !== undefined ? { attempts: j.attempts } : {}),
    ...(j.backoffMs !== undefined ? { backoff_ms: j.backoffMs } : {}),
    ...(j.delayMs ? { delay_ms: j.delayMs } : {}),
  } satisfies StoredJob);

/** The row of a run being admitted (pending, not started), as both admission paths insert it. */
function newRunRow(r: NewRun, now: number, deferred: 0 | 1, job: RunJobSpec | undefined) {
  return {
    run_id: r.runId,
    thread_id: r.threadId,
    tenant_id: r.tenantId,
    assistant_id: r.assistantId,
    status: 'pending',
    created_at: now,
    updated_at: now,
    started_at: null,
    ended_at: null,
    error: null,
    metadata: JSON.stringify(r.metadata ?? {}),
    kwargs: JSON.stringify(r.kwargs ?? {}),
    multitask_strategy: r.multitaskStrategy ?? 'reject',
    deferred,
    job: job ? encodeJob(job) : null,
  };
}

function decodeJob(text: string | null): RunJobSpec | undefined {
  if (!text) return undefined;
  const j = JSON.parse(text) as StoredJob;
  return {
    payload: new Uint8Array(Buffer.from(j.b64, 'base64')),
    ...(j.attempts !== undefined ? { attempts: j.attempts } : {}),
    ...(j.backoff_ms !== undefined ? { backoffMs: j.backoff_ms } : {}),
    ...(j.delay_ms ? { delayMs: j.delay_ms } : {}),
  };
}

/** Rolls an admission back: its run id exists already. */
class DuplicateRun extends Error {}
/** Rolls an admission back: the holder it saw was released meanwhile; try again. */
class HolderChanged extends Error {}

/** The lifecycle engine over a store. `C` is what transitions pass to `run.ended` subscribers. */
export class RunLifecycle<C = unknown> {
  private readonly subscribers = new Map<LifecycleEventType, Array<(e: never) => void | Promise<void>>>();
  private readonly now: () => number;

  constructor(
    readonly store: Store,
    private readonly opts: RunLifecycleOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
  }

  /** Subscribes to one kind of event; returns the unsubscribe function. Subscribers run in order, awaited. */
  on<T extends LifecycleEventType>(type: T, fn: LifecycleSubscriber<C, T>): () => void {
    const list = this.subscribers.get(type) ?? [];
    list.push(fn as (e: never) => void | Promise<void>);
    this.subscribers.set(type, list);
    return () => {
      const i = list.indexOf(fn as (e: never) => void | Promise<void>);
      if (i >= 0) list.splice(i, 1);
    };
  }

  private async emit<T extends LifecycleEventType>(event: EventOf<C, T>): Promise<void> {
    for (const fn of this.subscribers.get(event.type) ?? []) await (fn as (e: EventOf<C, T>) => void | Promise<void>)(event);
  }

  // -------------------------------------------------------------------------
  // Admission

  /**
   * Admits a run on an existing thread: takes the thread when no run holds it (`admitted`, its job
   * enqueued after the commit), else refuses (`busy`) or stores the run behind the holder
   * (`deferred`). One transaction: the thread's guarded update, the uploads' claim, the insert.
   * When the job cannot be enqueued the run ends as `error` and an UnavailableError is thrown.
   */
  async admit(req: AdmitRequest): Promise<AdmitResult> {
    const r = req.run;
    checkId('tenantId', r.tenantId);
    checkId('threadId', r.threadId);
    checkId('runId', r.runId);
    checkId('assistantId', r.assistantId);
    let out: (AdmitResult & { job?: RunJobSpec }) | undefined;
    for (let attempt = 1; out === undefined; attempt++) {
      try {
        if (attempt === 1 && this.store.dialect === 'mysql') out = await this.admitMysql(req);
        out ??= await this.store.writeTransaction((db) => this.admitTx(db, req));
      } catch (err) {
        if (err instanceof HolderChanged && attempt < 5) continue;
        if (err instanceof DuplicateRun) {
          const run = await this.store.getRun(r.tenantId, r.runId);
          // The id is taken by another tenant's run: refuse without revealing it.
          if (!run) throw new AgentLoopError('CONFLICT', `Run id ${r.runId} is already in use`);
          return { kind: 'exists', run };
        }
        throw err;
      }
    }
    if (out.kind !== 'admitted' && out.kind !== 'deferred') return out;
    const { job, ...result } = out;
    await this.emit({ type: 'run.admitted', run: result.run, deferred: result.kind === 'deferred' });
    if (result.kind === 'admitted' && job && !req.callerEnqueues) await this.enqueueAdmitted(result.run, job);
    return result;
  }

  /**
   * MySQL: the common admission — the thread free, no uploads waiting for it — in one round trip
   * (`admitMysqlPacket`); undefined when the packet took nothing (it changed nothing then), for
   * `admitTx` to decide. The job is built for no uploads, as `admitTx` would build it.
   */
  private async admitMysql(req: AdmitRequest): Promise<(AdmitResult & { job?: RunJobSpec }) | undefined> {
    const r = req.run;
    const now = this.now();
    const job = req.job?.([]);
    const row = newRunRow(r, now, 0, job);
    const statements = admitMysqlPacket({
      runId: r.runId,
      threadId: r.threadId,
      tenantId: r.tenantId,
      assistantId: r.assistantId,
      now,
      metadata: row.metadata,
      kwargs: row.kwargs,
      multitaskStrategy: row.multitask_strategy,
      job: row.job,
      threadMetadata: req.threadMetadata ? JSON.stringify(req.threadMetadata) : undefined,
      claimUploads: req.claimUploads === true,
    });
    let results: unknown[];
    try {
      results = await this.store.writeStatement((db) => mysqlTransactionPacket(db, statements));
    } catch (err) {
      // Rolled back: the run id is taken (a retried admission, or another tenant's run).
      if (isDuplicateKey(err)) throw new DuplicateRun();
      throw err;
    }
    const took = (results[statements.length] as Array<{ took: number }> | undefined)?.[0]?.took;
    if (!(Number(took) > 0)) return undefined;
    const run = toRun({ ...row, seq: 0, attempts: 0, dead_letter_reason: null, dead_lettered_at: null, redrives: 0 });
    return { kind: 'admitted', run, ...(job ? { job } : {}) };
  }

  private async admitTx(db: Kysely<Database>, req: AdmitRequest): Promise<AdmitResult & { job?: RunJobSpec }> {
    const r = req.run;
    const now = this.now();
    const key = { tenantId: r.tenantId, threadId: r.threadId, runId: r.runId, now };
    const metadata = req.threadMetadata ? JSON.stringify(req.threadMetadata) : undefined;
    let took: bigint;
    // Whether a claim of the thread's uploads can find any: unknown (true) unless the take said.
    let uploadsWaiting = true;
    // MySQL: how many uploads the take claimed with it (undefined: not claimed by the take).
    let claimedByTake: bigint | undefined;
    if (req.claimUploads && this.store.dialect === 'sqlite') {
      const taken = metadata === undefined ? await takeThreadReturning.first(db, key) : await takeThreadStampingReturning.first(db, { ...key, metadata });
      took = taken ? 1n : 0n;
      if (taken) uploadsWaiting = Number(taken.uploads_waiting) === 1;
    } else if (req.claimUploads) {
      const matched = await takeThreadClaimingMysql(db, { ...key, metadata });
      took = matched > 0n ? 1n : 0n;
      if (took > 0n) claimedByTake = matched - 1n;
    } else {
      took = metadata === undefined ? await takeThread.affected(db, key) : await takeThreadStamping.affected(db, { ...key, metadata });
    }
    let behind: string | undefined;
    if (took === 0n) {
      const thread = await db
        .selectFrom('threads')
        .select('active_run_id')
        .where('tenant_id', '=', r.tenantId)
        .where('thread_id', '=', r.threadId)
        .executeTakeFirst();
      if (!thread) return { kind: 'no_thread' };
      if (thread.active_run_id === null) throw new HolderChanged();
      if (thread.active_run_id === r.runId) throw new DuplicateRun();
      behind = thread.active_run_id;
      if (req.whenBusy === 'reject') {
        const holder = await db.selectFrom('runs').selectAll().where('tenant_id', '=', r.tenantId).where('run_id', '=', behind).executeTakeFirst();
        return { kind: 'busy', holder: holder && toRun(holder) };
      }
    }
    let uploads: UploadRecord[] = [];
    if (req.claimUploads && uploadsWaiting) {
      // The claimed rows are exactly the run's (its id is new, and a failed admission rolls back):
      // SQLite returns them from the update (a statement less per run, issue 9); MySQL reads them,
      // unless the update (the take's, when it took the thread) claimed none (most runs: a thread
      // without pending uploads).
      let rows: Selectable<ThreadUploadsTable>[] = [];
      if (this.store.dialect === 'sqlite') {
        rows = (await claimUploadsReturning.rows(db, key)).sort(byCreationThenId);
      } else if ((claimedByTake ?? (await claimUploads.affected(db, key))) > 0n) {
        rows = await db
          .selectFrom('thread_uploads')
          .selectAll()
          .where('tenant_id', '=', r.tenantId)
          .where('thread_id', '=', r.threadId)
          .where('run_id', '=', r.runId)
          .orderBy('created_at')
          .orderBy('upload_id')
          .execute();
      }
      uploads = rows.map(toUpload);
    }
    const job = req.job?.(uploads);
    const row = newRunRow(r, now, behind === undefined ? 0 : 1, job);
    try {
      await insertRun.execute(db, {
        runId: row.run_id,
        threadId: row.thread_id,
        tenantId: row.tenant_id,
        assistantId: row.assistant_id,
        now,
        metadata: row.metadata,
        kwargs: row.kwargs,
        multitaskStrategy: row.multitask_strategy,
        deferred: row.deferred,
        job: row.job,
      });
    } catch (err) {
      if (isDuplicateKey(err)) throw new DuplicateRun();
      throw err;
    }
    const run = toRun({ ...row, seq: 0, attempts: 0, dead_letter_reason: null, dead_lettered_at: null, redrives: 0 });
    return behind === undefined ? { kind: 'admitted', run, ...(job ? { job } : {}) } : { kind: 'deferred', run, behind };
  }

  private async enqueueAdmitted(run: RunRecord, job: RunJobSpec): Promise<void> {
    if (!this.opts.jobs) return;
    try {
      await this.enqueue(run.runId, run.tenantId, job);
    } catch (err) {
      const message = `Could not enqueue run ${run.runId}: ${errorMessage(err)}`;
      this.opts.logger?.error({ run_id: run.runId, tenant: run.tenantId, err: errorMessage(err) }, 'enqueue failed');
      await this.end({ tenantId: run.tenantId, runId: run.runId, status: 'error', error: { error: 'Error', message }, cause: 'enqueue_failed' }).catch(
        () => undefined,
      );
      throw new UnavailableError(`${message}. The run queue is unavailable; retry later.`, { cause: err });
    }
  }

  private async enqueue(runId: string, tenantId: string, job: RunJobSpec): Promise<boolean> {
    if (!this.opts.jobs) return false;
    const { added } = await this.opts.jobs.enqueue(job.payload, {
      jobId: runId,
      group: tenantId,
      ...(job.attempts !== undefined ? { attempts: job.attempts } : {}),
      ...(job.backoffMs !== undefined ? { backoffMs: job.backoffMs } : {}),
      ...(job.delayMs ? { delayMs: job.delayMs } : {}),
    });
    return added;
  }

  // -------------------------------------------------------------------------
  // Start

  /**
   * A worker takes the run: pending (or running: a retry, a resume) → running, one more attempt,
   * started_at kept from the first start. One guarded update; the thread is already held by the
   * run since its admission. `run` is the record as the caller read it.
   */
  async start(run: RunRecord): Promise<StartResult> {
    const now = this.now();
    const updated = await this.store.writeStatement((db) => startRun.affected(db, { tenantId: run.tenantId, runId: run.runId, now }));
    if (updated > 0n) {
      const started: RunRecord = {
        ...run,
        status: 'running',
        attempts: run.attempts + 1,
        startedAt: run.startedAt ?? new Date(now),
        updatedAt: new Date(now),
        deferred: false,
      };
      await this.emit({ type: 'run.started', run: started });
      return { kind: 'started', run: started };
    }
    const current = await this.store.getRun(run.tenantId, run.runId);
    if (!current) return { kind: 'missing' };
    if (current.deferred) return { kind: 'deferred', run: current };
    return { kind: 'ended', run: current };
  }

  /**
   * `start` for a worker that has not read the run: the same guarded update, which on SQLite
   * returns the row it started (one statement where a read and the update were two, issue 9); the
   * record is read only when the update started nothing, to say why (missing, deferred, ended).
   * MySQL has no UPDATE … RETURNING: the update and the read in one packet, the read saying
   * whether the update started the run (`startRunMysqlPacket`).
   */
  async take(tenantId: string, runId: string): Promise<StartResult> {
    const now = this.now();
    const key = { tenantId, runId, now };
    let row: RunRow | undefined;
    let current: RunRecord | undefined;
    if (this.store.dialect === 'sqlite') {
      row = await this.store.writeStatement((db) => startRunReturning.first(db, key));
      if (!row) current = await this.store.getRun(tenantId, runId);
    } else {
      const results = await this.store.writeStatement(async (db) => (await startRunMysqlPacket(key).execute(db)).rows);
      const read = (results[1] as Array<RunRow & { started: number }> | undefined)?.[0];
      if (read) {
        const { started, ...run } = read;
        if (Number(started) > 0) row = run;
        else current = toRun(run);
      }
    }
    if (row) {
      const started = toRun(row);
      await this.emit({ type: 'run.started', run: started });
      return { kind: 'started', run: started };
    }
    if (!current) return { kind: 'missing' };
    if (current.deferred) return { kind: 'deferred', run: current };
    return { kind: 'ended', run: current };
  }

  // -------------------------------------------------------------------------
  // End

  /**
   * Ends a pending or running run (every terminal transition: finished, cancelled, abandoned,
   * enqueue failed). In one transaction: the run's guarded update, then — when it held its thread —
   * the thread's status and values, and the thread handed to its oldest deferred run, whose job is
   * enqueued after the commit. Emits `run.ended` (and `run.promoted`); subscriber errors are
   * rethrown after the promoted run's job is enqueued.
   */
  async end(req: EndRequest, ctx?: C): Promise<EndResult> {
    const now = this.now();
    const out =
      this.store.dialect === 'sqlite'
        ? await this.store.writeTransaction((db) => this.endTx(db, req, now))
        : await this.store.writeStatement((db) => this.endMysql(db, req, now));
    if (out.kind !== 'ended') return out;
    const { job, ...result } = out;
    if (result.promoted) {
      this.opts.logger?.info({ run_id: result.promoted.runId, thread_id: result.promoted.threadId, after: result.run.runId }, 'deferred run promoted');
      if (job) {
        await this.enqueue(result.promoted.runId, result.promoted.tenantId, job).catch((err: unknown) =>
          this.opts.logger?.warn({ run_id: result.promoted?.runId, err: errorMessage(err) }, 'promoted run not enqueued; the sweeper enqueues it later'),
        );
      }
    }
    await this.emit({
      type: 'run.ended',
      run: result.run,
      cause: req.cause,
      threadStatus: result.threadStatus,
      values: req.values ?? null,
      error: req.error,
      ctx,
    });
    if (result.promoted) await this.emit({ type: 'run.promoted', run: result.promoted, after: result.run.runId });
    return result;
  }

  private async endTx(db: Kysely<Database>, req: EndRequest, now: number): Promise<EndResult & { job?: RunJobSpec }> {
    // SQLite's end. Every end but a dead letter is the prepared `endRunReturning` (built once: lifecycle-statements.ts).
    const end = { tenantId: req.tenantId, runId: req.runId, status: req.status, now, error: req.error?.message ?? null };
    const values = req.values ? JSON.stringify(req.values) : undefined;
    // SQLite returns the updated row (a statement less per run's end, issue 9).
    const self = req.deadLetter
      ? await db
          .updateTable('runs')
          .set({
            status: req.status,
            ended_at: now,
            updated_at: now,
            error: end.error,
            deferred: 0,
            dead_letter_reason: req.deadLetter.reason,
            dead_lettered_at: now,
            ...(req.deadLetter.job ? { job: sql<string>`coalesce(job, ${encodeJob(req.deadLetter.job)})` } : {}),
          })
          .where('tenant_id', '=', req.tenantId)
          .where('run_id', '=', req.runId)
          .where('status', 'in', ACTIVE)
          .returningAll()
          .executeTakeFirst()
      : await endRunReturning.first(db, end);
    if (self) return this.releaseSqlite(db, req, toRun(self), now, values);
    const current = await selectRun.first(db, end);
    if (!current) return { kind: 'missing' };
    const run = toRun(current);
    // Ended first by someone else (a cancel): the values of where the run stopped still land on
    // its thread, unless another run holds it by now.
    if (values !== undefined) {
      await db
        .updateTable('threads')
        .set({ state_values: values, updated_at: now })
        .where('tenant_id', '=', req.tenantId)
        .where('thread_id', '=', run.threadId)
        .where('active_run_id', 'is', null)
        .execute();
    }
    return { kind: 'already_ended', run };
  }

  /**
   * MySQL's end: the same transition as SQLite's `endTx`, its transaction in one packet, one round
   * trip (`endRunMysqlPacket`, issue 9). The packet's last reads say what happened: whether this
   * end ended the run, whether the run held its thread, and the run the thread went to.
   */
  private async endMysql(db: Kysely<Database>, req: EndRequest, now: number): Promise<EndResult & { job?: RunJobSpec }> {
    const dl = req.deadLetter;
    const { statements, ended, promoted } = endRunMysqlPacket({
      tenantId: req.tenantId,
      runId: req.runId,
      status: req.status,
      now,
      error: req.error?.message ?? null,
      after: threadStatusAfter(req.status, req.waitsForHuman),
      values: req.values ? JSON.stringify(req.values) : null,
      deadLetter: dl && { reason: dl.reason, job: dl.job ? encodeJob(dl.job) : null },
    });
    const results = await mysqlTransactionPacket(db, statements);
    const self = (results[ended] as Array<RunRow & { ended_here: number; released: number }> | undefined)?.[0];
    if (!self) return { kind: 'missing' };
    const { ended_here, released, ...row } = self;
    const run = toRun(row);
    if (Number(ended_here) === 0) return { kind: 'already_ended', run };
    if (Number(released) === 0) return { kind: 'ended', run, threadStatus: undefined, promoted: undefined };
    const next = (results[promoted] as Selectable<RunsTable>[] | undefined)?.[0];
    if (!next) return { kind: 'ended', run, threadStatus: threadStatusAfter(req.status, req.waitsForHuman), promoted: undefined };
    return this.promotedEnd(run, 'busy', next, now);
  }

  /**
   * SQLite's release of the thread by an ended run: one UPDATE hands the thread to its oldest
   * deferred run or frees it, picking that run in a subquery and returning whom it chose, so the
   * common end (no run waiting) is one statement where a read and an update were two (issue 9).
   * The transaction holds SQLite's write lock (BEGIN IMMEDIATE): nothing changes between the
   * subquery and the update, as the read before it (MySQL's, under FOR UPDATE) guarantees.
   */
  private async releaseSqlite(
    db: Kysely<Database>,
    req: EndRequest,
    run: RunRecord,
    now: number,
    values: string | undefined,
  ): Promise<EndResult & { job?: RunJobSpec }> {
    const released = await releaseThreadSqlite.first(db, {
      tenantId: req.tenantId,
      threadId: run.threadId,
      runId: run.runId,
      after: threadStatusAfter(req.status, req.waitsForHuman),
      now,
      values: values ?? null,
    });
    if (!released) return { kind: 'ended', run, threadStatus: undefined, promoted: undefined };
    const threadStatus = released.status as ThreadStatus;
    if (released.active_run_id === null) return { kind: 'ended', run, threadStatus, promoted: undefined };
    const next = await db
      .updateTable('runs')
      .set({ deferred: 0, updated_at: now })
      .where('tenant_id', '=', req.tenantId)
      .where('run_id', '=', released.active_run_id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return this.promotedEnd(run, threadStatus, next, now);
  }

  private promotedEnd(run: RunRecord, threadStatus: ThreadStatus, next: Selectable<RunsTable>, now: number): EndResult & { job?: RunJobSpec } {
    const promoted = { ...toRun(next), deferred: false, updatedAt: new Date(now) };
    const job = decodeJob(next.job);
    return { kind: 'ended', run, threadStatus, promoted, ...(job ? { job } : {}) };
  }

  /** Cancels a pending (deferred or not) or running run: it ends `interrupted`, its thread stays usable. */
  cancel(tenantId: string, runId: string, ctx?: C): Promise<EndResult> {
    return this.end({ tenantId, runId, status: 'interrupted', cause: 'cancelled' }, ctx);
  }

  /**
   * Dead-letters a pending or running run whose queue job failed for good without the run
   * recording an outcome (a poison run: its worker died more than RUN_MAX_STALLED times), or whose
   * job is gone: it ends `error` with the reason, marked dead-lettered, its job kept for a
   * `redrive`. The same transition as every end (thread released or handed over), emitting
   * `run.ended` with cause `dead_lettered` (webhook, cleanup, the delegation parent notified).
   */
  deadLetter(req: DeadLetterRequest, ctx?: C): Promise<EndResult> {
    return this.end(
      {
        tenantId: req.tenantId,
        runId: req.runId,
        status: 'error',
        error: { error: 'DeadLetterError', message: `The run was dead-lettered: ${req.reason}` },
        cause: 'dead_lettered',
        deadLetter: { reason: req.reason, job: req.job },
      },
      ctx,
    );
  }

  /**
   * Re-drives a dead-lettered run: in one transaction it takes the run's thread back (refused when
   * another run holds it) and makes the run `pending` again, no longer dead-lettered, one more
   * redrive; after the commit its stored job is enqueued under a new job id (`runJobId`: attempts
   * reset). The executor resumes it from its last checkpoint (the run started before). When the
   * enqueue fails the run ends `error` again and an UnavailableError is thrown.
   */
  async redrive(tenantId: string, runId: string): Promise<RedriveResult> {
    const now = this.now();
    let out: (RedriveResult & { job?: RunJobSpec }) | undefined;
    for (let attempt = 1; out === undefined; attempt++) {
      try {
        out = await this.redriveTx(tenantId, runId, now);
      } catch (err) {
        if (err instanceof HolderChanged && attempt < 5) continue;
        throw err;
      }
    }
    if (out.kind !== 'redriven') return out;
    const { job, ...result } = out;
    this.opts.logger?.info({ run_id: runId, tenant: tenantId, job_id: result.jobId }, 'dead-lettered run re-driven');
    await this.emit({ type: 'run.redriven', run: result.run, jobId: result.jobId });
    if (job && this.opts.jobs) {
      try {
        await this.opts.jobs.enqueue(job.payload, {
          jobId: result.jobId,
          group: tenantId,
          ...(job.attempts !== undefined ? { attempts: job.attempts } : {}),
          ...(job.backoffMs !== undefined ? { backoffMs: job.backoffMs } : {}),
        });
      } catch (err) {
        const message = `Could not enqueue run ${runId}: ${errorMessage(err)}`;
        await this.end({ tenantId, runId, status: 'error', error: { error: 'Error', message }, cause: 'enqueue_failed' }).catch(() => undefined);
        throw new UnavailableError(`${message}. The run queue is unavailable; retry later.`, { cause: err });
      }
    }
    return result;
  }

  private redriveTx(tenantId: string, runId: string, now: number): Promise<RedriveResult & { job?: RunJobSpec }> {
    return this.store.writeTransaction(async (db): Promise<RedriveResult & { job?: RunJobSpec }> => {
      let q = db.selectFrom('runs').selectAll().where('tenant_id', '=', tenantId).where('run_id', '=', runId);
      if (this.store.dialect === 'mysql') q = q.forUpdate();
      const row = await q.executeTakeFirst();
      if (!row) return { kind: 'missing' };
      const run = toRun(row);
      if (run.status !== 'error' || !run.deadLetter) return { kind: 'not_dead_lettered', run };
      const job = decodeJob(row.job);
      if (!job) return { kind: 'no_job', run };
      const took = await db
        .updateTable('threads')
        .set({ active_run_id: runId, status: 'busy', updated_at: now })
        .where('tenant_id', '=', tenantId)
        .where('thread_id', '=', run.threadId)
        .where('active_run_id', 'is', null)
        .executeTakeFirst();
      if (took.numUpdatedRows === 0n) {
        const t = await db
          .selectFrom('threads')
          .select('active_run_id')
          .where('tenant_id', '=', tenantId)
          .where('thread_id', '=', run.threadId)
          .executeTakeFirst();
        if (!t) return { kind: 'missing' };
        if (t.active_run_id === null) throw new HolderChanged();
        return { kind: 'thread_busy', run, holder: t.active_run_id };
      }
      const updated = await db
        .updateTable('runs')
        .set((eb) => ({
          status: 'pending',
          ended_at: null,
          error: null,
          dead_letter_reason: null,
          dead_lettered_at: null,
          deferred: 0,
          updated_at: now,
          redrives: eb('redrives', '+', 1),
        }))
        .where('tenant_id', '=', tenantId)
        .where('run_id', '=', runId)
        .where('status', '=', 'error')
        .where('dead_letter_reason', 'is not', null)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) throw new HolderChanged();
      const redriven: RunRecord = {
        ...run,
        status: 'pending',
        endedAt: null,
        error: null,
        deadLetter: null,
        deferred: false,
        updatedAt: new Date(now),
        redrives: run.redrives + 1,
      };
      return { kind: 'redriven', run: redriven, jobId: runJobId(redriven), job };
    });
  }

  /** The tenant's dead-lettered runs, newest first. */
  async listDeadLettered(tenantId: string, opts: { limit: number; offset: number }): Promise<RunRecord[]> {
    const rows = await this.store.writeTransaction((db) =>
      db
        .selectFrom('runs')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('dead_lettered_at', 'is not', null)
        .orderBy('dead_lettered_at', 'desc')
        .orderBy('seq', 'desc')
        .limit(opts.limit)
        .offset(opts.offset)
        .execute(),
    );
    return rows.map(toRun);
  }

  /** The job stored with a run (admitted with one, or kept when it was dead-lettered). */
  async storedJob(tenantId: string, runId: string): Promise<RunJobSpec | undefined> {
    const row = await this.store.writeTransaction((db) =>
      db.selectFrom('runs').select('job').where('tenant_id', '=', tenantId).where('run_id', '=', runId).executeTakeFirst(),
    );
    return decodeJob(row?.job ?? null);
  }

  /**
   * Announces again the end of a run that had ended (a job that ran before, or ran into a run
   * cancelled before it started): `run.ended` with cause `replay`, no transition.
   */
  async replayEnd(run: RunRecord, ctx: C | undefined, values: JsonObject | null, error: RunErrorInfo | undefined = recordedError(run)): Promise<void> {
    await this.emit({ type: 'run.ended', run, cause: 'replay', threadStatus: undefined, values, error, ctx });
  }

  // -------------------------------------------------------------------------
  // Removal (DELETE of a run, cancel with rollback)

  /**
   * Deletes a run record (LangGraph `DELETE /threads/{id}/runs/{run_id}`, and the last step of a
   * rollback). Only an ended run: one that is pending or running must be cancelled first (`active`).
   * A worker still finishing a deleted run finds no record, so it writes nothing to the thread.
   */
  async deleteRun(tenantId: string, runId: string): Promise<RunDeleteResult> {
    return this.store.writeTransaction(async (db) => {
      const row = await db.selectFrom('runs').selectAll().where('tenant_id', '=', tenantId).where('run_id', '=', runId).executeTakeFirst();
      if (!row) return { kind: 'missing' };
      const run = toRun(row);
      if (ACTIVE.includes(run.status)) return { kind: 'active', run };
      const del = await db
        .deleteFrom('runs')
        .where('tenant_id', '=', tenantId)
        .where('run_id', '=', runId)
        .where('status', 'not in', ACTIVE)
        .executeTakeFirst();
      return del.numDeletedRows === 0n ? { kind: 'active', run } : { kind: 'deleted', run };
    });
  }

  /**
   * Sets a thread's record to what its checkpoints now hold after a change outside a run: a
   * rollback (the latest checkpoint once the rolled-back run's are gone), or an edit (updateState,
   * copy, supersteps). Only while no run holds the thread; false otherwise (a run owns its state
   * now, and its end writes the record).
   */
  async restoreThread(tenantId: string, threadId: string, state: { status: Exclude<ThreadStatus, 'busy'>; values: JsonObject | null }): Promise<boolean> {
    const res = await this.store.writeStatement((db) =>
      db
        .updateTable('threads')
        .set({ status: state.status, state_values: state.values === null ? null : JSON.stringify(state.values), updated_at: this.now() })
        .where('tenant_id', '=', tenantId)
        .where('thread_id', '=', threadId)
        .where('active_run_id', 'is', null)
        .executeTakeFirst(),
    );
    return res.numUpdatedRows > 0n;
  }

  // -------------------------------------------------------------------------
  // Recovery

  /**
   * Pending runs left behind by a crash (the sweeper): a deferred run whose thread no run holds is
   * handed the thread; a run that holds its thread but whose job the queue has never seen (the
   * process died between the admission's commit and the enqueue) gets its job enqueued. Returns
   * the run ids it enqueued. Safe on several processes at once (guarded updates, job id = run id).
   */
  async recoverPending(olderThan: Date, limit = 100): Promise<string[]> {
    const jobs = this.opts.jobs;
    if (!jobs) return [];
    const enqueued: string[] = [];
    for (const run of await this.store.listRunsInStatus('pending', olderThan, limit)) {
      try {
        if (run.deferred) {
          const job = await this.store
            .writeTransaction(async (db) => {
              const took = await db
                .updateTable('threads')
                .set({ active_run_id: run.runId, status: 'busy', updated_at: this.now() })
                .where('tenant_id', '=', run.tenantId)
                .where('thread_id', '=', run.threadId)
                .where('active_run_id', 'is', null)
                .executeTakeFirst();
              if (took.numUpdatedRows === 0n) return undefined;
              // Only the oldest deferred run of the thread may take it.
              const first = await db
                .selectFrom('runs')
                .select(['run_id', 'job'])
                .where('tenant_id', '=', run.tenantId)
                .where('thread_id', '=', run.threadId)
                .where('deferred', '=', 1)
                .where('status', '=', 'pending')
                .orderBy('seq')
                .limit(1)
                .executeTakeFirst();
              if (first?.run_id !== run.runId) throw new HolderChanged();
              await db
                .updateTable('runs')
                .set({ deferred: 0, updated_at: this.now() })
                .where('tenant_id', '=', run.tenantId)
                .where('run_id', '=', run.runId)
                .execute();
              return decodeJob(first.job) ?? null;
            })
            .catch((err: unknown) => {
              if (err instanceof HolderChanged) return undefined;
              throw err;
            });
          if (job === undefined) continue;
          if (job && (await this.enqueue(run.runId, run.tenantId, job))) enqueued.push(run.runId);
          await this.emit({ type: 'run.promoted', run: { ...run, deferred: false }, after: '' });
          continue;
        }
        // Its current job: a re-driven run's is a new one.
        const jobId = runJobId(run);
        const state = jobs.getState ? await jobs.getState(jobId) : 'unknown';
        if (state !== 'unknown') continue;
        const row = await this.store.writeTransaction((db) =>
          db.selectFrom('runs').select('job').where('tenant_id', '=', run.tenantId).where('run_id', '=', run.runId).executeTakeFirst(),
        );
        const job = decodeJob(row?.job ?? null);
        if (job && (await this.enqueue(jobId, run.tenantId, job))) enqueued.push(run.runId);
      } catch (err) {
        this.opts.logger?.warn({ run_id: run.runId, err: errorMessage(err) }, 'pending run not recovered');
      }
    }
    return enqueued;
  }
}

/** The order uploads are listed in everywhere (created_at, then upload_id), for rows read without ORDER BY. */
function byCreationThenId(a: Selectable<ThreadUploadsTable>, b: Selectable<ThreadUploadsTable>): number {
  return a.created_at - b.created_at || (a.upload_id < b.upload_id ? -1 : a.upload_id > b.upload_id ? 1 : 0);
}
