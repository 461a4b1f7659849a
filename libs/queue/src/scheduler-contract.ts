/**
 * Contract suite every CronScheduler implementation must pass. Exported from
 * `@agentloop/queue/testing`; call it inside a test file. Schedules tick every second (the
 * 6-field form) so a test sees several ticks quickly.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { CronScheduler, Firing } from './scheduler-types.js';
import type { QueueWorker } from './types.js';

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const EVERY_SECOND = '* * * * * *';

/** Polls until `cond` holds; the 20 s limit is a safety net against hangs, not a timing assertion. */
async function until(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  const stop = Date.now() + 20_000;
  while (!(await cond())) {
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * `makeScheduler(name)` opens a scheduler over the shared backing (Redis, the SQLite file) under
 * that name; called twice with one name it stands for two processes. The suite closes them.
 */
export function schedulerContract(label: string, makeScheduler: (name: string) => Promise<CronScheduler>): void {
  describe(`CronScheduler contract: ${label}`, () => {
    const open: CronScheduler[] = [];
    const workers: QueueWorker[] = [];
    const scheduler = async (name: string) => {
      const s = await makeScheduler(name);
      open.push(s);
      return s;
    };
    afterEach(async () => {
      await Promise.allSettled(workers.splice(0).map((w) => w.close(1_000)));
      await Promise.allSettled(open.splice(0).map((s) => s.close()));
    });

    it('reports the next tick of a schedule in its time zone, and forgets a removed one', async () => {
      const s = await scheduler(`sched-${randomUUID()}`);
      const { nextAt } = await s.upsert({ id: 'daily', pattern: '30 9 * * *', timezone: 'Europe/Paris', data: enc('x') });
      expect(nextAt).toBeDefined();
      const at = new Date(nextAt!);
      expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }).format(at)).toBe('09:30');
      expect(nextAt! - Date.now()).toBeLessThanOrEqual(25 * 3600_000);
      expect(await s.nextAt('daily')).toBe(nextAt);
      expect(await s.remove('daily')).toBe(true);
      expect(await s.remove('daily')).toBe(false);
      expect(await s.nextAt('daily')).toBeUndefined();
    });

    it('fires every tick exactly once across two workers, with the schedule data', async () => {
      const name = `sched-${randomUUID()}`;
      const a = await scheduler(name);
      const b = await scheduler(name);
      const seen: Array<Firing & { by: string }> = [];
      workers.push(await a.process(async (f) => void seen.push({ ...f, by: 'a' })));
      workers.push(await b.process(async (f) => void seen.push({ ...f, by: 'b' })));
      await a.upsert({ id: 'tick', pattern: EVERY_SECOND, data: enc('payload-1') });
      await until('4 ticks', () => seen.length >= 4);
      await a.remove('tick');
      const ticks = seen.map((f) => f.tickAt);
      expect(new Set(ticks).size).toBe(ticks.length);
      expect(seen.every((f) => f.scheduleId === 'tick' && dec(f.data) === 'payload-1')).toBe(true);
      // Ticks are whole seconds, one second apart (one firing per tick, none skipped while workers ran).
      const sorted = [...ticks].sort((x, y) => x - y);
      for (let i = 1; i < sorted.length; i++) expect(sorted[i]! - sorted[i - 1]!).toBe(1000);
    });

    it('keeps a schedule across a restart of every worker, with no new upsert', async () => {
      const name = `sched-${randomUUID()}`;
      const first = await scheduler(name);
      const before: Firing[] = [];
      const w1 = await first.process(async (f) => void before.push(f));
      await first.upsert({ id: 'durable', pattern: EVERY_SECOND, data: enc('kept') });
      await until('a tick before the restart', () => before.length >= 1);
      await w1.close(1_000);
      await first.close();
      const second = await scheduler(name);
      const after: Firing[] = [];
      workers.push(await second.process(async (f) => void after.push(f)));
      await until('2 ticks after the restart', () => after.length >= 2);
      await second.remove('durable');
      expect(dec(after[0]!.data)).toBe('kept');
      const all = [...before, ...after].map((f) => f.tickAt);
      expect(new Set(all).size).toBe(all.length);
    });

    it('stops at endAt and reports no next tick after it', async () => {
      const s = await scheduler(`sched-${randomUUID()}`);
      const seen: Firing[] = [];
      const endAt = Date.now() + 2_500;
      await s.upsert({ id: 'ending', pattern: EVERY_SECOND, endAt, data: enc('e') });
      workers.push(await s.process(async (f) => void seen.push(f)));
      await until('the end time to pass and the schedule to end', async () => Date.now() > endAt + 1_500 && (await s.nextAt('ending')) === undefined);
      expect(seen.length).toBeGreaterThanOrEqual(1);
      expect(seen.every((f) => f.tickAt <= endAt)).toBe(true);
      expect(await s.upsert({ id: 'ended', pattern: EVERY_SECOND, endAt: Date.now() - 1_000, data: enc('e') })).toEqual({ nextAt: undefined });
    });

    it('retries a tick whose handler fails', async () => {
      const s = await scheduler(`sched-${randomUUID()}`);
      const attempts = new Map<number, number>();
      workers.push(
        await s.process(async (f) => {
          const n = (attempts.get(f.tickAt) ?? 0) + 1;
          attempts.set(f.tickAt, n);
          if (n === 1) throw new Error('transient');
        }),
      );
      await s.upsert({ id: 'flaky', pattern: EVERY_SECOND, data: enc('f') });
      await until('a tick handled on its second attempt', () => [...attempts.values()].some((n) => n >= 2));
      await s.remove('flaky');
    });
  });
}
