/** The usage ledger part of the `Store` contract (issue 17), run by `storeContract` on each backend. */
import { describe, expect, it } from 'vitest';
import type { StoreTestHarness } from './contract.js';
import { uid, useMigratedStore } from './fixture.js';

export function tokenUsageContract(harness: StoreTestHarness): void {
  describe(`Store token usage ledger (${harness.name})`, () => {
    const store = useMigratedStore(harness);
    const call = (tenantId: string, day: string, model: string, input: number, output: number, firstCallOfRun = false) =>
      store().recordTokenUsage({ tenantId, day, model, inputTokens: input, outputTokens: output, totalTokens: input + output, firstCallOfRun });

    it('adds each call to its (tenant, day, model) row', async () => {
      const t = uid('t');
      await call(t, '2026-03-10', 'gpt', 300, 100, true);
      await call(t, '2026-03-10', 'gpt', 250, 50);
      await call(t, '2026-03-10', 'scripted', 10, 5, true);
      const rows = await store().tokenUsageRows(t, '2026-03-10', '2026-03-10');
      expect(rows).toEqual([
        { tenantId: t, day: '2026-03-10', model: 'gpt', inputTokens: 550, outputTokens: 150, totalTokens: 700, modelCalls: 2, runs: 1 },
        { tenantId: t, day: '2026-03-10', model: 'scripted', inputTokens: 10, outputTokens: 5, totalTokens: 15, modelCalls: 1, runs: 1 },
      ]);
    });

    it('loses no increment when many calls land on one row at once', async () => {
      const t = uid('t');
      await Promise.all(Array.from({ length: 20 }, () => call(t, '2026-03-11', 'gpt', 7, 3)));
      const [row] = await store().tokenUsageRows(t, '2026-03-11', '2026-03-11');
      expect(row).toMatchObject({ totalTokens: 200, inputTokens: 140, modelCalls: 20 });
    });

    it('sums today and the month so far, ignoring other months and days after', async () => {
      const t = uid('t');
      await call(t, '2026-02-28', 'gpt', 1000, 0);
      await call(t, '2026-03-01', 'gpt', 100, 0);
      await call(t, '2026-03-15', 'gpt', 40, 2);
      await call(t, '2026-03-15', 'other', 8, 0);
      await call(t, '2026-03-16', 'gpt', 5000, 0);
      expect(await store().tokenUsageSoFar(t, '2026-03-15', '2026-03-01')).toEqual({ day: 50, month: 150 });
      expect(await store().tokenUsageSoFar(uid('t'), '2026-03-15', '2026-03-01')).toEqual({ day: 0, month: 0 });
    });

    it("keeps tenants apart: a tenant's rows and totals never include another's", async () => {
      const a = uid('t');
      const b = uid('t');
      await call(a, '2026-04-01', 'gpt', 10, 0);
      await call(b, '2026-04-01', 'gpt', 99, 0);
      expect((await store().tokenUsageRows(a, '2026-04-01', '2026-04-30')).map((r) => r.totalTokens)).toEqual([10]);
      expect(await store().tokenUsageSoFar(a, '2026-04-01', '2026-04-01')).toEqual({ day: 10, month: 10 });
      const all = await store().tokenUsageRowsOfAllTenants('2026-04-01', '2026-04-01');
      const mine = all.filter((r) => r.tenantId === a || r.tenantId === b).map((r) => [r.tenantId, r.totalTokens]);
      expect(mine).toHaveLength(2);
      expect(mine).toContainEqual([a, 10]);
      expect(mine).toContainEqual([b, 99]);
    });

    it('refuses a day that is not YYYY-MM-DD', async () => {
      await expect(call(uid('t'), '2026-4-1', 'gpt', 1, 1)).rejects.toThrow(/day must be a YYYY-MM-DD date/);
    });
  });
}
