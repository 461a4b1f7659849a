import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, TokenBudgetEnv } from '@agentloop/core';
import { createSqliteStore } from '../sqlite.js';
import type { Store } from '../types.js';
import { TenantBudgets } from './tenant-budgets.js';

const env = parseConfig(TokenBudgetEnv, { TENANT_TOKEN_BUDGETS_DAILY: 'acme=1000', TENANT_TOKEN_BUDGETS_MONTHLY: 'acme=1500' });

describe('TenantBudgets (SQLite ledger, injected clock)', () => {
  let store: Store;
  let now = new Date('2026-03-31T23:59:00Z');
  const clock = () => now;
  const spend = (tenantId: string, day: string, total: number) =>
    store.recordTokenUsage({ tenantId, day, model: 'm', inputTokens: total, outputTokens: 0, totalTokens: total, firstCallOfRun: false });

  beforeAll(async () => {
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
  });
  afterAll(async () => {
    await store.close();
  });

  it('refuses once the day is used up, until the next UTC midnight, which is also the month end here', async () => {
    const budgets = new TenantBudgets(store, env, { cacheMs: 0, now: clock });
    await spend('acme', '2026-03-31', 1000);
    const s = await budgets.status('acme');
    expect(s.exceeded).toMatchObject({ budget: 'daily', used: 1000, resets_at: '2026-04-01T00:00:00.000Z', retry_after_s: 60 });
    expect(s.monthly).toEqual({ limit: 1500, used: 1000, resets_at: '2026-04-01T00:00:00.000Z' });
    now = new Date('2026-04-01T00:00:00Z');
    expect((await budgets.status('acme')).exceeded).toBeNull();
  });

  it('a cached read answers within cacheMs; this process’s own usage is added to it; another process’s shows after cacheMs', async () => {
    now = new Date('2026-05-10T10:00:00Z');
    const budgets = new TenantBudgets(store, env, { cacheMs: 2000, now: clock });
    await spend('acme', '2026-05-10', 600);
    expect((await budgets.status('acme')).daily?.used).toBe(600);
    // Recorded by this process: counted at once, without a read.
    await spend('acme', '2026-05-10', 400);
    budgets.noteUsage('acme', 400);
    expect((await budgets.status('acme')).exceeded?.budget).toBe('daily');
    // Written by another process: not seen until the cached read expires.
    const other = new TenantBudgets(store, env, { cacheMs: 2000, now: clock });
    now = new Date('2026-05-11T10:00:00Z');
    expect((await other.status('acme')).daily?.used).toBe(0);
    await spend('acme', '2026-05-11', 700);
    now = new Date('2026-05-11T10:00:01Z');
    expect((await other.status('acme')).daily?.used).toBe(0);
    expect((await other.status('acme', { fresh: true })).daily?.used).toBe(700);
    now = new Date('2026-05-11T10:00:05Z');
    expect((await other.status('acme')).daily?.used).toBe(700);
  });

  it('an entry cached on another UTC day is never used', async () => {
    now = new Date('2026-06-01T23:59:59Z');
    const budgets = new TenantBudgets(store, env, { cacheMs: 600_000, now: clock });
    await spend('acme', '2026-06-01', 1200);
    expect((await budgets.status('acme')).exceeded?.budget).toBe('daily');
    now = new Date('2026-06-02T00:00:01Z');
    expect((await budgets.status('acme')).daily?.used).toBe(0);
  });

  it('a tenant without a budget is not read at all', async () => {
    const reads: string[] = [];
    const budgets = new TenantBudgets({ tokenUsageSoFar: async (t) => (reads.push(t), { day: 0, month: 0 }) }, env, { now: clock });
    expect(await budgets.status('globex')).toEqual({ daily: null, monthly: null, exceeded: null });
    expect(reads).toEqual([]);
  });
});
