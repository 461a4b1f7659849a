import type { TokenCount } from './usage.js';
import type { ServerAccess } from './workspace-files.js';

/** A budget as `GET /usage` reports it (`budget.daily` / `budget.monthly`), null when none is set. */
export interface BudgetFigure {
  limit: number;
  used: number;
  resets_at: string;
}

/** The tenant's figures from the usage ledger (README "Budgets and usage"). */
export interface TenantUsage {
  tenantId: string;
  today: TokenCount;
  month: TokenCount;
  /** The month's range as the server counted it (UTC days). */
  from: string;
  to: string;
  budget: { daily: BudgetFigure | null; monthly: BudgetFigure | null };
}

/** The parts of `GET /usage?group_by=day` read here (services/gateway/src/usage-report.ts). */
interface UsageReportBody {
  tenant_id: string;
  from: string;
  to: string;
  totals: TokenCount;
  by_day?: Array<TokenCount & { day: string }>;
  budget?: { daily?: BudgetFigure | null; monthly?: BudgetFigure | null };
}

const counts = (c: TokenCount | undefined): TokenCount => ({
  input_tokens: c?.input_tokens ?? 0,
  output_tokens: c?.output_tokens ?? 0,
  total_tokens: c?.total_tokens ?? 0,
});

/**
 * The caller's tenant usage today and this month with its budgets, from `GET /usage` (the ledger:
 * every run counted, deleted threads included). Undefined when the server has no such endpoint
 * (404) or does not say which tenant the caller is: the caller then sums its threads instead.
 * Any other refusal throws with the server's words.
 */
export async function fetchTenantUsage(access: ServerAccess): Promise<TenantUsage | undefined> {
  const base = access.apiUrl.replace(/\/+$/, '');
  const headers = access.apiKey ? { 'x-api-key': access.apiKey } : undefined;
  // An operator key (or a server without auth) reads every tenant's usage unless one is named: name our own.
  const session = await fetch(`${base}/console/session`, { headers });
  const own = session.ok ? ((await session.json()) as { tenant_id?: unknown }).tenant_id : undefined;
  const query = new URLSearchParams({ group_by: 'day', ...(typeof own === 'string' ? { tenant_id: own } : {}) });
  const res = await fetch(`${base}/usage?${query.toString()}`, { headers });
  if (res.status === 404) return undefined;
  const body = (await res.json().catch(() => ({}))) as Partial<UsageReportBody> & { detail?: unknown };
  if (!res.ok) throw new Error(`GET /usage: ${res.status} ${String(body.detail ?? res.statusText)}`);
  if (typeof body.tenant_id !== 'string' || typeof body.to !== 'string') return undefined;
  return {
    tenantId: body.tenant_id,
    today: counts(body.by_day?.find((d) => d.day === body.to)),
    month: counts(body.totals),
    from: body.from ?? body.to,
    to: body.to,
    budget: { daily: body.budget?.daily ?? null, monthly: body.budget?.monthly ?? null },
  };
}

/** "daily budget: 1200 of 50000 tokens used, resets 2026-11-25T00:00:00.000Z" per budget set, or "no budget set". */
export function describeBudgets(budget: TenantUsage['budget']): string {
  const parts = (['daily', 'monthly'] as const).flatMap((name) => {
    const b = budget[name];
    return b ? [`${name} budget: ${b.used} of ${b.limit} tokens used, resets ${b.resets_at}`] : [];
  });
  return parts.length > 0 ? parts.join('; ') : 'no budget set';
}
