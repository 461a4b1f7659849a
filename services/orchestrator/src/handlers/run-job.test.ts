import { describe, expect, it } from 'vitest';
import { create, RunJobSchema, toBinary } from '@agentloop/proto';
import { MemoryQueue, SqliteQueueDatabase } from '@agentloop/queue';
import type { RunExecutor } from '../run-executor.js';
import { TenantSlots } from '../tenant-slots.js';
import { runJobHandler } from './run-job.js';

/** An executor that records start order and holds each run until released. */
function holdingExecutor() {
  const started: string[] = [];
  const release = new Map<string, () => void>();
  const executor = {
    async execute(job: { runId: string }) {
      started.push(job.runId);
      await new Promise<void>((resolve) => release.set(job.runId, resolve));
    },
    async abandon() {},
  } as unknown as RunExecutor;
  return { executor, started, release: (id: string) => release.get(id)?.() };
}

const job = (runId: string, tenantId: string) => toBinary(RunJobSchema, create(RunJobSchema, { runId, tenantId, threadId: 't' }));

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(cond()).toBe(true);
}

describe('runJobHandler with a per-tenant cap', () => {
  it("runs another tenant's job while one tenant is at its cap, and the deferred jobs once a slot frees", async () => {
    const q = new MemoryQueue('runs-cap');
    const h = holdingExecutor();
    const worker = await q.process(runJobHandler(h.executor, undefined, new TenantSlots(2)), { concurrency: 8 });
    for (let i = 1; i <= 5; i++) await q.enqueue(job(`a${i}`, 'A'), { jobId: `a${i}`, attempts: 1 });
    await q.enqueue(job('b1', 'B'), { jobId: 'b1', attempts: 1 });
    // A holds its two slots; B's job, queued behind three more of A's, starts anyway.
    await until(() => h.started.includes('b1'));
    expect(h.started.filter((id) => id.startsWith('a'))).toEqual(['a1', 'a2']);
    h.release('a1');
    await until(() => h.started.filter((id) => id.startsWith('a')).length === 3);
    // Release whatever runs until all six have run; deferrals are not attempts (attempts: 1).
    await until(() => {
      for (const id of h.started) h.release(id);
      return h.started.length === 6;
    });
    for (const id of h.started) h.release(id);
    let states: string[] = [];
    for (let i = 0; i < 100; i++) {
      states = await Promise.all(['a1', 'a2', 'a3', 'a4', 'a5', 'b1'].map((id) => q.getState(id)));
      if (states.every((st) => st === 'completed')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(states).toEqual(Array(6).fill('completed'));
    await worker.close(1000);
    await q.close();
  });

  it("parks a capped tenant's jobs and wakes the next one when one of its runs ends, not after the park delay", async () => {
    const database = new SqliteQueueDatabase({ path: ':memory:' });
    const q = database.queue('runs-park', { fairness: { weights: new Map() } });
    const h = holdingExecutor();
    const worker = await q.process(runJobHandler(h.executor, undefined, new TenantSlots(1), undefined, q), { concurrency: 8 });
    for (let i = 1; i <= 4; i++) await q.enqueue(job(`a${i}`, 'A'), { jobId: `a${i}`, attempts: 1, group: 'A' });
    await q.enqueue(job('b1', 'B'), { jobId: 'b1', attempts: 1, group: 'B' });
    await until(() => h.started.includes('b1'));
    expect(h.started.filter((id) => id.startsWith('a'))).toEqual(['a1']);
    // A's other jobs are parked (delayed for PARK_MS, 30 s or more), not offered again and again.
    for (const id of ['a2', 'a3', 'a4']) expect(await q.getState(id)).toBe('delayed');
    h.release('a1');
    // Woken by a1's end: a2 (the lowest tag) starts well before its park delay is over.
    await until(() => h.started.includes('a2'));
    expect(await q.getState('a3')).toBe('delayed');
    for (const id of h.started) h.release(id);
    await worker.close(1000);
    await database.close();
  });

  it('without a cap, takes jobs in queue order up to the worker concurrency', async () => {
    const q = new MemoryQueue('runs-nocap');
    const h = holdingExecutor();
    const worker = await q.process(runJobHandler(h.executor), { concurrency: 3 });
    for (let i = 1; i <= 3; i++) await q.enqueue(job(`a${i}`, 'A'), { jobId: `a${i}`, attempts: 1 });
    await q.enqueue(job('b1', 'B'), { jobId: 'b1', attempts: 1 });
    await until(() => h.started.length === 3);
    expect(h.started).toEqual(['a1', 'a2', 'a3']);
    for (const id of ['a1', 'a2', 'a3']) h.release(id);
    await until(() => h.started.includes('b1'));
    h.release('b1');
    await worker.close(1000);
    await q.close();
  });
});

describe('TenantSlots', () => {
  it('counts per tenant and frees on release', () => {
    const s = new TenantSlots(1);
    expect(s.tryTake('A')).toBe(true);
    expect(s.tryTake('A')).toBe(false);
    expect(s.tryTake('B')).toBe(true);
    s.release('A');
    expect(s.tryTake('A')).toBe(true);
    expect(s.count('A')).toBe(1);
  });

  it('applies a per-tenant cap over the default one (0: no cap for that tenant)', () => {
    const s = new TenantSlots(
      1,
      new Map([
        ['big', 3],
        ['free', 0],
      ]),
    );
    expect([s.tryTake('big'), s.tryTake('big'), s.tryTake('big'), s.tryTake('big')]).toEqual([true, true, true, false]);
    for (let i = 0; i < 10; i++) expect(s.tryTake('free')).toBe(true);
    expect([s.tryTake('other'), s.tryTake('other')]).toEqual([true, false]);
  });

  it('with cap 0 never refuses', () => {
    const s = new TenantSlots(0);
    for (let i = 0; i < 100; i++) expect(s.tryTake('A')).toBe(true);
  });
});
