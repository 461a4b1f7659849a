import { randomUUID } from 'node:crypto';
import { UnavailableError, errorMessage, silentLogger, type Logger } from '@agentloop/core';
import { DelayedError, Job as BullJob, Queue, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import { Redis, type ChainableCommander } from 'ioredis';
import {
  DeferJobError,
  ReleaseJobError,
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
import { BullMqFairness, type FairData } from './bullmq-fairness.js';
import { BullMqParking } from './bullmq-parking.js';
import type { FairnessOptions } from './fair-tags.js';
import { assertQueueName, assertWorkerOptions, DEFAULT_CLOSE_GRACE_MS, DEFAULT_RETENTION_MS, resolveEnqueue, settledWithin } from './validate.js';

/** Job data as stored in Redis: the payload in base64, a nonce that tells our add from an existing job's, and the fairness tag and group. */
interface StoredData extends FairData {
  p: string;
  n: string;
}

export interface BullMqQueueOptions {
  name: string;
  redisUrl: string;
  /** Redis key prefix (BullMQ default `bull`). */
  prefix?: string;
  /** How long completed/failed jobs are kept, so their ids stay deduplicated (default 24 h). */
  retentionMs?: number;
  /** Share the workers among job groups (tenants) by weight, through job priorities (bullmq-fairness.ts); unset: FIFO. */
  fairness?: FairnessOptions;
  logger?: Logger;
}

const STATE: Record<string, JobState> = {
  waiting: 'waiting',
  prioritized: 'waiting',
  'waiting-children': 'waiting',
  delayed: 'delayed',
  active: 'active',
  completed: 'completed',
  failed: 'failed',
};

const neverAborted = new AbortController().signal;

/** The nonce in a stored job's `data` field (JSON of StoredData); undefined when it is not ours. */
function storedNonce(data: string): string | undefined {
  try {
    return (JSON.parse(data) as Partial<StoredData> | null)?.n;
  } catch {
    return undefined;
  }
}

/**
 * JobQueue over BullMQ. The job id is the dedupe key: adding an id that exists
 * (waiting, active, delayed, or completed/failed within the retention) is a
 * no-op reported as `added: false`.
 */
export class BullMqQueue implements JobQueue {
  readonly name: string;
  private readonly queue: Queue;
  private readonly connection: Redis;
  private readonly opts: BullMqQueueOptions;
  private readonly logger: Logger;
  private readonly workers = new Set<BullMqWorker>();
  private readonly fairness: BullMqFairness | undefined;
  private readonly parking: BullMqParking;
  private closed = false;

  constructor(opts: BullMqQueueOptions) {
    assertQueueName(opts.name);
    this.name = opts.name;
    this.opts = opts;
    this.logger = (opts.logger ?? silentLogger()).child({ component: 'queue', queue: opts.name });
    this.connection = new Redis(opts.redisUrl, { lazyConnect: false });
    this.connection.on('error', (err) => this.logger.warn({ err }, 'redis connection error'));
    this.queue = new Queue(opts.name, { connection: this.connection, ...(opts.prefix ? { prefix: opts.prefix } : {}) });
    this.queue.on('error', (err) => this.logger.warn({ err }, 'queue error'));
    this.fairness = opts.fairness ? new BullMqFairness(this.queue, this.connection, opts.prefix ?? 'bull', opts.fairness, this.logger) : undefined;
    this.parking = new BullMqParking(this.queue, this.connection, opts.prefix ?? 'bull');
  }

  async enqueue(payload: Uint8Array, opts: EnqueueOptions): Promise<EnqueueResult> {
    if (this.closed) throw new UnavailableError(`Queue ${this.name} is closed`);
    const r = resolveEnqueue(opts);
    const keepSec = Math.ceil((this.opts.retentionMs ?? DEFAULT_RETENTION_MS) / 1000);
    const nonce = randomUUID();
    try {
      const group = opts.group ?? '';
      const fair = this.fairness ? await this.fairness.tag(group) : undefined;
      const data: StoredData = { p: Buffer.from(payload).toString('base64'), n: nonce, ...(fair ? { s: fair.tag, g: group } : {}) };
      const job = new BullJob(
        this.queue,
        this.name,
        data,
        {
          jobId: opts.jobId,
          ...(fair ? { priority: fair.priority } : {}),
          attempts: r.attempts,
          backoff: { type: 'exponential', delay: r.backoffMs },
          ...(r.delayMs > 0 ? { delay: r.delayMs } : {}),
          removeOnComplete: { age: keepSec },
          removeOnFail: { age: keepSec },
        },
        opts.jobId,
      );
      // The add, then the stored job's data and the fairness base, in one pipeline: one write and
      // one round trip where `queue.add` and a read after it took two (issue 9: Redis round trips
      // per run). BullMQ adds through a pipeline the same way (Job.createBulk): its add script is
      // queued synchronously by addJob, so Redis runs the reads after it, on the same connection.
      // On a duplicate id BullMQ's add writes nothing: the stored job then carries another nonce.
      // Only the job's data field is read, not the whole job. Unlike queue.add, this applies no
      // queue-level defaultJobOptions (this Queue is built without any): every option is set here.
      const client = await this.queue.client;
      const pipe = client.pipeline();
      void job.addJob(pipe as unknown as Parameters<BullJob['addJob']>[0]).catch(() => undefined); // its outcome is read from exec() below
      // BullMQ's pipeline is ioredis's behind BullMQ's adapter type, which lists only BullMQ's own commands.
      const reads = pipe as unknown as ChainableCommander;
      reads.hget(this.queue.toKey(opts.jobId), 'data');
      if (fair && this.fairness) reads.get(this.fairness.baseKey);
      const [[addErr, addReply] = [null, null], ...read] = (await reads.exec()) ?? [];
      let [[dataErr, storedData] = [null, null], [baseErr, currentBase] = [null, null]] = read;
      if (addErr) throw addErr;
      // BullMQ's add scripts answer a negative code for a refused add (parent jobs, which these are not).
      if (typeof addReply === 'number' && addReply < 0) throw new Error(`BullMQ refused the add (code ${addReply})`);
      if (storedData === null && !dataErr) {
        // No job stored: the read ran before the add. ioredis re-sends a script the server no longer
        // has (NOSCRIPT: SCRIPT FLUSH, a failover) after the pipeline, so read again now that it ran;
        // otherwise a duplicate's caller would also be told its job was added.
        const again = (client as unknown as Redis).pipeline().hget(this.queue.toKey(opts.jobId), 'data');
        if (fair && this.fairness) again.get(this.fairness.baseKey);
        [[dataErr, storedData] = [null, null], [baseErr, currentBase] = [null, null]] = (await again.exec()) ?? [];
      }
      if (dataErr) throw dataErr;
      const added = typeof storedData !== 'string' || storedNonce(storedData) === nonce;
      // A duplicate's tag is lost: the group's finish tag moved on by one job, a harmless gap.
      if (added && fair) await this.fairness?.afterAdd(opts.jobId, fair.tag, fair.base, baseErr ? undefined : (currentBase as string | null));
      return { jobId: opts.jobId, added };
    } catch (err) {
      throw new UnavailableError(`Could not enqueue job ${opts.jobId} on ${this.name}: ${errorMessage(err)}`, { cause: err });
    }
  }

  async process(handler: JobHandler, opts: WorkerOptions): Promise<QueueWorker> {
    if (this.closed) throw new UnavailableError(`Queue ${this.name} is closed`);
    assertWorkerOptions(opts);
    const w = new BullMqWorker(this.name, this.opts, handler, opts, this.logger, this.fairness, this.parking, () => this.workers.delete(w));
    this.workers.add(w);
    await w.ready();
    return w;
  }

  async getPayload(jobId: string): Promise<Uint8Array | undefined> {
    const job = await this.queue.getJob(jobId);
    const data = job?.data as StoredData | undefined;
    return data?.p === undefined ? undefined : new Uint8Array(Buffer.from(data.p, 'base64'));
  }

  async wakeParked(group: string, count: number): Promise<number> {
    return this.parking.wake(group, count);
  }

  async getState(jobId: string): Promise<JobState> {
    const s = await this.queue.getJobState(jobId);
    return STATE[s] ?? 'unknown';
  }

  /** BullMQ's job counts; the oldest waiting job is the first of the wait list in ascending order (its timestamp: when it was added). */
  async stats(): Promise<QueueStats> {
    const counts = await this.queue.getJobCounts('wait', 'prioritized', 'delayed', 'active', 'failed');
    const [oldest] = await this.queue.getJobs(['wait'], 0, 0, true);
    return {
      waiting: (counts.wait ?? 0) + (counts.prioritized ?? 0),
      delayed: counts.delayed ?? 0,
      active: counts.active ?? 0,
      failed: counts.failed ?? 0,
      oldestWaitingMs: oldest ? Math.max(0, Date.now() - oldest.timestamp) : 0,
    };
  }

  /** Closes the workers (default grace), the queue and its Redis connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.workers].map((w) => w.close()));
    await this.queue.close().catch(() => undefined);
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}

class BullMqWorker implements QueueWorker {
  private readonly worker: Worker<StoredData>;
  private readonly connection: Redis;
  private closing: Promise<void> | undefined;
  /** Set once the grace period is over and active jobs are being aborted. */
  private aborting = false;

  constructor(
    name: string,
    q: BullMqQueueOptions,
    handler: JobHandler,
    opts: WorkerOptions,
    private readonly logger: Logger,
    fairness: BullMqFairness | undefined,
    parking: BullMqParking,
    private readonly onClosed: () => void,
  ) {
    // Workers block on Redis; BullMQ requires maxRetriesPerRequest: null for them.
    this.connection = new Redis(q.redisUrl, { maxRetriesPerRequest: null });
    this.connection.on('error', (err) => logger.warn({ err }, 'redis worker connection error'));
    this.worker = new Worker<StoredData>(
      name,
      // Three parameters: BullMQ passes an AbortSignal only to processors that declare it.
      async (job: BullJob<StoredData>, token?: string, signal?: AbortSignal) => {
        const view = {
          id: job.id ?? '',
          payload: new Uint8Array(Buffer.from(job.data.p, 'base64')),
          attemptsMade: job.attemptsMade,
          attempts: job.opts.attempts ?? 1,
        };
        // V moves on when a job starts (deferred or not: it was offered, its turn came).
        // Best effort: a lost update leaves V behind, so later tags are a little early — never a failed job.
        // Not awaited: the handler need not wait a Redis round trip for it (V only grows, by max(), so
        // concurrent starts commute; issue 9: latency per run).
        if (fairness && job.data.s !== undefined)
          void fairness
            .started(job.data.s)
            .catch((err: unknown) => logger.warn({ job_id: job.id, err: errorMessage(err) }, 'fair-queue virtual time not advanced'));
        try {
          await handler(view, signal ?? neverAborted);
        } catch (err) {
          if (err instanceof DeferJobError) {
            // Not now: delayed without counting an attempt; the worker goes on with other jobs.
            await job.moveToDelayed(Date.now() + Math.max(0, err.delayMs), token);
            if (err.group !== undefined) {
              // Unrecorded, the parked job is not woken early: it comes back after its delay.
              await parking
                .park(err.group, job.data.s ?? 0, job.id ?? '')
                .catch((e: unknown) => logger.warn({ job_id: job.id, err: errorMessage(e) }, 'parked job not recorded; it comes back after its delay'));
            }
            throw new DelayedError();
          }
          if (err instanceof ReleaseJobError || (this.aborting && signal?.aborted)) {
            // Released by its handler, or shutting down: hand the job straight back instead of counting a failed attempt.
            await job.moveToWait(token);
            throw new WaitingError();
          }
          if (err instanceof UnrecoverableJobError) throw new UnrecoverableError(err.message);
          throw err;
        }
      },
      {
        connection: this.connection,
        concurrency: opts.concurrency,
        ...(q.prefix ? { prefix: q.prefix } : {}),
        ...(opts.lockDurationMs !== undefined ? { lockDuration: opts.lockDurationMs } : {}),
        ...(opts.stalledIntervalMs !== undefined ? { stalledInterval: opts.stalledIntervalMs } : {}),
        ...(opts.maxStalledCount !== undefined ? { maxStalledCount: opts.maxStalledCount } : {}),
      },
    );
    this.worker.on('error', (err) => logger.warn({ err }, 'worker error'));
    this.worker.on('failed', (job, err) => logger.info({ job_id: job?.id, attempts_made: job?.attemptsMade, err: errorMessage(err) }, 'job attempt failed'));
    this.worker.on('stalled', (jobId) => logger.warn({ job_id: jobId }, 'job stalled; handed to another worker'));
  }

  async ready(): Promise<void> {
    await this.worker.waitUntilReady();
  }

  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.closing ??= this.doClose(graceMs);
    return this.closing;
  }

  private async doClose(graceMs: number): Promise<void> {
    const closed = this.worker.close();
    if (!(await settledWithin(closed, graceMs))) {
      this.logger.warn({ grace_ms: graceMs }, 'worker close: aborting active jobs after the grace period');
      this.aborting = true;
      this.worker.cancelAllJobs('worker shutting down');
      if (!(await settledWithin(closed, Math.min(graceMs, 5_000)))) {
        // A handler ignores its signal: stop waiting; its lock expires and the stalled check re-queues the job.
        this.logger.error('worker close: a job handler ignored the abort signal; leaving it to the stalled-job check');
        await this.worker.disconnect().catch(() => undefined);
      }
    }
    await this.connection.quit().catch(() => this.connection.disconnect());
    this.onClosed();
  }
}

/** Builds a BullMqQueue (connections open lazily in the background). */
export function createBullMqQueue(opts: BullMqQueueOptions): BullMqQueue {
  return new BullMqQueue(opts);
}
