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

/** Counts the socket writes of a connection (one per round trip: a pipeline is one write) until restored. */
function countWrites(connection: Redis): { count: () => number; restore: () => void } {
  const stream = connection.stream;
  const write = stream.write.bind(stream);
  let writes = 0;
  stream.write = ((...args: Parameters<typeof write>) => {
    writes++;
    return write(...args);
  }) as typeof stream.write;
  return { count: () => writes, restore: () => void (stream.write = write) };
}

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

  it('enqueues with fairness in two round trips: the tag, then the add with the stored nonce and the base in one pipeline', async () => {
    const q = createBullMqQueue({ name: 'enqueue-trips', redisUrl: redis.url, fairness: { weights: new Map() } });
    try {
      await q.enqueue(new Uint8Array([1]), { jobId: 'trips-0', group: 'acme' }); // loads the scripts
      const connection = q['connection'];
      await connection.ping();
      const writes = countWrites(connection);
      const commands: string[] = [];
      const send = connection.sendCommand.bind(connection);
      connection.sendCommand = ((...args: Parameters<typeof send>) => {
        commands.push((args[0] as { name: string }).name);
        return send(...args);
      }) as typeof connection.sendCommand;
      try {
        expect(await q.enqueue(new Uint8Array([2]), { jobId: 'trips-1', group: 'acme' })).toEqual({ jobId: 'trips-1', added: true });
        expect(await q.enqueue(new Uint8Array([3]), { jobId: 'trips-1', group: 'acme' })).toEqual({ jobId: 'trips-1', added: false });
      } finally {
        writes.restore();
        connection.sendCommand = send;
      }
      expect(commands).toEqual(['evalsha', 'evalsha', 'hget', 'get', 'evalsha', 'evalsha', 'hget', 'get']);
      expect(writes.count()).toBe(4);
    } finally {
      await q.close();
    }
  });

  it('tells exactly one of two callers of a duplicate id that it added the job, also when the server lost its scripts (NOSCRIPT)', async () => {
    const q = createBullMqQueue({ name: 'enqueue-noscript', redisUrl: redis.url, fairness: { weights: new Map() } });
    const admin = new Redis(redis.url);
    try {
      await q.enqueue(new Uint8Array([1]), { jobId: 'ns-0', group: 'acme' }); // loads the scripts
      // ioredis then re-sends the add script after the pipeline's reads: they ran before the add.
      await admin.script('FLUSH');
      const results = await Promise.all([2, 3].map((b) => q.enqueue(new Uint8Array([b]), { jobId: 'ns-1', group: 'acme' })));
      expect(results.filter((r) => r.added)).toHaveLength(1);
      const winner = results.findIndex((r) => r.added);
      expect(await q.getPayload('ns-1')).toEqual(new Uint8Array([[2, 3][winner]!]));
    } finally {
      admin.disconnect();
      await q.close();
    }
  });

  it('enqueues without fairness in one round trip: the add and the stored nonce in one pipeline', async () => {
    const q = createBullMqQueue({ name: 'enqueue-trips-fifo', redisUrl: redis.url });
    try {
      await q.enqueue(new Uint8Array([1]), { jobId: 'fifo-0' }); // loads the scripts
      const connection = q['connection'];
      await connection.ping();
      const writes = countWrites(connection);
      try {
        expect(await q.enqueue(new Uint8Array([2]), { jobId: 'fifo-1', delayMs: 60_000 })).toEqual({ jobId: 'fifo-1', added: true });
        expect(await q.enqueue(new Uint8Array([3]), { jobId: 'fifo-1' })).toEqual({ jobId: 'fifo-1', added: false });
        expect(await q.enqueue(new Uint8Array([4]), { jobId: 'fifo-2' })).toEqual({ jobId: 'fifo-2', added: true });
      } finally {
        writes.restore();
      }
      expect(writes.count()).toBe(3);
      // The first add stayed: a duplicate id does not replace its payload; a delayed add is delayed.
      expect(await q.getPayload('fifo-1')).toEqual(new Uint8Array([2]));
      expect(await q.getState('fifo-1')).toBe('delayed');
      expect(await q.getState('fifo-2')).toBe('waiting');
    } finally {
      await q.close();
    }
  });

  it("runs a job's handler without waiting for the fair-queue virtual time to move on", async () => {
    const q = createBullMqQueue({ name: 'fair-start', redisUrl: redis.url, fairness: { weights: new Map() } });
    // The virtual time's update never answers: a handler that waited for it would never run.
    q['fairness']!.started = () => new Promise<void>(() => undefined);
    let ran!: (payload: Uint8Array) => void;
    const handled = new Promise<Uint8Array>((resolve) => (ran = resolve));
    const w = await q.process(async (job) => ran(job.payload), { concurrency: 1 });
    try {
      await q.enqueue(new Uint8Array([7]), { jobId: 'fair-start-1', group: 'acme' });
      expect(await handled).toEqual(new Uint8Array([7]));
    } finally {
      await w.close();
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
