/**
 * Contract suite every JobQueue implementation must pass. Exported from
 * `@agentloop/queue/testing`; call it inside a test file.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { DeferJobError, ReleaseJobError, UnrecoverableJobError, type Job, type JobQueue, type JobState, type QueueWorker } from './types.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

/** Polls until `cond` holds; the 20 s limit is a safety net against hangs, not a timing assertion. */
async function until(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  const stop = Date.now() + 20_000;
  while (!(await cond())) {
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const stateIs = (q: JobQueue, id: string, s: JobState) => async () => (await q.getState(id)) === s;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** `makeQueue(name)` returns a queue with that (unique) name; the suite closes it after each test. */
export function queueContract(name: string, makeQueue: (queueName: string) => Promise<JobQueue>): void {
  describe(`JobQueue contract: ${name}`, () => {
    const queues: JobQueue[] = [];
    const workers: QueueWorker[] = [];
    const queue = async () => {
      const q = await makeQueue(`contract-${randomUUID()}`);
      queues.push(q);
      return q;
    };
    afterEach(async () => {
      await Promise.allSettled(workers.splice(0).map((w) => w.close(1_000)));
      await Promise.allSettled(queues.splice(0).map((q) => q.close()));
    });

    it('hands the payload, job id and attempts to the handler and completes the job', async () => {
      const q = await queue();
      const seen: Job[] = [];
      workers.push(await q.process(async (job) => void seen.push(job), { concurrency: 1 }));
      expect(await q.enqueue(enc('hello'), { jobId: 'job-a', attempts: 3 })).toEqual({ jobId: 'job-a', added: true });
      await until('job-a completed', stateIs(q, 'job-a', 'completed'));
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ id: 'job-a', attemptsMade: 0, attempts: 3 });
      expect(dec(seen[0]?.payload ?? new Uint8Array())).toBe('hello');
    });

    it('treats a duplicate job id as a no-op, also once the first job has completed', async () => {
      const q = await queue();
      expect(await q.enqueue(enc('first'), { jobId: 'dup' })).toEqual({ jobId: 'dup', added: true });
      expect(await q.enqueue(enc('second'), { jobId: 'dup' })).toEqual({ jobId: 'dup', added: false });
      const payloads: string[] = [];
      workers.push(await q.process(async (job) => void payloads.push(dec(job.payload)), { concurrency: 1 }));
      await until('dup completed', stateIs(q, 'dup', 'completed'));
      expect(await q.enqueue(enc('third'), { jobId: 'dup' })).toEqual({ jobId: 'dup', added: false });
      expect(await q.getState('dup')).toBe('completed');
      expect(payloads).toEqual(['first']);
    });

    it('retries a failing job with attemptsMade increasing until it succeeds', async () => {
      const q = await queue();
      const attemptsSeen: number[] = [];
      workers.push(
        await q.process(
          async (job) => {
            attemptsSeen.push(job.attemptsMade);
            if (job.attemptsMade < 2) throw new Error(`transient failure ${job.attemptsMade}`);
          },
          { concurrency: 1 },
        ),
      );
      await q.enqueue(enc('x'), { jobId: 'retry', attempts: 3, backoffMs: 10 });
      await until('retry completed', stateIs(q, 'retry', 'completed'));
      expect(attemptsSeen).toEqual([0, 1, 2]);
    });

    it('fails a job after its last attempt', async () => {
      const q = await queue();
      let calls = 0;
      workers.push(
        await q.process(
          async () => {
            calls++;
            throw new Error('always fails');
          },
          { concurrency: 1 },
        ),
      );
      await q.enqueue(enc('x'), { jobId: 'exhaust', attempts: 2, backoffMs: 10 });
      await until('exhaust failed', stateIs(q, 'exhaust', 'failed'));
      expect(calls).toBe(2);
    });

    it('does not retry a job whose handler throws UnrecoverableJobError', async () => {
      const q = await queue();
      let calls = 0;
      workers.push(
        await q.process(
          async () => {
            calls++;
            throw new UnrecoverableJobError('bad input: will never work');
          },
          { concurrency: 1 },
        ),
      );
      await q.enqueue(enc('x'), { jobId: 'unrecoverable', attempts: 5, backoffMs: 10 });
      await until('unrecoverable failed', stateIs(q, 'unrecoverable', 'failed'));
      expect(calls).toBe(1);
    });

    it('runs at most `concurrency` jobs at the same time, and that many when enough are queued', async () => {
      const q = await queue();
      const concurrency = 3;
      const total = 7;
      let active = 0;
      let maxActive = 0;
      let finished = 0;
      const gates: (() => void)[] = [];
      workers.push(
        await q.process(
          async () => {
            active++;
            maxActive = Math.max(maxActive, active);
            await new Promise<void>((r) => gates.push(r));
            active--;
            finished++;
          },
          { concurrency },
        ),
      );
      for (let i = 0; i < total; i++) await q.enqueue(enc(String(i)), { jobId: `conc-${i}` });
      // Release jobs one at a time, each time after the worker has filled every free slot.
      while (finished < total) {
        const expected = Math.min(concurrency, total - finished);
        await until(`${expected} active jobs`, () => active >= expected && gates.length >= expected);
        gates.shift()?.();
        const before = finished;
        await until('a job to finish', () => finished > before);
      }
      expect(maxActive).toBe(concurrency);
    });

    it('returns the payload of a job it keeps, and undefined for an unknown one', async () => {
      const q = await queue();
      await q.enqueue(enc('keep me'), { jobId: 'pl-1', delayMs: 60_000 });
      expect(new TextDecoder().decode(await q.getPayload('pl-1'))).toBe('keep me');
      expect(await q.getPayload('pl-never')).toBeUndefined();
    });

    it('reports waiting, delayed, completed, failed and unknown states', async () => {
      const q = await queue();
      expect(await q.getState('never-added')).toBe('unknown');
      await q.enqueue(enc('x'), { jobId: 'later', delayMs: 60_000 });
      expect(await q.getState('later')).toBe('delayed');
      await q.enqueue(enc('ok'), { jobId: 'st-ok' });
      await q.enqueue(enc('bad'), { jobId: 'st-bad' });
      expect(await q.getState('st-ok')).toBe('waiting');
      workers.push(
        await q.process(
          async (job) => {
            if (dec(job.payload) === 'bad') throw new Error('nope');
          },
          { concurrency: 1 },
        ),
      );
      await until('st-ok completed', stateIs(q, 'st-ok', 'completed'));
      await until('st-bad failed', stateIs(q, 'st-bad', 'failed'));
      expect(await q.getState('later')).toBe('delayed');
    });

    it('stats() counts waiting, delayed, active and failed jobs and ages the oldest waiting one', async () => {
      const q = await queue();
      expect(await q.stats()).toEqual({ waiting: 0, delayed: 0, active: 0, failed: 0, oldestWaitingMs: 0 });
      await q.enqueue(enc('x'), { jobId: 'stats-later', delayMs: 60_000 });
      await q.enqueue(enc('a'), { jobId: 'stats-a' });
      await q.enqueue(enc('b'), { jobId: 'stats-b' });
      const before = Date.now();
      await until('the oldest waiting job has aged', async () => (await q.stats()).oldestWaitingMs > 0 && Date.now() > before);
      expect(await q.stats()).toMatchObject({ waiting: 2, delayed: 1, active: 0, failed: 0 });
      const started = deferred();
      const gate = deferred();
      workers.push(
        await q.process(
          async (job) => {
            if (dec(job.payload) === 'b') throw new UnrecoverableJobError('poison');
            started.resolve();
            await gate.promise;
          },
          { concurrency: 2 },
        ),
      );
      await started.promise;
      await until('stats-b failed', stateIs(q, 'stats-b', 'failed'));
      expect(await q.stats()).toEqual({ waiting: 0, delayed: 1, active: 1, failed: 1, oldestWaitingMs: 0 });
      gate.resolve();
      await until('stats-a completed', stateIs(q, 'stats-a', 'completed'));
    });

    it('reports a running job as active', async () => {
      const q = await queue();
      const started = deferred();
      const gate = deferred();
      workers.push(
        await q.process(
          async () => {
            started.resolve();
            await gate.promise;
          },
          { concurrency: 1 },
        ),
      );
      await q.enqueue(enc('x'), { jobId: 'running' });
      await started.promise;
      expect(await q.getState('running')).toBe('active');
      gate.resolve();
      await until('running completed', stateIs(q, 'running', 'completed'));
    });

    it('close(graceMs) waits for an active job that finishes within the grace period', async () => {
      const q = await queue();
      const started = deferred();
      const gate = deferred();
      let aborted: boolean | undefined;
      const w = await q.process(
        async (_job, signal) => {
          started.resolve();
          await gate.promise;
          aborted = signal.aborted;
        },
        { concurrency: 1 },
      );
      await q.enqueue(enc('x'), { jobId: 'graceful' });
      await started.promise;
      const closing = w.close(30_000);
      gate.resolve();
      await closing;
      expect(aborted).toBe(false);
      expect(await q.getState('graceful')).toBe('completed');
    });

    it('hands a job back without counting an attempt when its handler throws ReleaseJobError while the worker closes', async () => {
      const q = await queue();
      const started = deferred();
      const release = deferred();
      const w = await q.process(
        async () => {
          started.resolve();
          await release.promise;
          throw new ReleaseJobError('draining');
        },
        { concurrency: 1 },
      );
      await q.enqueue(enc('x'), { jobId: 'released', attempts: 1 });
      await started.promise;
      const closing = w.close(30_000);
      release.resolve();
      await closing;
      expect(await q.getState('released')).toBe('waiting');
      const next: Job[] = [];
      workers.push(await q.process(async (job) => void next.push(job), { concurrency: 1 }));
      await until('released completed', stateIs(q, 'released', 'completed'));
      expect(next.map((j) => j.attemptsMade)).toEqual([0]);
    });

    it('a job deferred by its handler comes back later without counting an attempt, and jobs behind it run first', async () => {
      const q = await queue();
      const seen: Array<{ id: string; attemptsMade: number }> = [];
      let deferrals = 0;
      workers.push(
        await q.process(
          async (job) => {
            seen.push({ id: job.id, attemptsMade: job.attemptsMade });
            if (job.id === 'deferred' && deferrals++ < 2) throw new DeferJobError('tenant at its cap', 200);
          },
          { concurrency: 1 },
        ),
      );
      await q.enqueue(enc('a'), { jobId: 'deferred', attempts: 1 });
      await q.enqueue(enc('b'), { jobId: 'behind', attempts: 1 });
      await until('deferred completed', stateIs(q, 'deferred', 'completed'));
      expect(await q.getState('behind')).toBe('completed');
      // Attempts: 1 allows no retry, so completing after two deferrals proves none was counted.
      expect(seen.filter((s) => s.id === 'deferred').map((s) => s.attemptsMade)).toEqual([0, 0, 0]);
      expect(seen.findIndex((s) => s.id === 'behind')).toBeLessThan(seen.map((s) => s.id).lastIndexOf('deferred'));
    });

    it('close(graceMs) aborts the signal of a job that outlives the grace period and hands the job back', async () => {
      const q = await queue();
      const started = deferred();
      let reason: unknown;
      const w = await q.process(
        async (_job, signal) => {
          started.resolve();
          await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
          reason = signal.reason;
          throw new Error('aborted');
        },
        { concurrency: 1 },
      );
      await q.enqueue(enc('x'), { jobId: 'handed-back', attempts: 1 });
      await started.promise;
      await w.close(50);
      expect(reason).toBeDefined();
      expect(await q.getState('handed-back')).toBe('waiting');
      const next: Job[] = [];
      workers.push(await q.process(async (job) => void next.push(job), { concurrency: 1 }));
      await until('handed-back completed', stateIs(q, 'handed-back', 'completed'));
      expect(next.map((j) => j.attemptsMade)).toEqual([0]);
    });
  });
}
