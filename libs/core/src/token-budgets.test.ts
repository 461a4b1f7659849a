import { describe, expect, it } from 'vitest';
import { parseConfig } from './config.js';
import { budgetsConfigured, tenantBudgetLimits, tenantBudgetStatus, TokenBudgetEnv, usagePeriods } from './token-budgets.js';

describe('usagePeriods', () => {
  it('a second before midnight UTC belongs to that day; the day resets at midnight', () => {
    const p = usagePeriods(new Date('2026-03-10T23:59:59.999Z'));
    expect(p.day).toBe('2026-03-10');
    expect(p.dayResetsAt.toISOString()).toBe('2026-03-11T00:00:00.000Z');
    expect(p.monthStart).toBe('2026-03-01');
    expect(p.monthResetsAt.toISOString()).toBe('2026-04-01T00:00:00.000Z');
  });

  it('midnight itself starts the new day', () => {
    const p = usagePeriods(new Date('2026-03-11T00:00:00.000Z'));
    expect(p.day).toBe('2026-03-11');
    expect(p.dayResetsAt.toISOString()).toBe('2026-03-12T00:00:00.000Z');
  });

  it('rolls over month ends, year ends and leap days', () => {
    expect(usagePeriods(new Date('2026-12-31T12:00:00Z')).dayResetsAt.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(usagePeriods(new Date('2026-12-31T12:00:00Z')).monthResetsAt.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(usagePeriods(new Date('2028-02-28T08:00:00Z')).dayResetsAt.toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(usagePeriods(new Date('2028-02-29T08:00:00Z')).monthResetsAt.toISOString()).toBe('2028-03-01T00:00:00.000Z');
    expect(usagePeriods(new Date('2026-01-31T23:00:00Z')).dayResetsAt.toISOString()).toBe('2026-02-01T00:00:00.000Z');
  });

  it('is UTC whatever the local offset of the instant given', () => {
    expect(usagePeriods(new Date('2026-03-10T23:30:00-05:00')).day).toBe('2026-03-11');
  });
});

describe('tenantBudgetStatus', () => {
  const limits = { daily: 1000, monthly: 10_000 };

  it('under both budgets: nothing exceeded, both reported with their reset times', () => {
    const s = tenantBudgetStatus(limits, { day: 999, month: 5000 }, new Date('2026-03-10T12:00:00Z'));
    expect(s.exceeded).toBeNull();
    expect(s.daily).toEqual({ limit: 1000, used: 999, resets_at: '2026-03-11T00:00:00.000Z' });
    expect(s.monthly).toEqual({ limit: 10_000, used: 5000, resets_at: '2026-04-01T00:00:00.000Z' });
  });

  it('a budget reached exactly is used up; Retry-After counts the seconds to the next UTC midnight', () => {
    const s = tenantBudgetStatus(limits, { day: 1000, month: 5000 }, new Date('2026-03-10T23:59:30Z'));
    expect(s.exceeded).toMatchObject({ budget: 'daily', limit: 1000, used: 1000, resets_at: '2026-03-11T00:00:00.000Z', retry_after_s: 30 });
  });

  it('rounds a partial second up, never to zero', () => {
    const s = tenantBudgetStatus(limits, { day: 2000, month: 2000 }, new Date('2026-03-10T23:59:59.999Z'));
    expect(s.exceeded?.retry_after_s).toBe(1);
  });

  it('both used up: the monthly budget refuses (it resets last), until the first of next month', () => {
    const s = tenantBudgetStatus(limits, { day: 1500, month: 10_500 }, new Date('2026-02-28T23:00:00Z'));
    expect(s.exceeded).toMatchObject({ budget: 'monthly', resets_at: '2026-03-01T00:00:00.000Z', retry_after_s: 3600 });
  });

  it('no budget: null, never exceeded', () => {
    const s = tenantBudgetStatus({ daily: null, monthly: null }, { day: 1e9, month: 1e9 }, new Date());
    expect(s).toEqual({ daily: null, monthly: null, exceeded: null });
  });
});

describe('TokenBudgetEnv', () => {
  it('a tenant entry overrides the default; 0 means no budget', () => {
    const env = parseConfig(TokenBudgetEnv, {
      TOKEN_BUDGET_DAILY: '5000',
      TENANT_TOKEN_BUDGETS_DAILY: 'acme=1000,free=0',
      TENANT_TOKEN_BUDGETS_MONTHLY: 'acme=20000',
    });
    expect(tenantBudgetLimits(env, 'acme')).toEqual({ daily: 1000, monthly: 20_000 });
    expect(tenantBudgetLimits(env, 'free')).toEqual({ daily: null, monthly: null });
    expect(tenantBudgetLimits(env, 'other')).toEqual({ daily: 5000, monthly: null });
    expect(budgetsConfigured(env)).toBe(true);
    expect(budgetsConfigured(parseConfig(TokenBudgetEnv, {}))).toBe(false);
  });

  it('names the variable and the entry that is not tenant=tokens', () => {
    expect(() => parseConfig(TokenBudgetEnv, { TENANT_TOKEN_BUDGETS_MONTHLY: 'acme:10' })).toThrow(
      /TENANT_TOKEN_BUDGETS_MONTHLY: "acme:10" is not tenant=tokens/,
    );
    expect(() => parseConfig(TokenBudgetEnv, { TOKEN_BUDGET_DAILY: '-1' })).toThrow(/TOKEN_BUDGET_DAILY/);
  });
});
