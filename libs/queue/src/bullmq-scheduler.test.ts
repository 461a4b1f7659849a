import { startRedis, type DevServer } from '@agentloop/devservers';
import { afterAll, beforeAll } from 'vitest';
import { BullMqScheduler } from './bullmq-scheduler.js';
import { schedulerContract } from './testing/index.js';

let redis: DevServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

schedulerContract('BullMqScheduler', async (name) => new BullMqScheduler({ name, redisUrl: redis.url }));
