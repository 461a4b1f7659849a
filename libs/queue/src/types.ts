/**
 * Durable job queue. BullMqQueue (cluster, Redis) and MemoryQueue (embedded)
 * pass the same contract suite (src/contract.ts).
 */

export interface EnqueueOptions {
  /** Job id. Adding an id that already exists (waiting, active, delayed or kept completed/failed) is a no-op. */
  jobId: string;
  /** Total attempts including the first (default 1). */
  attempts?: number;
  /** Base delay for exponential backoff between attempts (default 1000 ms): base * 2^(attempt-1). */
  backoffMs?: number;
  /** Delay before the first attempt. */
  delayMs?: number;
  /**
   * The job's fairness group (its tenant). On a queue made with `fairness`, groups share the
   * workers by weight (start-time fair queueing, fair-tags.ts); jobs without one share group "".
   * Ignored by a queue without `fairness` (FIFO).
   */
  group?: string;
}

export interface EnqueueResult {
  jobId: string;
  /** False when a job with this id already existed. */
  added: boolean;
}

export interface Job {
  id: string;
  payload: Uint8Array;
  /** Attempts already made before this one (0 on the first). */
  attemptsMade: number;
  /** Total attempts allowed. */
  attempts: number;
}

export type JobHandler = (job: Job, signal: AbortSignal) => Promise<void>;

export interface WorkerOptions {
  concurrency: number;
  /** BullMQ lock duration (ms); stalled jobs are taken over after it expires. */
  lockDurationMs?: number;
  /** BullMQ stalled-job check interval (ms). */
  stalledIntervalMs?: number;
  /** Times a job may stall (its worker died) before it fails; BullMQ default 1. Ignored in memory. */
  maxStalledCount?: number;
}

export interface QueueWorker {
  /** Stops taking jobs and waits up to graceMs for active ones. */
  close(graceMs?: number): Promise<void>;
}

export type JobState = 'waiting' | 'delayed' | 'active' | 'completed' | 'failed' | 'unknown';

/** How full a queue is now (the ops console's queue panel, issue 16). */
export interface QueueStats {
  /** Jobs ready to run that no worker has taken yet. */
  waiting: number;
  /** Jobs whose first attempt or retry is scheduled later. */
  delayed: number;
  /** Jobs a worker is running. */
  active: number;
  /** Jobs that failed for good and are still kept. */
  failed: number;
  /** How long the oldest waiting job has been ready without a worker taking it (ms); 0 when none waits. */
  oldestWaitingMs: number;
}

export interface JobQueue {
  readonly name: string;
  enqueue(payload: Uint8Array, opts: EnqueueOptions): Promise<EnqueueResult>;
  /** Starts a worker. A handler that throws is retried per the job's attempts/backoff, unless it throws UnrecoverableJobError. */
  process(handler: JobHandler, opts: WorkerOptions): Promise<QueueWorker>;
  getState(jobId: string): Promise<JobState>;
  /** The payload of a job the queue still keeps (waiting, active, or kept completed/failed); undefined otherwise. */
  getPayload(jobId: string): Promise<Uint8Array | undefined>;
  /** Counts of the queue's jobs by state and the age of the oldest waiting one. */
  stats(): Promise<QueueStats>;
  /**
   * Makes up to `count` jobs that were deferred *parked* under `group` (DeferJobError with a
   * group) ready now, lowest fairness tag first; resolves to how many. A worker calls it when the
   * group may run one more job (a tenant's run ended), so parked jobs need not wait out their
   * delay — the delay is only a safety net. Absent on MemoryQueue (no fairness there).
   */
  wakeParked?(group: string, count: number): Promise<number>;
  close(): Promise<void>;
}

/** Thrown by a handler to fail a job without further attempts. */
export class UnrecoverableJobError extends Error {
  override name = 'UnrecoverableJobError';
}

/**
 * Thrown by a handler to hand its job back to the queue without counting an attempt: another
 * worker takes it at once. A worker draining for shutdown uses it to stop a job at a safe point
 * (e.g. a run after its current step) instead of waiting for the job to end.
 */
export class ReleaseJobError extends Error {
  override name = 'ReleaseJobError';
}

/**
 * Thrown by a handler that will not run its job now (e.g. the job's tenant is at its concurrency
 * cap): the job goes back to the queue as delayed for `delayMs`, without counting an attempt, and
 * the worker takes other jobs meanwhile — so jobs queued behind it are not held up. With a `group`
 * the job is *parked* under it: `wakeParked(group)` makes it ready before its delay is over.
 */
export class DeferJobError extends Error {
  override name = 'DeferJobError';
  constructor(
    message: string,
    readonly delayMs: number,
    readonly group?: string,
  ) {
    super(message);
  }
}
