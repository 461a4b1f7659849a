export {
  UnrecoverableJobError,
  ReleaseJobError,
  DeferJobError,
  type EnqueueOptions,
  type EnqueueResult,
  type Job,
  type JobHandler,
  type WorkerOptions,
  type QueueWorker,
  type JobState,
  type QueueStats,
  type JobQueue,
} from './types.js';
export { MemoryQueue, type MemoryQueueOptions } from './memory-queue.js';
export { SqliteQueue, SqliteQueueDatabase, type SqliteQueueOptions, type SqliteQueueDatabaseOptions } from './sqlite-queue.js';
export { adoptLiveOwner } from './sqlite-database.js';
export { BullMqQueue, createBullMqQueue, type BullMqQueueOptions } from './bullmq-queue.js';
// Fair scheduling across tenants (issue 17, docs/adr/0008-fair-scheduling.md)
export { MAX_WEIGHT, type FairnessOptions } from './fair-tags.js';
// Cron schedulers (issue 12)
export { type CronScheduler, type ScheduleSpec, type Firing, type FiringHandler } from './scheduler-types.js';
export {
  cronScheduleProblem,
  isIanaTimezone,
  nextCronTime,
  encodeCronFiringData,
  decodeCronFiringData,
  type CronFiringData,
  type CronScheduleOptions,
} from './cron-schedule.js';
export { SqliteScheduler, type SqliteSchedulerOptions } from './sqlite-scheduler.js';
export { BullMqScheduler, type BullMqSchedulerOptions } from './bullmq-scheduler.js';
