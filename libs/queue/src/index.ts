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
  type JobQueue,
} from './types.js';
export { MemoryQueue, type MemoryQueueOptions } from './memory-queue.js';
export { SqliteQueue, SqliteQueueDatabase, type SqliteQueueOptions, type SqliteQueueDatabaseOptions } from './sqlite-queue.js';
export { BullMqQueue, createBullMqQueue, type BullMqQueueOptions } from './bullmq-queue.js';
