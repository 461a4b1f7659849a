/**
 * Token budgets (issue 17): what a tenant may spend per UTC day and per UTC month, and the
 * arithmetic both the gateway (admission) and the orchestrator (before each model call) apply.
 * Pure: the clock is an argument, the usage so far is read by the caller (the usage ledger).
 */
import { z } from 'zod';
import { envTenantNumbers } from './config.js';

/** `acme=1000,globex=0` → Map(tenant → tokens); 0 = no budget for that tenant. */
const tenantTokens = (variable: string) => envTenantNumbers(variable, 0, Number.MAX_SAFE_INTEGER, 'tokens');

const tokens = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(0);

/**
 * The budget variables, shared by the gateway's and the orchestrator's config schemas
 * (`.extend(TokenBudgetEnv.shape)`). A tenant's own entry wins over the default; 0 = no budget.
 */
export const TokenBudgetEnv = z.object({
  /** Tokens every tenant may use per UTC day; 0 = unlimited. */
  TOKEN_BUDGET_DAILY: tokens,
  /** Tokens every tenant may use per UTC calendar month; 0 = unlimited. */
  TOKEN_BUDGET_MONTHLY: tokens,
  /** Per-tenant daily budgets: `acme=1000000,globex=50000` (0 = unlimited for that tenant). */
  TENANT_TOKEN_BUDGETS_DAILY: tenantTokens('TENANT_TOKEN_BUDGETS_DAILY'),
  /** Per-tenant monthly budgets, same form. */
  TENANT_TOKEN_BUDGETS_MONTHLY: tenantTokens('TENANT_TOKEN_BUDGETS_MONTHLY'),
});
export type TokenBudgetEnv = z.infer<typeof TokenBudgetEnv>;

export type BudgetPeriod = 'daily' | 'monthly';

/** A tenant's limits; null = no budget for that period. */
export interface TenantBudgetLimits {
  daily: number | null;
  monthly: number | null;
}

export function tenantBudgetLimits(env: Partial<TokenBudgetEnv>, tenantId: string): TenantBudgetLimits {
  const pick = (own: number | undefined, def: number | undefined) => {
    const v = own ?? def ?? 0;
    return v > 0 ? v : null;
  };
  return {
    daily: pick(env.TENANT_TOKEN_BUDGETS_DAILY?.get(tenantId), env.TOKEN_BUDGET_DAILY),
    monthly: pick(env.TENANT_TOKEN_BUDGETS_MONTHLY?.get(tenantId), env.TOKEN_BUDGET_MONTHLY),
  };
}

/** True when no tenant can have a budget (nothing to check, no ledger read needed). */
export function budgetsConfigured(env: Partial<TokenBudgetEnv>): boolean {
  const any = (m: ReadonlyMap<string, number> | undefined) => [...(m?.values() ?? [])].some((v) => v > 0);
  return (
    (env.TOKEN_BUDGET_DAILY ?? 0) > 0 || (env.TOKEN_BUDGET_MONTHLY ?? 0) > 0 || any(env.TENANT_TOKEN_BUDGETS_DAILY) || any(env.TENANT_TOKEN_BUDGETS_MONTHLY)
  );
}

/** The UTC day and month `now` falls in, as the ledger keys them, and when each ends. */
export interface UsagePeriods {
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  /** First day of the month, `YYYY-MM-01`. */
  monthStart: string;
  /** Next UTC midnight. */
  dayResetsAt: Date;
  /** 00:00 UTC on the first of next month. */
  monthResetsAt: Date;
}

/** `YYYY-MM-DD` of a date in UTC. */
export const utcDay = (d: Date): string => d.toISOString().slice(0, 10);

export function usagePeriods(now: Date): UsagePeriods {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  return {
    day: utcDay(now),
    monthStart: utcDay(new Date(Date.UTC(y, m, 1))),
    // Date.UTC rolls over day 32 / month 12 into the next month / year.
    dayResetsAt: new Date(Date.UTC(y, m, d + 1)),
    monthResetsAt: new Date(Date.UTC(y, m + 1, 1)),
  };
}

/** One budget as reported (`GET /usage`, 429 bodies). */
export interface BudgetState {
  limit: number;
  used: number;
  resets_at: string;
}

/** A budget used up: which one, and when it resets. */
export interface BudgetExceeded extends BudgetState {
  budget: BudgetPeriod;
  /** Whole seconds until the reset (at least 1): the `Retry-After` value. */
  retry_after_s: number;
}

export interface TenantBudgetStatus {
  daily: BudgetState | null;
  monthly: BudgetState | null;
  /** The budget that refuses calls now, or null. When both are used up, the one that resets last. */
  exceeded: BudgetExceeded | null;
}

/** Tokens the tenant used so far today and this month (from the ledger). */
export interface TenantUsageSoFar {
  day: number;
  month: number;
}

/**
 * Where a tenant stands. A budget is used up when `used >= limit`: the check comes before a
 * model call and cannot know what the call will cost, so the call that crosses the limit
 * completes and the next one is refused.
 */
export function tenantBudgetStatus(limits: TenantBudgetLimits, used: TenantUsageSoFar, now: Date): TenantBudgetStatus {
  const p = usagePeriods(now);
  const state = (limit: number | null, u: number, resets: Date): BudgetState | null =>
    limit === null ? null : { limit, used: u, resets_at: resets.toISOString() };
  const daily = state(limits.daily, used.day, p.dayResetsAt);
  const monthly = state(limits.monthly, used.month, p.monthResetsAt);
  const over = (budget: BudgetPeriod, s: BudgetState | null): BudgetExceeded | null =>
    s && s.used >= s.limit ? { budget, ...s, retry_after_s: Math.max(1, Math.ceil((Date.parse(s.resets_at) - now.getTime()) / 1000)) } : null;
  return { daily, monthly, exceeded: over('monthly', monthly) ?? over('daily', daily) };
}

/** The sentence a refused call or admission gives: which budget, its limit, what was used, when it resets. */
export function budgetExceededMessage(tenantId: string, e: BudgetExceeded): string {
  return `Tenant ${tenantId} has used its ${e.budget} token budget: ${e.used} of ${e.limit} tokens. It resets at ${e.resets_at}.`;
}
