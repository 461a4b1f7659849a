/**
 * Fair-scheduling suite every JobQueue with `fairness` must pass (docs/adr/0008-fair-scheduling.md).
 * Exported from `@agentloop/queue/testing`; call it inside a test file.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { FairnessOptions } from './fair-tags.js';
import { DeferJobError, type JobQueue, type QueueWorker } from './types.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** Polls until `cond` holds; the 30 s limit is a safety net against hangs, not a timing assertion. */
async function until(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  const stop = Date.now() + 30_000;
  while (!(await cond())) {
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `makeQueue(name, fairness)` returns a queue with that (unique) name and fairness; the suite closes it after each test. */
export function fairnessContract(name: string, makeQueue: (queueName: string, fairness: FairnessOptions) => Promise<JobQueue>): void {
  describe(`JobQueue fairness: ${name}`, () => {
    const queues: JobQueue[] = [];
    const workers: QueueWorker[] = [];
    const queue = async (fairness: FairnessOptions) => {
      const q = await makeQueue(`fair-${randomUUID()}`, fairness);
      queues.push(q);
      return q;
    };
    afterEach(async () => {
      await Promise.allSettled(workers.splice(0).map((w) => w.close(1_000)));
      await Promise.allSettled(queues.splice(0).map((q) => q.close()));
    });

    /** Runs every queued job one at a time and resolves to the payloads in the order they started. */
    async function order(q: JobQueue, total: number): Promise<string[]> {
      const started: string[] = [];
      workers.push(await q.process(async (job) => void started.push(dec(job.payload)), { concurrency: 1 }));
      await until(`${total} jobs started`, () => started.length === total);
      return started;
    }

    it("starts a tenant's single job right after the job in progress, not behind another tenant's backlog", async () => {
      const q = await queue({ weights: new Map() });
      for (let i = 0; i < 200; i++) await q.enqueue(enc(`a${i}`), { jobId: `a-${i}`, group: 'tenant-a' });
      await q.enqueue(enc('b0'), { jobId: 'b-0', group: 'tenant-b' });
      const started = await order(q, 201);
      // Equal weights, B never seen: B's tag is the virtual time (0), tied with A's first job, FIFO after it.
      expect(started.indexOf('b0')).toBe(1);
      expect(started.filter((p) => p.startsWith('a'))).toEqual(Array.from({ length: 200 }, (_, i) => `a${i}`));
    });

    it('shares the workers by weight while both tenants have jobs queued', async () => {
      const q = await queue({ weights: new Map([['heavy', 3]]) });
      for (let i = 0; i < 30; i++) {
        await q.enqueue(enc(`h${i}`), { jobId: `h-${i}`, group: 'heavy' });
        await q.enqueue(enc(`l${i}`), { jobId: `l-${i}`, group: 'light' });
      }
      const first = (await order(q, 60)).slice(0, 20);
      // Weight 3 against 1: three of heavy's jobs for each of light's.
      expect(first.filter((p) => p.startsWith('h'))).toHaveLength(15);
      expect(first.filter((p) => p.startsWith('l'))).toHaveLength(5);
    });

    it("tags a late tenant from the virtual time, so its job goes before the busy tenant's queued ones", async () => {
      const q = await queue({ weights: new Map() });
      for (let i = 0; i < 50; i++) await q.enqueue(enc(`a${i}`), { jobId: `a-${i}`, group: 'tenant-a' });
      const started: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      workers.push(
        await q.process(
          async (job) => {
            started.push(dec(job.payload));
            if (started.length === 10) await gate;
          },
          { concurrency: 1 },
        ),
      );
      await until('ten of A started', () => started.length === 10);
      // V is now A's 10th tag: B, arriving late, is tagged there and goes before A's 40 queued jobs.
      await q.enqueue(enc('b0'), { jobId: 'b-0', group: 'tenant-b' });
      release();
      await until('all started', () => started.length === 51);
      expect(started[10]).toBe('b0');
    });

    it('keeps a parked job out of line until its group is woken', async () => {
      const q = await queue({ weights: new Map() });
      await q.enqueue(enc('p'), { jobId: 'parked-1', group: 'capped' });
      const seen: string[] = [];
      workers.push(
        await q.process(
          async (job) => {
            seen.push(dec(job.payload));
            if (seen.length === 1) throw new DeferJobError('at its cap', 60_000, 'capped');
          },
          { concurrency: 1 },
        ),
      );
      await until('parked', async () => (await q.getState('parked-1')) === 'delayed');
      expect(await q.wakeParked?.('other', 1)).toBe(0);
      expect(await q.wakeParked?.('capped', 1)).toBe(1);
      await until('completed after the wake', async () => (await q.getState('parked-1')) === 'completed');
      expect(seen).toEqual(['p', 'p']);
      expect(await q.wakeParked?.('capped', 1)).toBe(0);
    });
  });
}
