/**
 * Durable JobQueue over one SQLite file (better-sqlite3) for the embedded mode: what MemoryQueue
 * does (job-id dedupe incl. kept completed/failed jobs, delays, retries with exponential backoff,
 * UnrecoverableJobError, ReleaseJobError, DeferJobError, concurrency, graceful close), and jobs
 * survive the process. Several queues share one file (`queue` column), e.g. `runs` and `webhooks`.
 *
 * Crash recovery (BullMQ's stalled jobs): every process using the file is an *owner* with a row in
 * `queue_owners` (host, pid, heartbeat); an active job carries its owner. When a worker starts, and
 * every `stalledIntervalMs` after, jobs active under an owner that is gone — its pid no longer
 * runs on this host, or its heartbeat is older than the lease — go back to waiting with their
 * `stalled` count increased (no attempt counted), or fail once they stalled more than
 * `maxStalledCount` times.
 *
 * Cost per job: one INSERT (enqueue), one UPDATE…RETURNING (take, through the partial index of
 * ready jobs: O(log n), its rows also saying when the next delayed job is due: a single-row take,
 * then a batch take only when more jobs are ready), one UPDATE (settle); statements are prepared once. Workers are woken in process on enqueue, by a timer only
 * for the next delayed job, and by the stalled-job check.
 *
 * Fairness (`fairness`, docs/adr/0008-fair-scheduling.md): each job gets its start tag at enqueue
 * (fair-tags.ts) from the virtual time and its group's finish tag, kept in the file: the enqueue's
 * INSERT computes the tag from them and stores the job's finish tag, which a trigger makes its
 * group's; workers take ready jobs by (tag, ready_at, seq), and a trigger of the take moves the
 * virtual time on. Each is one statement, atomic without a transaction around it.
 * Without it every tag is 0: FIFO by readiness.
 *
 * Another connection's write lock (another process, an `EMBEDDED_THREADS=orchestrator` thread) is
 * waited for asynchronously, never by SQLite sleeping on this thread (issue 9, sqlite-database.ts):
 * an add, a settle, a wake-up of parked jobs and the reads go through SqliteQueueDatabase.run; the
 * take, which the worker calls synchronously, finds no job while the file is locked and wakes the
 * workers again shortly.
 */

import { UnavailableError, errorMessage, isSqliteBusy, silentLogger, sqliteBusyBackoffMs, type Logger } from '@agentloop/core';
import {
  UnrecoverableJobError,
  type EnqueueOptions,
  type EnqueueResult,
  type JobHandler,
  type JobQueue,
  type JobState,
  type QueueStats,
  type QueueWorker,
  type WorkerOptions,
} from './types.js';
import { assertQueueName, assertWorkerOptions, backoffDelay, DEFAULT_RETENTION_MS, resolveEnqueue } from './validate.js';
import { ACTIVE, COMPLETED, FAILED, QUEUED, SqliteQueueDatabase, TAKE_BATCH } from './sqlite-database.js';
import { SqliteWorker } from './sqlite-worker.js';
import { finishTag, weightOf, type FairnessOptions } from './fair-tags.js';

export { SqliteQueueDatabase, SQL, type SqliteQueueDatabaseOptions } from './sqlite-database.js';

export interface SqliteQueueOptions {
  /** The file's database, shared with other queues; or `path`, a file this queue opens and closes. */
  database?: SqliteQueueDatabase;
  path?: string;
  /** How long completed/failed jobs are kept, so their ids stay deduplicated (default 24 h). */
  retentionMs?: number;
  /** Share the workers among job groups (tenants) by weight (start-time fair queueing); unset: FIFO. */
  fairness?: FairnessOptions;
  logger?: Logger;
}

/** A job taken by a worker, as the worker keeps it. */
export interface Taken {
  rowid: number;
  id: string;
  payload: Uint8Array;
  attempts: number;
  attemptsMade: number;
  backoffMs: number;
  run: number;
  readyAt: number;
  seq: number;
  tag: number;
  group: string;
}

/** A job's row as getState and getPayload read it. */
type JobRow = { state: number; readyAt: number; finishedAt: number | null; payload: Buffer };

/** A row of a take statement: the job, and when the next queued job not taken is ready. */
type TakenRow = Omit<Taken, 'payload'> & { payload: Buffer; nextReadyAt: number | null };

/** Tries of a job's outcome that found the file locked past the busy timeout, 1 s apart, as SqliteWorker tries one that failed. */
const SETTLE_TRIES = 30;

/** What became of one attempt. */
export type Outcome = { ok: true } | { ok: false; err: unknown } | { requeue: true } | { deferMs: number; parked: boolean };

export class SqliteQueue implements JobQueue {
  private readonly database: SqliteQueueDatabase;
  private readonly ownsDatabase: boolean;
  private readonly retentionMs: number;
  private readonly fairness: FairnessOptions | undefined;
  private readonly logger: Logger;
  private readonly workers = new Set<SqliteWorker>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Number.POSITIVE_INFINITY;
  /**
   * False once a take found no ready job, until something may have made one ready (an add, a
   * hand-back, a timer, the stalled-job check): the pump after each finished job then costs nothing.
   */
  private mayHaveReady = true;
  private lastSweep = 0;
  private closed = false;
  /** Since when takes have found the file locked by another connection, and the wake-up that tries again. */
  private busySince: number | undefined;
  private busyRetries = 0;
  private busyTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    opts: SqliteQueueOptions,
  ) {
    assertQueueName(name);
    this.logger = (opts.logger ?? silentLogger()).child({ component: 'queue', queue: name });
    if (!opts.database && !opts.path) throw new Error('SqliteQueue needs a database or a path');
    this.ownsDatabase = !opts.database;
    this.database = opts.database ?? new SqliteQueueDatabase({ path: opts.path! });
    this.database.attach(this);
    this.retentionMs = opts.retentionMs ?? DEFAULT_RETENTION_MS;
    this.fairness = opts.fairness;
  }

  async enqueue(payload: Uint8Array, opts: EnqueueOptions): Promise<EnqueueResult> {
    if (this.closed) throw new UnavailableError(`Queue ${this.name} is closed`);
    const r = resolveEnqueue(opts);
    const now = Date.now();
    this.sweep(now);
    const readyAt = now + r.delayMs;
    const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
    const group = opts.group ?? '';
    const fair = this.fairness;
    const seq = this.database.nextSeq();
    const params = fair
      ? {
          queue: this.name,
          id: opts.jobId,
          payload: bytes,
          attempts: r.attempts,
          backoffMs: r.backoffMs,
          readyAt,
          seq,
          grp: group,
          // finishTag(tag, weight) = tag + 1/weight, the weight checked here; the statement adds the tag.
          step: finishTag(0, weightOf(fair, group)),
          retainedSince: now - this.retentionMs,
        }
      : undefined;
    // One statement in autocommit mode: tried again if it meets another connection's lock.
    const changes = this.database.run(() =>
      params
        ? this.database.stmt('enqueueFair').run(params).changes
        : this.database.stmt('enqueue').run(this.name, opts.jobId, bytes, r.attempts, r.backoffMs, readyAt, seq, 0, group, now - this.retentionMs).changes,
    );
    if (changes instanceof Promise) return changes.then((n) => this.added(opts.jobId, n, r.delayMs, readyAt));
    return this.added(opts.jobId, changes, r.delayMs, readyAt);
  }

  private added(jobId: string, changes: number, delayMs: number, readyAt: number): EnqueueResult {
    if (changes === 0) return { jobId, added: false };
    if (delayMs > 0) this.wakeAt(readyAt);
    else this.wakeAll();
    return { jobId, added: true };
  }

  async process(handler: JobHandler, opts: WorkerOptions): Promise<QueueWorker> {
    if (this.closed) throw new UnavailableError(`Queue ${this.name} is closed`);
    assertWorkerOptions(opts);
    const w = new SqliteWorker(this, handler, opts, this.logger);
    this.workers.add(w);
    // Jobs a dead process had taken come back before this worker takes anything.
    const recovered = this.recoverStalled(opts.maxStalledCount ?? 1, true);
    if (recovered) await recovered;
    this.wakeAll();
    return w;
  }

  async wakeParked(group: string, count: number): Promise<number> {
    if (this.closed) return 0;
    const rows = this.database.run(() => this.database.stmt('wakeParked').all(Date.now(), this.name, group, count));
    const woken = (rows instanceof Promise ? await rows : rows).length;
    if (woken > 0) this.wakeAll();
    return woken;
  }

  async getState(jobId: string): Promise<JobState> {
    const read = this.row(jobId);
    const row = read instanceof Promise ? await read : read;
    if (!row) return 'unknown';
    switch (row.state) {
      case QUEUED:
        return row.readyAt > Date.now() ? 'delayed' : 'waiting';
      case ACTIVE:
        return 'active';
      case COMPLETED:
        return 'completed';
      case FAILED:
        return 'failed';
      default:
        return 'unknown';
    }
  }

  async getPayload(jobId: string): Promise<Uint8Array | undefined> {
    const read = this.row(jobId);
    const p = (read instanceof Promise ? await read : read)?.payload;
    return p === undefined ? undefined : new Uint8Array(p);
  }

  /** Counts by state; a job handed back by a closing worker (ready at 0) counts as waiting but not in the age. */
  async stats(): Promise<QueueStats> {
    const now = Date.now();
    const read = this.database.run(() => ({
      q: this.database.stmt('statsQueued').get(now, now, this.name) as { waiting: number; queued: number; oldest: number | null },
      active: this.database.stmt('statsActive').get(this.name) as { n: number },
      failed: this.database.stmt('statsFailed').get(this.name) as { n: number },
    }));
    const { q, active, failed } = read instanceof Promise ? await read : read;
    return {
      waiting: q.waiting,
      delayed: q.queued - q.waiting,
      active: active.n,
      failed: failed.n,
      oldestWaitingMs: q.oldest === null ? 0 : Math.max(0, now - q.oldest),
    };
  }

  /** Closes the workers (default grace) and, when it opened it, the file. Jobs stay in the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.workers].map((w) => w.close()));
    clearTimeout(this.timer);
    clearTimeout(this.busyTimer);
    this.database.detach(this);
    if (this.ownsDatabase) await this.database.close();
  }

  /** @internal */
  get databaseClosed(): boolean {
    return this.database.isClosed;
  }

  /**
   * @internal up to `max` ready jobs, now active under this process, oldest first.
   *
   * The worker calls it synchronously, so it cannot wait for another connection's lock: when its
   * first statement (autocommit: it changed nothing) meets one, it finds nothing and wakes the
   * workers again after an asynchronous sleep (issue 9). Once the file has been locked for the
   * busy timeout the error is thrown, as SQLite's own wait would have (the worker tries again a
   * second later).
   */
  take(max: number): Taken[] {
    if (!this.mayHaveReady) return [];
    const limit = Math.min(max, TAKE_BATCH);
    const now = Date.now();
    const params = { owner: this.database.owner, queue: this.name, now };
    // One statement each: the virtual time moving on to the tags taken (a group idle until now is
    // tagged from there) is their trigger's (sqlite-database.ts, queue_fair_advance_on_take).
    // The first job by the cheaper single-row take; the batch take only when more are ready.
    let first: TakenRow | undefined;
    try {
      first = this.database.stmt('takeOne').get(params) as TakenRow | undefined;
    } catch (err) {
      if (!isSqliteBusy(err)) throw err;
      this.busySince ??= now;
      if (now - this.busySince >= this.database.busyTimeoutMs) {
        this.busySince = undefined;
        this.busyRetries = 0;
        throw err;
      }
      this.takeAgainSoon();
      return [];
    }
    this.busySince = undefined;
    this.busyRetries = 0;
    let rows: TakenRow[] = first ? [first] : [];
    try {
      let next: number | null | undefined = first?.nextReadyAt;
      if (first && limit > 1 && next !== null && next !== undefined && next <= now) {
        const more = this.database.stmt('take').all({ ...params, limit: limit - 1 }) as TakenRow[];
        rows = rows.concat(more);
        next = more.length > 0 ? more[0]!.nextReadyAt : undefined;
      }
      if (rows.length < limit) {
        // Nothing more is ready: wake up when the next delayed job is due (the take's rows say when).
        this.mayHaveReady = false;
        if (next === undefined) next = (this.database.stmt('nextReadyAt').get(this.name) as { t: number } | undefined)?.t;
        if (next !== undefined && next !== null) this.wakeAt(next);
      }
    } catch (err) {
      // What was not looked at may be ready (a delayed job's wake-up was not set): the next take
      // looks again, soon when the file was only locked. `first` is committed as active under this
      // live process, which no stalled-job check takes back: it must be handed out now, or it would
      // wait for a restart (SQLITE_BUSY, a full disk, …).
      this.mayHaveReady = true;
      const busy = isSqliteBusy(err);
      if (busy) this.takeAgainSoon();
      if (!first && !busy) throw err;
    }
    if (rows.length > 1) rows.sort((a, b) => a.tag - b.tag || a.readyAt - b.readyAt || a.seq - b.seq);
    return rows.map(({ nextReadyAt: _, ...r }) => ({ ...r, payload: new Uint8Array(r.payload.buffer, r.payload.byteOffset, r.payload.byteLength) }));
  }

  /**
   * @internal records the outcome of one attempt (ignored when the job was handed to someone else
   * meanwhile). The worker calls it synchronously and tries again when it throws; when the file is
   * locked by another connection it is recorded later instead (issue 9): the UPDATE waits in call
   * order (SqliteQueueDatabase.run), and past the busy timeout it is tried again a second later,
   * as the worker would, `tries` counting those.
   */
  settle(job: Taken, outcome: Outcome, tries = 0): void {
    const now = Date.now();
    let state = QUEUED;
    let attemptsMade = job.attemptsMade;
    let readyAt = now;
    let finishedAt: number | null = null;
    let error: string | null = null;
    let parked = 0;
    if ('requeue' in outcome) {
      // Handed back by a closing worker: first in line again, not a failed attempt.
      readyAt = 0;
    } else if ('deferMs' in outcome) {
      // Deferred by its handler: behind the others, not a failed attempt; parked, wakeParked makes it ready sooner.
      readyAt = now + outcome.deferMs;
      parked = outcome.parked ? 1 : 0;
    } else if (outcome.ok) {
      state = COMPLETED;
      finishedAt = now;
    } else {
      attemptsMade++;
      error = errorMessage(outcome.err).slice(0, 2_000);
      if (outcome.err instanceof UnrecoverableJobError || attemptsMade >= job.attempts) {
        this.logger.warn({ job_id: job.id, attempts_made: attemptsMade, err: outcome.err }, 'job failed');
        state = FAILED;
        finishedAt = now;
      } else {
        this.logger.info({ job_id: job.id, attempts_made: attemptsMade, err: outcome.err }, 'job attempt failed; retrying');
        readyAt = now + backoffDelay(job.backoffMs, attemptsMade);
      }
    }
    const seq = this.database.nextSeq();
    const owner = this.database.owner;
    const done = this.database.run(() =>
      this.database.stmt('settle').run(state, attemptsMade, readyAt, seq, finishedAt, error, parked, job.rowid, job.run, owner),
    );
    if (!(done instanceof Promise)) {
      if (state === QUEUED) this.wakeAt(readyAt);
      return;
    }
    done.then(
      () => {
        if (state === QUEUED) this.wakeAt(readyAt);
      },
      (err: unknown) => this.settleLater(job, outcome, tries + 1, err),
    );
  }

  /** A job's outcome the file refused after waiting: tried again a second later, a few times (SqliteWorker's policy). */
  private settleLater(job: Taken, outcome: Outcome, tries: number, err: unknown): void {
    if (this.database.isClosed) return;
    if (tries >= SETTLE_TRIES) {
      this.logger.error(
        { job_id: job.id, err: errorMessage(err) },
        'could not record the outcome of a job; it stays active until the stalled-job check of a restart',
      );
      return;
    }
    this.logger.warn({ job_id: job.id, err: errorMessage(err) }, 'could not record the outcome of a job; retrying in 1 s');
    setTimeout(() => {
      try {
        this.settle(job, outcome, tries);
      } catch (again) {
        this.settleLater(job, outcome, tries + 1, again);
      }
    }, 1_000).unref();
  }

  /**
   * @internal jobs active under dead owners back to waiting (or failed past maxStalledCount). A
   * promise when the file was locked by another connection: it then waits (SqliteQueueDatabase.run)
   * and logs a failure rather than rejecting, since the worker's periodic check does not await it.
   */
  recoverStalled(maxStalledCount: number, orphans: boolean): void | Promise<void> {
    if (this.closed) return;
    let requeued: Array<{ id: string }> = [];
    let failed: Array<{ id: string }> = [];
    // Reads, then one transaction: nothing is changed until its BEGIN IMMEDIATE has the lock, so
    // all of it is tried again when a read or that BEGIN meets another connection's lock.
    const recover = (): void => {
      requeued = [];
      failed = [];
      const dead = this.database.deadOwners(orphans);
      if (dead.length === 0) return;
      const now = Date.now();
      this.database.transaction(() => {
        for (const owner of dead) {
          requeued = requeued.concat(
            this.database.stmt('requeueStalled').all(this.database.nextSeq(), owner, this.name, maxStalledCount) as Array<{ id: string }>,
          );
          const reason = `job stalled more than ${maxStalledCount} time(s): the process running it stopped`;
          failed = failed.concat(this.database.stmt('failStalled').all(now, reason, owner, this.name) as Array<{ id: string }>);
          this.database.forgetOwnerIfIdle(owner);
        }
      });
    };
    const report = (): void => {
      for (const j of requeued) this.logger.warn({ job_id: j.id }, 'job stalled (its process stopped); back in the queue');
      for (const j of failed) this.logger.warn({ job_id: j.id, max_stalled: maxStalledCount }, 'job stalled too many times; failed');
      if (requeued.length > 0) this.wakeAll();
    };
    const done = this.database.run(recover);
    if (!(done instanceof Promise)) return report();
    return done.then(report, (err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'stalled-job check failed'));
  }

  /** @internal */
  removeWorker(w: SqliteWorker): void {
    this.workers.delete(w);
    if (this.workers.size === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
    }
  }

  /** @internal something may be ready now (added elsewhere, or handed back): the workers look. */
  wakeAll(): void {
    this.mayHaveReady = true;
    for (const w of this.workers) w.schedule();
  }

  private wakeAt(t: number): void {
    if (this.workers.size === 0 || this.closed) return;
    const now = Date.now();
    if (t <= now) return this.wakeAll();
    if (t >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = t;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.wakeAll();
    }, t - now);
    this.timer.unref();
  }

  /** Takes again after an asynchronous sleep: a take found the file locked by another connection. */
  private takeAgainSoon(): void {
    if (this.busyTimer !== undefined) return;
    this.busyTimer = setTimeout(() => {
      this.busyTimer = undefined;
      this.wakeAll();
    }, sqliteBusyBackoffMs(this.busyRetries++));
    this.busyTimer.unref();
  }

  private row(jobId: string): JobRow | undefined | Promise<JobRow | undefined> {
    const read = this.database.run(() => this.database.stmt('get').get(this.name, jobId) as JobRow | undefined);
    return read instanceof Promise ? read.then((row) => this.retained(row)) : this.retained(read);
  }

  private retained(row: JobRow | undefined): JobRow | undefined {
    if (!row || (row.finishedAt !== null && row.finishedAt < Date.now() - this.retentionMs)) return undefined;
    return row;
  }

  /**
   * Deletes finished jobs past the retention, at most once a second (through the index of finished
   * jobs). Not waited for when the file is locked (issue 9): the add a second later sweeps.
   */
  private sweep(now: number): void {
    if (now - this.lastSweep < 1_000) return;
    this.lastSweep = now;
    try {
      this.database.stmt('sweep').run(this.name, now - this.retentionMs);
    } catch (err) {
      if (!isSqliteBusy(err)) throw err;
    }
  }
}
