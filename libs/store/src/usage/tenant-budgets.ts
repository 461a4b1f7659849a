/**
 * A tenant's token budgets against the usage ledger (issue 17), as the gateway (admission) and the
 * orchestrator (before each model call) check them. The ledger read is cached per process for a
 * short time: a check per model call must not cost a query each, and another process's usage
 * shows within `cacheMs`. The cache stays safe: this process's own calls are added to it as they
 * are recorded (`noteUsage`), and an entry read on another UTC day is never used.
 */
import {
  tenantBudgetLimits,
  tenantBudgetStatus,
  usagePeriods,
  type TenantBudgetLimits,
  type TenantBudgetStatus,
  type TenantUsageSoFar,
  type TokenBudgetEnv,
} from '@agentloop/core';
import type { Store } from '../types.js';

export interface TenantBudgetsOptions {
  /** How long a ledger read answers checks (ms); 0 = read every time. Default 2000. */
  cacheMs?: number;
  now?: () => Date;
}

interface CachedUsage {
  day: string;
  readAt: number;
  used: TenantUsageSoFar;
}

export class TenantBudgets {
  private readonly cache = new Map<string, CachedUsage>();
  private readonly cacheMs: number;
  private readonly now: () => Date;

  constructor(
    private readonly store: Pick<Store, 'tokenUsageSoFar'>,
    private readonly env: Partial<TokenBudgetEnv>,
    opts: TenantBudgetsOptions = {},
  ) {
    this.cacheMs = opts.cacheMs ?? 2_000;
    this.now = opts.now ?? (() => new Date());
  }

  limits(tenantId: string): TenantBudgetLimits {
    return tenantBudgetLimits(this.env, tenantId);
  }

  /** Where the tenant stands now. Reads the ledger (or the cache) only when the tenant has a budget. */
  async status(tenantId: string, opts: { fresh?: boolean } = {}): Promise<TenantBudgetStatus> {
    const now = this.now();
    const limits = this.limits(tenantId);
    if (limits.daily === null && limits.monthly === null) return { daily: null, monthly: null, exceeded: null };
    return tenantBudgetStatus(limits, await this.usedSoFar(tenantId, now, opts.fresh ?? false), now);
  }

  /** Adds a call this process just recorded in the ledger to the cached figures. */
  noteUsage(tenantId: string, totalTokens: number): void {
    const entry = this.cache.get(tenantId);
    if (!entry || entry.day !== usagePeriods(this.now()).day) return;
    entry.used = { day: entry.used.day + totalTokens, month: entry.used.month + totalTokens };
  }

  private async usedSoFar(tenantId: string, now: Date, fresh: boolean): Promise<TenantUsageSoFar> {
    const p = usagePeriods(now);
    const hit = this.cache.get(tenantId);
    if (!fresh && hit && hit.day === p.day && now.getTime() - hit.readAt < this.cacheMs) return hit.used;
    const used = await this.store.tokenUsageSoFar(tenantId, p.day, p.monthStart);
    if (this.cacheMs > 0) this.cache.set(tenantId, { day: p.day, readAt: now.getTime(), used });
    return used;
  }
}
