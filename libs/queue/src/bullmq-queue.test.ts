import { startRedis, type DevServer } from '@agentloop/devservers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullMqQueue } from './bullmq-queue.js';
import { fairnessContract, queueContract } from './testing/index.js';

let redis: DevServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

queueContract('BullMqQueue', async (name) => createBullMqQueue({ name, redisUrl: redis.url }));
fairnessContract('BullMqQueue', async (name, fairness) => createBullMqQueue({ name, redisUrl: redis.url, fairness }));

describe('BullMqQueue', () => {
  it('stores the payload base64-encoded with retention-bounded removal options', async () => {
    const q = createBullMqQueue({ name: 'layout', redisUrl: redis.url, prefix: 'agentloop-test' });
    await q.enqueue(new Uint8Array([0xff, 0x00, 0x41]), { jobId: 'layout-1', attempts: 4, backoffMs: 250 });
    const r = new Redis(redis.url);
    try {
      const hash = await r.hgetall('agentloop-test:layout:layout-1');
      expect(JSON.parse(hash.data ?? '{}')).toMatchObject({ p: Buffer.from([0xff, 0x00, 0x41]).toString('base64') });
      expect(JSON.parse(hash.opts ?? '{}')).toMatchObject({
        attempts: 4,
        backoff: { type: 'exponential', delay: 250 },
        removeOnComplete: { age: 86_400 },
        removeOnFail: { age: 86_400 },
      });
    } finally {
      r.disconnect();
      await q.close();
    }
  });
});
