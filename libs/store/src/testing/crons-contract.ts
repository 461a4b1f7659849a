/** The crons part of the `Store` contract (issue 12), run by `storeContract` on each backend. */
import { describe, expect, it } from 'vitest';
import type { NewCron, Store } from '../types.js';
import type { StoreTestHarness } from './contract.js';
import { uid, useMigratedStore } from './fixture.js';

export function cronsContract(harness: StoreTestHarness): void {
  describe(`Store crons (${harness.name})`, () => {
    const store = useMigratedStore(harness);

    const create = (tenantId: string, over: Partial<NewCron> = {}) =>
      store().createCron({
        tenantId,
        cronId: uid('c'),
        assistantId: 'agent',
        threadId: undefined,
        schedule: '*/5 * * * *',
        timezone: undefined,
        endTime: undefined,
        payload: { input: { messages: [{ role: 'user', content: 'hi' }] } },
        metadata: {},
        enabled: true,
        onRunCompleted: undefined,
        userId: undefined,
        ...over,
      });

    it('stores a cron and reads it back; another tenant does not see it', async () => {
      const tenantId = uid('t');
      const end = new Date(Date.now() + 3600_000);
      const c = await create(tenantId, { cronId: 'c1', threadId: 'th1', timezone: 'Europe/Paris', endTime: end, metadata: { k: 'v' }, onRunCompleted: 'keep' });
      expect(c).toMatchObject({
        tenantId,
        cronId: 'c1',
        threadId: 'th1',
        schedule: '*/5 * * * *',
        timezone: 'Europe/Paris',
        metadata: { k: 'v' },
        enabled: true,
      });
      expect(c.endTime?.getTime()).toBe(end.getTime());
      expect(await store().getCron(tenantId, 'c1')).toEqual(c);
      expect(await store().getCron(uid('other'), 'c1')).toBeUndefined();
      await expect(create(tenantId, { cronId: 'c1' })).rejects.toMatchObject({ code: 'CONFLICT' });
    });

    it('patches the given fields only, clears with null, and deletes', async () => {
      const tenantId = uid('t');
      const c = await create(tenantId, { timezone: 'UTC', metadata: { a: 1 } });
      const u = await store().updateCron(tenantId, c.cronId, { schedule: '0 9 * * *', enabled: false, timezone: null });
      expect(u).toMatchObject({ schedule: '0 9 * * *', enabled: false, timezone: undefined, metadata: { a: 1 }, payload: c.payload });
      expect(await store().updateCron(uid('other'), c.cronId, { enabled: true })).toBeUndefined();
      expect(await store().updateCron(tenantId, 'missing', { enabled: true })).toBeUndefined();
      expect(await store().deleteCron(uid('other'), c.cronId)).toBe(false);
      expect(await store().deleteCron(tenantId, c.cronId)).toBe(true);
      expect(await store().getCron(tenantId, c.cronId)).toBeUndefined();
    });

    it('searches and counts by assistant, thread, enabled and metadata, with paging and sorting', async () => {
      const tenantId = uid('t');
      const a = await create(tenantId, { cronId: 'a', threadId: 'x', metadata: { team: 'red' } });
      const b = await create(tenantId, { cronId: 'b', threadId: 'x', enabled: false, metadata: { team: 'blue' } });
      const c = await create(tenantId, { cronId: 'c', assistantId: 'other' });
      await create(uid('other'), { cronId: 'd', threadId: 'x' });
      const ids = async (o: Parameters<Store['searchCrons']>[1]) => (await store().searchCrons(tenantId, o)).map((r) => r.cronId);
      expect(await ids({ limit: 10, offset: 0, sortBy: 'cron_id', sortOrder: 'asc' })).toEqual(['a', 'b', 'c']);
      expect(await ids({ limit: 10, offset: 0, threadId: 'x', sortBy: 'cron_id', sortOrder: 'desc' })).toEqual(['b', 'a']);
      expect(await ids({ limit: 1, offset: 1, sortBy: 'cron_id', sortOrder: 'asc' })).toEqual(['b']);
      expect(await ids({ limit: 10, offset: 0, enabled: true, sortBy: 'cron_id', sortOrder: 'asc' })).toEqual(['a', 'c']);
      expect(await ids({ limit: 10, offset: 0, metadata: { team: 'blue' } })).toEqual(['b']);
      expect(await ids({ limit: 10, offset: 0, assistantId: 'other' })).toEqual([c.cronId]);
      expect(await store().countCrons(tenantId, {})).toBe(3);
      expect(await store().countCrons(tenantId, { threadId: 'x' })).toBe(2);
      expect(await store().countCrons(tenantId, { metadata: { team: 'red' } })).toBe(1);
      expect([a.cronId, b.cronId]).toEqual(['a', 'b']);
    });
  });
}
