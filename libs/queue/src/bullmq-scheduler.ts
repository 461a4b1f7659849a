/**
 * CronScheduler over BullMQ job schedulers (cluster mode). Redis holds each schedule and, at any
 * time, the one delayed job of its next tick, whose id BullMQ derives from the schedule and the
 * tick's time: however many gateways run a worker, a tick is one job taken by one worker, and
 * schedules survive every process restarting.
 */
import { errorMessage, silentLogger, type Logger } from '@agentloop/core';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { nextCronTime } from './cron-schedule.js';
import type { CronScheduler, FiringHandler, ScheduleSpec } from './scheduler-types.js';
import { TICK_ATTEMPTS, TICK_BACKOFF_MS } from './scheduler-firing.js';
import type { QueueWorker } from './types.js';
import { assertJobId, assertQueueName, DEFAULT_CLOSE_GRACE_MS, DEFAULT_RETENTION_MS, settledWithin } from './validate.js';

export interface BullMqSchedulerOptions {
  name: string;
  redisUrl: string;
  /** Redis key prefix (BullMQ default `bull`). */
  prefix?: string;
  logger?: Logger;
}

interface TickData {
  d: string;
}

export class BullMqScheduler implements CronScheduler {
  readonly name: string;
  private readonly queue: Queue<TickData>;
  private readonly connection: Redis;
  private readonly logger: Logger;
  private readonly workers = new Set<QueueWorker>();

  constructor(private readonly opts: BullMqSchedulerOptions) {
    assertQueueName(opts.name);
    this.name = opts.name;
    this.logger = (opts.logger ?? silentLogger()).child({ component: 'scheduler', scheduler: opts.name });
    this.connection = new Redis(opts.redisUrl, { lazyConnect: false, maxRetriesPerRequest: null });
    this.connection.on('error', (err) => this.logger.warn({ err }, 'redis connection error'));
    this.queue = new Queue<TickData>(opts.name, { connection: this.connection, ...(opts.prefix ? { prefix: opts.prefix } : {}) });
    this.queue.on('error', (err) => this.logger.warn({ err }, 'scheduler queue error'));
  }

  async upsert(spec: ScheduleSpec): Promise<{ nextAt: number | undefined }> {
    assertJobId(spec.id);
    const nextAt = nextCronTime(spec.pattern, Date.now(), { timezone: spec.timezone, endAt: spec.endAt, allowSeconds: true });
    if (nextAt === undefined) {
      // Nothing left to fire (BullMQ refuses an end date in the past): the schedule is over.
      await this.queue.removeJobScheduler(spec.id);
      return { nextAt };
    }
    const keepSec = Math.ceil(DEFAULT_RETENTION_MS / 1000);
    await this.queue.upsertJobScheduler(
      spec.id,
      { pattern: spec.pattern, tz: spec.timezone ?? 'UTC', ...(spec.endAt !== undefined ? { endDate: spec.endAt } : {}) },
      {
        name: 'tick',
        data: { d: Buffer.from(spec.data).toString('base64') },
        opts: {
          attempts: TICK_ATTEMPTS,
          backoff: { type: 'exponential', delay: TICK_BACKOFF_MS },
          removeOnComplete: { age: keepSec },
          removeOnFail: { age: keepSec },
        },
      },
    );
    return { nextAt: (await this.nextAt(spec.id)) ?? nextAt };
  }

  async remove(id: string): Promise<boolean> {
    return this.queue.removeJobScheduler(id);
  }

  async nextAt(id: string): Promise<number | undefined> {
    const s = await this.queue.getJobScheduler(id);
    if (!s?.pattern) return undefined;
    const now = Date.now();
    if (s.next !== undefined && s.next > now) return s.next;
    // BullMQ leaves `next` at the last tick once the schedule ended (or while that tick is due): compute it.
    return nextCronTime(s.pattern, now, { timezone: s.tz, endAt: s.endDate, allowSeconds: true });
  }

  async process(handler: FiringHandler, opts: { concurrency?: number } = {}): Promise<QueueWorker> {
    const logger = this.logger;
    const ac = new AbortController();
    const worker = new Worker<TickData>(
      this.name,
      async (job) => {
        const scheduleId = job.repeatJobKey ?? '';
        // The job id of a scheduler's tick ends with the tick's time (repeat:<scheduler>:<millis>).
        const fromId = Number(job.id?.split(':').pop());
        const tickAt = Number.isFinite(fromId) ? fromId : job.timestamp + (job.delay ?? 0);
        await handler({ scheduleId, tickAt, data: new Uint8Array(Buffer.from(job.data.d, 'base64')) }, ac.signal);
      },
      { connection: this.connection, concurrency: opts.concurrency ?? 4, ...(this.opts.prefix ? { prefix: this.opts.prefix } : {}) },
    );
    worker.on('error', (err) => logger.warn({ err }, 'scheduler worker error'));
    worker.on('failed', (job, err) => logger.warn({ job_id: job?.id, attempts_made: job?.attemptsMade, err: errorMessage(err) }, 'tick attempt failed'));
    await worker.waitUntilReady();
    const handle: QueueWorker = {
      close: async (graceMs = DEFAULT_CLOSE_GRACE_MS) => {
        this.workers.delete(handle);
        const closed = worker.close();
        if (!(await settledWithin(closed, graceMs))) {
          ac.abort();
          await worker.close(true).catch(() => undefined);
        }
      },
    };
    this.workers.add(handle);
    return handle;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.workers].map((w) => w.close()));
    await this.queue.close().catch(() => undefined);
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}
