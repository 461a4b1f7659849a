/**
 * Token budgets at admission (issue 17): a tenant that has used its daily or monthly budget gets
 * 429 with `Retry-After` (seconds to the reset: the next UTC midnight, or the first of next month)
 * and a body naming the budget, its limit, what was used and `resets_at`. Read fresh from the
 * usage ledger (one indexed range read per admission), so a run that just used the budget up
 * refuses the next submission at once, on every gateway replica.
 */
import { budgetExceededMessage } from '@agentloop/core';
import type { TenantBudgets } from '@agentloop/store';
import { instruments } from '@agentloop/telemetry';
import { ApiError } from '../errors.js';

export async function checkTokenBudget(budgets: TenantBudgets | undefined, tenantId: string): Promise<void> {
  if (!budgets) return;
  const status = await budgets.status(tenantId, { fresh: true });
  const gauge = instruments().tokenBudgetRemaining;
  for (const [budget, s] of [['daily', status.daily] as const, ['monthly', status.monthly] as const]) {
    if (s) gauge.record(Math.max(0, s.limit - s.used), { 'agentloop.tenant': tenantId, budget });
  }
  const { exceeded } = status;
  if (!exceeded) return;
  throw new ApiError('RESOURCE_EXHAUSTED', `${budgetExceededMessage(tenantId, exceeded)} New runs are refused until then.`, {
    retryAfterS: exceeded.retry_after_s,
    extra: { error: 'token_budget_exceeded', budget: exceeded.budget, limit: exceeded.limit, used: exceeded.used, resets_at: exceeded.resets_at },
  });
}
