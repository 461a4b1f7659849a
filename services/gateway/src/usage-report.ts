/**
 * `GET /usage` (issue 17): a tenant's token usage over a range of UTC days, from the usage ledger,
 * with where it stands against its budgets. The shape is a contract: the ops console reads it.
 */
import type { TenantBudgetStatus } from '@agentloop/core';
import type { TokenUsageRow } from '@agentloop/store';

export interface UsageCounts {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  model_calls: number;
}

export interface UsageReport {
  tenant_id: string;
  from: string;
  to: string;
  totals: UsageCounts & { runs: number };
  by_model: Array<UsageCounts & { model: string }>;
  /** Only when asked for (`group_by=day`): one entry per day with usage, oldest first. */
  by_day?: Array<UsageCounts & { day: string }>;
  budget: Pick<TenantBudgetStatus, 'daily' | 'monthly'>;
}

const zero = (): UsageCounts => ({ input_tokens: 0, output_tokens: 0, total_tokens: 0, model_calls: 0 });

function add(into: UsageCounts, r: TokenUsageRow): void {
  into.input_tokens += r.inputTokens;
  into.output_tokens += r.outputTokens;
  into.total_tokens += r.totalTokens;
  into.model_calls += r.modelCalls;
}

/** Sums `rows` (one tenant's) into the report; `byDay` adds the per-day breakdown. */
export function usageReport(
  tenantId: string,
  range: { from: string; to: string },
  rows: readonly TokenUsageRow[],
  budget: TenantBudgetStatus,
  byDay: boolean,
): UsageReport {
  const totals = { ...zero(), runs: 0 };
  const models = new Map<string, UsageCounts>();
  const days = new Map<string, UsageCounts>();
  for (const r of rows) {
    add(totals, r);
    totals.runs += r.runs;
    add(models.get(r.model) ?? models.set(r.model, zero()).get(r.model)!, r);
    if (byDay) add(days.get(r.day) ?? days.set(r.day, zero()).get(r.day)!, r);
  }
  return {
    tenant_id: tenantId,
    from: range.from,
    to: range.to,
    totals,
    by_model: [...models].map(([model, c]) => ({ model, ...c })).sort((a, b) => b.total_tokens - a.total_tokens || (a.model < b.model ? -1 : 1)),
    ...(byDay ? { by_day: [...days].map(([day, c]) => ({ day, ...c })).sort((a, b) => (a.day < b.day ? -1 : 1)) } : {}),
    budget: { daily: budget.daily, monthly: budget.monthly },
  };
}
