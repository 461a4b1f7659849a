import { describe, expect, it } from 'vitest';
import { MemoryQueue } from './memory-queue.js';
import { queueContract } from './testing/index.js';

queueContract('MemoryQueue', async (name) => new MemoryQueue(name));

describe('MemoryQueue', () => {
  it('forgets a finished job id after the retention period, so the id can be added again', async () => {
    const q = new MemoryQueue('retention', { retentionMs: 0 });
    let runs = 0;
    const w = await q.process(async () => void runs++, { concurrency: 1 });
    await q.enqueue(new Uint8Array([1]), { jobId: 'once' });
    while ((await q.getState('once')) === 'waiting' || (await q.getState('once')) === 'active') await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 2));
    expect(await q.enqueue(new Uint8Array([1]), { jobId: 'once' })).toEqual({ jobId: 'once', added: true });
    await w.close();
    await q.close();
  });

  it('waits base * 2^(n-1) between attempts', async () => {
    const q = new MemoryQueue('backoff');
    const seen: number[] = [];
    const w = await q.process(
      async (job) => {
        seen.push(job.attemptsMade);
        throw new Error('fail');
      },
      { concurrency: 1 },
    );
    await q.enqueue(new Uint8Array([1]), { jobId: 'b', attempts: 3, backoffMs: 60_000 });
    while (seen.length < 1) await new Promise((r) => setTimeout(r, 5));
    // After the first failure the job waits for the backoff instead of running again.
    expect(await q.getState('b')).toBe('delayed');
    expect(seen).toEqual([0]);
    await w.close();
    await q.close();
  });

  it('copies the payload so the caller cannot change a queued job', async () => {
    const q = new MemoryQueue('copy');
    const payload = new Uint8Array([1, 2, 3]);
    await q.enqueue(payload, { jobId: 'c' });
    payload[0] = 9;
    let got: number[] = [];
    const w = await q.process(async (job) => void (got = [...job.payload]), { concurrency: 1 });
    while ((await q.getState('c')) !== 'completed') await new Promise((r) => setTimeout(r, 5));
    expect(got).toEqual([1, 2, 3]);
    await w.close();
    await q.close();
  });

  it('rejects an integer job id (BullMQ cannot store it)', async () => {
    const q = new MemoryQueue('ids');
    await expect(q.enqueue(new Uint8Array(), { jobId: '42' })).rejects.toThrow(/Invalid job id "42"/);
    await q.close();
  });
});
