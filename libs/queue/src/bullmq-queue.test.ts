import { startRedis, type DevServer } from '@agentloop/devservers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullMqQueue } from './bullmq-queue.js';
import { DeferJobError } from './types.js';
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

  it('parks and wakes a deferred job on a queue without fairness too', async () => {
    const q = createBullMqQueue({ name: 'park-fifo', redisUrl: redis.url });
    let offers = 0;
    const w = await q.process(
      async () => {
        if (++offers === 1) throw new DeferJobError('at its cap', 60_000, 'acme');
      },
      { concurrency: 1 },
    );
    try {
      await q.enqueue(new Uint8Array([1]), { jobId: 'park-1', group: 'acme' });
      for (const stop = Date.now() + 20_000; (await q.getState('park-1')) !== 'delayed';) {
        if (Date.now() > stop) throw new Error('not parked');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(await q.wakeParked('acme', 1)).toBe(1);
      for (const stop = Date.now() + 20_000; (await q.getState('park-1')) !== 'completed';) {
        if (Date.now() > stop) throw new Error('not completed after the wake');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(offers).toBe(2);
    } finally {
      await w.close(1_000);
      await q.close();
    }
  });
});
