import { startRedis, type DevServer } from '@agentloop/devservers';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBullMqQueue } from './bullmq-queue.js';
import { priorityOf, REBASE_AFTER, MAX_PRIORITY } from './fair-tags.js';

let redis: DevServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

async function until(what: string, cond: () => Promise<boolean>): Promise<void> {
  const stop = Date.now() + 20_000;
  while (!(await cond())) {
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('BullMqQueue fairness state in Redis', () => {
  it('keeps V, the finish tags and the priority in Redis, and gives each job its tag', async () => {
    const q = createBullMqQueue({ name: 'fair-keys', redisUrl: redis.url, prefix: 'fk', fairness: { weights: new Map([['acme', 4]]) } });
    const r = new Redis(redis.url);
    try {
      await q.enqueue(new Uint8Array([1]), { jobId: 'k-1', group: 'acme' });
      await q.enqueue(new Uint8Array([2]), { jobId: 'k-2', group: 'acme' });
      expect(await r.hget('fk:fair-keys:fair:finish', 'acme')).toBe('0.5');
      const second = await r.hgetall('fk:fair-keys:k-2');
      expect(JSON.parse(second.data ?? '{}')).toMatchObject({ s: 0.25, g: 'acme' });
      expect(Number(second.priority)).toBe(priorityOf(0.25, 0));
    } finally {
      r.disconnect();
      await q.close();
    }
  });

  it('rebases the priorities of queued jobs once the virtual time ran REBASE_AFTER past the base', async () => {
    const q = createBullMqQueue({ name: 'fair-rebase', redisUrl: redis.url, prefix: 'fr', fairness: { weights: new Map() } });
    const r = new Redis(redis.url);
    try {
      // As if 2.5 × REBASE_AFTER runs had started since the base was set: new tags are past the priority range.
      const v = Math.floor(2.5 * REBASE_AFTER);
      await r.set('fr:fair-rebase:fair:v', String(v));
      for (let i = 0; i < 5; i++) await q.enqueue(new Uint8Array([i]), { jobId: `r-${i}`, group: 'acme' });
      expect((await q['queue'].getJob('r-4'))?.priority).toBe(MAX_PRIORITY);
      const worker = await q.process(() => new Promise<void>(() => undefined), { concurrency: 1 });
      // The first start sees V far past the base 0 and rebases to V; the four queued jobs get exact priorities.
      await until('rebased', async () => (await r.get('fr:fair-rebase:fair:base')) === String(v));
      await until('priorities rewritten', async () => (await q['queue'].getJob('r-4'))?.priority === priorityOf(v + 4, v));
      expect((await q['queue'].getJob('r-1'))?.priority).toBe(priorityOf(v + 1, v));
      void worker.close(100);
    } finally {
      r.disconnect();
      await q.close();
    }
  });

  it('rewrites the priority of a job added just after a rebase it was tagged before', async () => {
    const q = createBullMqQueue({ name: 'fair-late', redisUrl: redis.url, prefix: 'fl', fairness: { weights: new Map() } });
    const r = new Redis(redis.url);
    try {
      await r.set('fl:fair-late:fair:v', '30');
      await q.enqueue(new Uint8Array([1]), { jobId: 'late-1', group: 'acme' });
      expect((await q['queue'].getJob('late-1'))?.priority).toBe(priorityOf(30, 0));
      // A rebase to 25 lands between this job's tag (base 0) and its add: its own check fixes it.
      await r.set('fl:fair-late:fair:base', '25');
      await q['fairness']!.afterAdd('late-1', 30, 0);
      expect((await q['queue'].getJob('late-1'))?.priority).toBe(priorityOf(30, 25));
    } finally {
      r.disconnect();
      await q.close();
    }
  });
});
