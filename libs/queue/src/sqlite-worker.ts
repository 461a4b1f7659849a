/** The workers of a SqliteQueue (sqlite-queue.ts): take jobs up to their concurrency, run them, settle each outcome. */
import { UnavailableError, errorMessage, type Logger } from '@agentloop/core';
import { DeferJobError, ReleaseJobError, type Job, type JobHandler, type QueueWorker, type WorkerOptions } from './types.js';
import { DEFAULT_CLOSE_GRACE_MS, settledWithin } from './validate.js';
import { DEFAULT_STALLED_INTERVAL_MS, TAKE_BATCH } from './sqlite-database.js';
import type { Outcome, SqliteQueue, Taken } from './sqlite-queue.js';

interface ActiveRun {
  job: Taken;
  ac: AbortController;
  done: Promise<void>;
}

export class SqliteWorker implements QueueWorker {
  private readonly active = new Map<number, ActiveRun>();
  private readonly concurrency: number;
  private readonly maintenance: NodeJS.Timeout;
  private scheduled = false;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly queue: SqliteQueue,
    private readonly handler: JobHandler,
    opts: WorkerOptions,
    private readonly logger: Logger,
  ) {
    this.concurrency = opts.concurrency;
    const maxStalled = opts.maxStalledCount ?? 1;
    // The stalled-job check; its pump also picks up jobs another process added to a shared file.
    this.maintenance = setInterval(() => {
      try {
        this.queue.recoverStalled(maxStalled, false);
      } catch (err) {
        this.logger.warn({ err: errorMessage(err) }, 'stalled-job check failed');
      }
      // Jobs another process added to a shared file are seen here.
      this.queue.wakeAll();
    }, opts.stalledIntervalMs ?? DEFAULT_STALLED_INTERVAL_MS);
    this.maintenance.unref();
  }

  /** Takes jobs soon (once, however many wake-ups come before). */
  schedule(): void {
    if (this.scheduled || this.closing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    try {
      while (!this.closing && this.active.size < this.concurrency) {
        const want = Math.min(this.concurrency - this.active.size, TAKE_BATCH);
        const jobs = this.queue.take(want);
        for (const job of jobs) this.start(job);
        if (jobs.length < want) return;
      }
    } catch (err) {
      // The file is busy or failing: try again shortly rather than stall until the next wake-up.
      this.logger.warn({ err: errorMessage(err) }, 'could not take jobs; retrying in 1 s');
      setTimeout(() => this.schedule(), 1_000).unref();
    }
  }

  private start(job: Taken): void {
    const ac = new AbortController();
    // The payload was read for this attempt alone: the handler may keep it.
    const view: Job = { id: job.id, payload: job.payload, attemptsMade: job.attemptsMade, attempts: job.attempts };
    const entry: ActiveRun = { job, ac, done: Promise.resolve() };
    entry.done = (async () => {
      let outcome: Outcome;
      try {
        await this.handler(view, ac.signal);
        outcome = { ok: true };
      } catch (err) {
        if (err instanceof DeferJobError) outcome = { deferMs: Math.max(0, err.delayMs), parked: err.group !== undefined };
        else outcome = err instanceof ReleaseJobError || (ac.signal.aborted && this.closing) ? { requeue: true } : { ok: false, err };
      }
      // Not active any more: handed back by close() after the grace period; this late outcome is void.
      if (!this.active.delete(job.rowid)) return;
      this.settle(job, outcome);
      this.schedule();
    })();
    this.active.set(job.rowid, entry);
  }

  /** Records an outcome; if the file refuses it, retries a few times (else the job is recovered as stalled after a restart). */
  private settle(job: Taken, outcome: Outcome, tries = 0): void {
    try {
      this.queue.settle(job, outcome);
    } catch (err) {
      if (this.queue.databaseClosed) return;
      if (tries >= 30) {
        this.logger.error(
          { job_id: job.id, err: errorMessage(err) },
          'could not record the outcome of a job; it stays active until the stalled-job check of a restart',
        );
        return;
      }
      this.logger.warn({ job_id: job.id, err: errorMessage(err) }, 'could not record the outcome of a job; retrying in 1 s');
      setTimeout(() => this.settle(job, outcome, tries + 1), 1_000).unref();
    }
  }

  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.closing ??= this.doClose(graceMs);
    return this.closing;
  }

  private async doClose(graceMs: number): Promise<void> {
    clearInterval(this.maintenance);
    const all = () => Promise.all([...this.active.values()].map((a) => a.done));
    if (!(await settledWithin(all(), graceMs))) {
      this.logger.warn({ active: this.active.size, grace_ms: graceMs }, 'worker close: aborting active jobs after the grace period');
      const stuck = [...this.active.values()];
      for (const a of stuck) a.ac.abort(new UnavailableError('The worker is shutting down'));
      if (!(await settledWithin(all(), Math.min(graceMs, 5_000)))) {
        // Handlers that ignore the signal: hand their jobs back; their late outcome is ignored (state no longer active).
        for (const a of stuck) if (this.active.delete(a.job.rowid)) this.settle(a.job, { requeue: true });
      }
    }
    this.queue.removeWorker(this);
  }
}
