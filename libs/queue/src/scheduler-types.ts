/**
 * Durable recurring schedules ("fire this at every tick of that cron expression"), the engine of
 * LangGraph's crons. BullMqScheduler (cluster, Redis job schedulers) and SqliteScheduler
 * (embedded) pass the same contract suite (src/scheduler-contract.ts): each tick fires exactly
 * once however many processes run a worker, schedules survive restarts, and a tick missed while
 * nobody ran fires once when a worker comes back (not once per missed tick).
 */
import type { QueueWorker } from './types.js';

export interface ScheduleSpec {
  /** Schedule id: non-empty, no ':' (a UUID works). Upserting an existing id replaces it. */
  id: string;
  /** Cron expression (5 fields, or 6 with leading seconds), see cron-schedule.ts. */
  pattern: string;
  /** IANA time zone of the pattern (default UTC). */
  timezone?: string | undefined;
  /** No tick after this instant (epoch ms). */
  endAt?: number | undefined;
  /** Handed to the handler at every tick. */
  data: Uint8Array;
}

export interface Firing {
  scheduleId: string;
  /** The tick this firing is for (epoch ms). */
  tickAt: number;
  data: Uint8Array;
}

/** Handles one tick. A handler that throws is retried (a few attempts); the tick is not lost. */
export type FiringHandler = (firing: Firing, signal: AbortSignal) => Promise<void>;

export interface CronScheduler {
  /** Creates or replaces a schedule; returns its next tick (undefined when none comes before endAt). */
  upsert(spec: ScheduleSpec): Promise<{ nextAt: number | undefined }>;
  /** Removes a schedule; false when there was none. A tick already handed to a worker still runs. */
  remove(id: string): Promise<boolean>;
  /** The next tick of a schedule, or undefined (unknown, or ended). */
  nextAt(id: string): Promise<number | undefined>;
  /** Starts a worker that handles ticks; several workers (processes) share the ticks, each tick once. */
  process(handler: FiringHandler, opts?: { concurrency?: number }): Promise<QueueWorker>;
  close(): Promise<void>;
}
