/**
 * CronScheduler for the embedded mode, over the SQLite file of the queues (SqliteQueueDatabase).
 *
 * Why a due-time table: SQLite has no server to own timers, so every process that runs a worker
 * polls `cron_schedules` for rows whose `next_at` has come. A due tick is first enqueued on a
 * SqliteQueue of the same file under the job id `<schedule>-<tick>` — so two processes that see
 * the same due row, or one that crashes before moving `next_at` on, add the tick only once — and
 * then `next_at` moves to the next tick with an update guarded on the value it read. The tick then
 * runs as a durable job (retried, recovered from a dead process) exactly like a BullMQ scheduler's.
 * A tick missed while nobody ran fires once at the next poll; the one after it is computed from now.
 */
import { errorMessage, silentLogger, type Logger } from '@agentloop/core';
import type BetterSqlite3 from 'better-sqlite3';
import { nextCronTime } from './cron-schedule.js';
import type { CronScheduler, FiringHandler, ScheduleSpec } from './scheduler-types.js';
import type { SqliteQueueDatabase } from './sqlite-database.js';
import type { SqliteQueue } from './sqlite-queue.js';
import type { QueueWorker } from './types.js';
import { assertJobId, assertQueueName } from './validate.js';
import { decodeFiring, encodeFiring, TICK_ATTEMPTS, TICK_BACKOFF_MS } from './scheduler-firing.js';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS cron_schedules (
    scheduler TEXT NOT NULL,
    id TEXT NOT NULL,
    pattern TEXT NOT NULL,
    tz TEXT,
    end_at INTEGER,
    data BLOB NOT NULL,
    next_at INTEGER,
    PRIMARY KEY (scheduler, id)
  );
  CREATE INDEX IF NOT EXISTS cron_schedules_due ON cron_schedules (scheduler, next_at) WHERE next_at IS NOT NULL;`;

interface Row {
  id: string;
  pattern: string;
  tz: string | null;
  endAt: number | null;
  data: Buffer;
  nextAt: number;
}

export interface SqliteSchedulerOptions {
  /** The queues' file; the scheduler adds its table and a tick queue named `<name>-ticks`. */
  database: SqliteQueueDatabase;
  /** How often due schedules are looked for (default 1000 ms): the delay of a tick is at most this. */
  pollMs?: number;
  logger?: Logger;
}

export class SqliteScheduler implements CronScheduler {
  private readonly db: BetterSqlite3.Database;
  private readonly ticks: SqliteQueue;
  private readonly pollMs: number;
  private readonly logger: Logger;
  private poller: NodeJS.Timeout | undefined;
  private polling = false;
  private readonly workers = new Set<QueueWorker>();

  constructor(
    readonly name: string,
    opts: SqliteSchedulerOptions,
  ) {
    assertQueueName(name);
    this.db = opts.database.db;
    this.db.exec(SCHEMA);
    this.ticks = opts.database.queue(`${name}-ticks`, opts.logger ? { logger: opts.logger } : {});
    this.pollMs = opts.pollMs ?? 1_000;
    this.logger = (opts.logger ?? silentLogger()).child({ component: 'scheduler', scheduler: name });
  }

  async upsert(spec: ScheduleSpec): Promise<{ nextAt: number | undefined }> {
    assertJobId(spec.id);
    const nextAt = nextCronTime(spec.pattern, Date.now(), { timezone: spec.timezone, endAt: spec.endAt, allowSeconds: true });
    this.db
      .prepare(
        `INSERT INTO cron_schedules (scheduler, id, pattern, tz, end_at, data, next_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (scheduler, id) DO UPDATE SET pattern = excluded.pattern, tz = excluded.tz, end_at = excluded.end_at,
           data = excluded.data, next_at = excluded.next_at`,
      )
      .run(this.name, spec.id, spec.pattern, spec.timezone ?? null, spec.endAt ?? null, Buffer.from(spec.data), nextAt ?? null);
    return { nextAt };
  }

  async remove(id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM cron_schedules WHERE scheduler = ? AND id = ?').run(this.name, id).changes > 0;
  }

  async nextAt(id: string): Promise<number | undefined> {
    const row = this.db.prepare('SELECT next_at AS nextAt FROM cron_schedules WHERE scheduler = ? AND id = ?').get(this.name, id) as
      { nextAt: number | null } | undefined;
    return row?.nextAt ?? undefined;
  }

  async process(handler: FiringHandler, opts: { concurrency?: number } = {}): Promise<QueueWorker> {
    const worker = await this.ticks.process(async (job, signal) => handler(decodeFiring(job.payload), signal), { concurrency: opts.concurrency ?? 4 });
    this.workers.add(worker);
    if (!this.poller) {
      this.poller = setInterval(() => void this.poll(), this.pollMs);
      this.poller.unref();
      void this.poll();
    }
    return {
      close: async (graceMs?: number) => {
        this.workers.delete(worker);
        if (this.workers.size === 0) this.stopPolling();
        await worker.close(graceMs);
      },
    };
  }

  async close(): Promise<void> {
    this.stopPolling();
    await this.ticks.close();
  }

  private stopPolling(): void {
    clearInterval(this.poller);
    this.poller = undefined;
  }

  /** Enqueues every due tick once and moves its schedule on. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const now = Date.now();
      const due = this.db
        .prepare(
          `SELECT id, pattern, tz, end_at AS endAt, data, next_at AS nextAt FROM cron_schedules
           WHERE scheduler = ? AND next_at IS NOT NULL AND next_at <= ? ORDER BY next_at LIMIT 100`,
        )
        .all(this.name, now) as Row[];
      for (const row of due) {
        const firing = encodeFiring({ scheduleId: row.id, tickAt: row.nextAt, data: new Uint8Array(row.data) });
        await this.ticks.enqueue(firing, { jobId: `${row.id}-${row.nextAt}`, attempts: TICK_ATTEMPTS, backoffMs: TICK_BACKOFF_MS });
        let next: number | undefined;
        try {
          next = nextCronTime(row.pattern, Math.max(now, row.nextAt), { timezone: row.tz ?? undefined, endAt: row.endAt ?? undefined, allowSeconds: true });
        } catch (err) {
          this.logger.warn({ schedule_id: row.id, err: errorMessage(err) }, 'schedule no longer parses; stopped');
        }
        this.db
          .prepare('UPDATE cron_schedules SET next_at = ? WHERE scheduler = ? AND id = ? AND next_at = ?')
          .run(next ?? null, this.name, row.id, row.nextAt);
      }
    } catch (err) {
      // The file is busy or closing: the next poll tries again (ticks are enqueued idempotently).
      this.logger.warn({ err: errorMessage(err) }, 'schedule poll failed');
    } finally {
      this.polling = false;
    }
  }
}
