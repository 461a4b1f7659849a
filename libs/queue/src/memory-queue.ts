import { UnavailableError, silentLogger, type Logger } from '@agentloop/core';
import {
  DeferJobError,
  ReleaseJobError,
  UnrecoverableJobError,
  type EnqueueOptions,
  type EnqueueResult,
  type Job,
  type JobHandler,
  type JobQueue,
  type JobState,
  type QueueStats,
  type QueueWorker,
  type WorkerOptions,
} from './types.js';
import { assertQueueName, assertWorkerOptions, backoffDelay, DEFAULT_CLOSE_GRACE_MS, DEFAULT_RETENTION_MS, resolveEnqueue, settledWithin } from './validate.js';

interface MemJob {
  id: string;
  payload: Uint8Array;
  attempts: number;
  backoffMs: number;
  attemptsMade: number;
  state: JobState;
  finishedAt?: number;
  timer?: NodeJS.Timeout;
  /** Bumped each time the job is handed to a handler; a stale handler's outcome is ignored. */
  run: number;
  /** When the job last became ready (epoch ms): the age `stats()` reports. */
  readySince?: number;
}

export interface MemoryQueueOptions {
  /** How long completed/failed jobs are kept, so their ids stay deduplicated (default 24 h). */
  retentionMs?: number;
  logger?: Logger;
}

/**
 * In-process JobQueue for the embedded mode: job-id dedupe (including kept
 * completed/failed jobs), delays, retries with exponential backoff,
 * UnrecoverableJobError, concurrency, graceful worker close.
 */
export class MemoryQueue implements JobQueue {
  /** When sweep() last walked the jobs. */
  private lastSweep = 0;
  private readonly jobs = new Map<string, MemJob>();
  private readonly ready: MemJob[] = [];
  private readonly workers = new Set<MemoryWorker>();
  private readonly retentionMs: number;
  private readonly logger: Logger;
  private closed = false;

  constructor(
    readonly name: string,
    opts: MemoryQueueOptions = {},
  ) {
    assertQueueName(name);
    this.retentionMs = opts.retentionMs ?? DEFAULT_RETENTION_MS;
    this.logger = (opts.logger ?? silentLogger()).child({ component: 'queue', queue: name });
  }

  async enqueue(payload: Uint8Array, opts: EnqueueOptions): Promise<EnqueueResult> {
    if (this.closed) throw new UnavailableError(`Queue ${this.name} is closed`);
    const r = resolveEnqueue(opts);
    this.sweep();
    if (this.kept(opts.jobId)) return { jobId: opts.jobId, added: false };
    const job: MemJob = {
      id: opts.jobId,
      payload: new Uint8Array(payload),
      attempts: r.attempts,
      backoffMs: r.backoffMs,
      attemptsMade: 0,
      state: 'waiting',
      run: 0,
    };
    this.jobs.set(job.id, job);
    if (r.delayMs > 0) this.delay(job, r.delayMs);
    else this.makeReady(job);
    return { jobId: job.id, added: true };
  }

  async process(handler: JobHandler, opts: WorkerOptions): Promise<QueueWorker> {
    if (this.closed) throw new UnavailableError(`Queue ${this.name} is closed`);
    assertWorkerOptions(opts);
    const w = new MemoryWorker(this, handler, opts.concurrency, this.logger);
    this.workers.add(w);
    queueMicrotask(() => w.pump());
    return w;
  }

  async getPayload(jobId: string): Promise<Uint8Array | undefined> {
    this.sweep();
    const p = this.kept(jobId)?.payload;
    return p === undefined ? undefined : new Uint8Array(p);
  }

  async getState(jobId: string): Promise<JobState> {
    this.sweep();
    return this.kept(jobId)?.state ?? 'unknown';
  }

  async stats(): Promise<QueueStats> {
    this.sweep();
    const out: QueueStats = { waiting: 0, delayed: 0, active: 0, failed: 0, oldestWaitingMs: 0 };
    const now = Date.now();
    for (const j of this.jobs.values()) {
      if (j.state === 'waiting') {
        out.waiting++;
        out.oldestWaitingMs = Math.max(out.oldestWaitingMs, now - (j.readySince ?? now));
      } else if (j.state === 'delayed') out.delayed++;
      else if (j.state === 'active') out.active++;
      else if (j.state === 'failed') out.failed++;
    }
    return out;
  }

  /** Closes the workers (default grace) and drops timers; jobs are lost with the process. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.workers].map((w) => w.close()));
    for (const j of this.jobs.values()) clearTimeout(j.timer);
  }

  /** @internal next ready job for a worker. */
  take(): MemJob | undefined {
    const job = this.ready.shift();
    if (job) {
      job.state = 'active';
      job.run++;
    }
    return job;
  }

  /** @internal */
  removeWorker(w: MemoryWorker): void {
    this.workers.delete(w);
  }

  /** @internal the outcome of one attempt. */
  settle(job: MemJob, run: number, outcome: Outcome): void {
    if (job.run !== run || job.state !== 'active') return;
    if ('requeue' in outcome) {
      // Handed back by a closing worker: not a failed attempt.
      this.makeReady(job, true);
      return;
    }
    if ('deferMs' in outcome) {
      // Deferred by its handler: back behind the others, not a failed attempt.
      this.delay(job, outcome.deferMs);
      return;
    }
    if (outcome.ok) {
      this.finish(job, 'completed');
      return;
    }
    job.attemptsMade++;
    const unrecoverable = outcome.err instanceof UnrecoverableJobError;
    if (unrecoverable || job.attemptsMade >= job.attempts) {
      this.logger.warn({ job_id: job.id, attempts_made: job.attemptsMade, err: outcome.err }, 'job failed');
      this.finish(job, 'failed');
      return;
    }
    this.logger.info({ job_id: job.id, attempts_made: job.attemptsMade, err: outcome.err }, 'job attempt failed; retrying');
    this.delay(job, backoffDelay(job.backoffMs, job.attemptsMade));
  }

  private finish(job: MemJob, state: 'completed' | 'failed'): void {
    job.state = state;
    job.finishedAt = Date.now();
    this.pumpAll();
  }

  private delay(job: MemJob, ms: number): void {
    job.state = 'delayed';
    job.timer = setTimeout(() => {
      job.timer = undefined;
      this.makeReady(job);
    }, ms);
    job.timer.unref();
  }

  private makeReady(job: MemJob, front = false): void {
    job.state = 'waiting';
    job.readySince = Date.now();
    if (front) this.ready.unshift(job);
    else this.ready.push(job);
    this.pumpAll();
  }

  private pumpAll(): void {
    for (const w of this.workers) w.pump();
  }

  /** The job with this id, unless it finished longer ago than the retention (then it is forgotten now). */
  private kept(jobId: string): MemJob | undefined {
    const job = this.jobs.get(jobId);
    if (job?.finishedAt !== undefined && job.finishedAt < Date.now() - this.retentionMs) {
      this.jobs.delete(jobId);
      return undefined;
    }
    return job;
  }

  /**
   * Forgets completed/failed jobs older than the retention. At most once a second: it walks every
   * job kept, and running it on every enqueue made submissions quadratic in the jobs kept (24 h of
   * them by default; issue 9 bench, in-flight workload).
   */
  private sweep(): void {
    const now = Date.now();
    if (now - this.lastSweep < 1_000) return;
    this.lastSweep = now;
    const cutoff = now - this.retentionMs;
    for (const [id, j] of this.jobs) {
      if (j.finishedAt !== undefined && j.finishedAt < cutoff) this.jobs.delete(id);
    }
  }
}

/** What became of one attempt. */
type Outcome = { ok: true } | { ok: false; err: unknown } | { requeue: true } | { deferMs: number };

interface ActiveRun {
  job: MemJob;
  run: number;
  ac: AbortController;
  done: Promise<void>;
}

class MemoryWorker implements QueueWorker {
  private readonly active = new Set<ActiveRun>();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly queue: MemoryQueue,
    private readonly handler: JobHandler,
    private readonly concurrency: number,
    private readonly logger: Logger,
  ) {}

  pump(): void {
    while (!this.closing && this.active.size < this.concurrency) {
      const job = this.queue.take();
      if (!job) return;
      this.start(job);
    }
  }

  private start(job: MemJob): void {
    const ac = new AbortController();
    const run = job.run;
    const view: Job = { id: job.id, payload: new Uint8Array(job.payload), attemptsMade: job.attemptsMade, attempts: job.attempts };
    const entry: ActiveRun = { job, run, ac, done: Promise.resolve() };
    entry.done = (async () => {
      let outcome: Outcome;
      try {
        await this.handler(view, ac.signal);
        outcome = { ok: true };
      } catch (err) {
        if (err instanceof DeferJobError) outcome = { deferMs: Math.max(0, err.delayMs) };
        else outcome = err instanceof ReleaseJobError || (ac.signal.aborted && this.closing) ? { requeue: true } : { ok: false, err };
      }
      this.active.delete(entry);
      this.queue.settle(job, run, outcome);
      this.pump();
    })();
    this.active.add(entry);
  }

  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.closing ??= this.doClose(graceMs);
    return this.closing;
  }

  private async doClose(graceMs: number): Promise<void> {
    const all = () => Promise.all([...this.active].map((a) => a.done));
    if (!(await settledWithin(all(), graceMs))) {
      this.logger.warn({ active: this.active.size, grace_ms: graceMs }, 'worker close: aborting active jobs after the grace period');
      const stuck = [...this.active];
      for (const a of stuck) a.ac.abort(new UnavailableError('The worker is shutting down'));
      if (!(await settledWithin(all(), Math.min(graceMs, 5_000)))) {
        // Handlers that ignore the signal: hand their jobs back; their late outcome is ignored.
        for (const a of stuck) this.queue.settle(a.job, a.run, { requeue: true });
      }
    }
    this.queue.removeWorker(this);
  }
}
