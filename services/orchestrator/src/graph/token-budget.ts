/**
 * Token budgets inside the graph (issue 17): the check before each model call (agent turns and
 * compaction summaries alike) and the state update that ends the run when a budget refuses one.
 * The run then stops with a last AI message saying which budget, its limit and its reset time,
 * and `finalize_reason: "token_budget"`, which the executor turns into status `error` with
 * error `token_budget_exceeded` (run/budget-outcome.ts).
 */
import { AIMessage } from '@langchain/core/messages';
import { TokenBudgetExceededError, type BudgetStop } from '../budgets/token-accounting.js';
import type { TokenUsage } from '../usage.js';
import type { CallMeter } from './model-calls.js';
import type { FinalizeReason, RunContext } from './state.js';

/** Throws TokenBudgetExceededError when a budget refuses the next model call of the run. */
export async function ensureTokenBudget(ctx: RunContext, meter: CallMeter): Promise<void> {
  const stop = await ctx.tokens?.check(meter.runTokens);
  if (!stop) return;
  ctx.logger.warn({ budget: stop.budget, limit: stop.limit, used: stop.used, resets_at: stop.resets_at }, 'token budget used up; model call refused');
  throw new TokenBudgetExceededError(stop);
}

/** Writes a finished model call to the usage ledger; call it before `meter.record` (it reads whether this is the run's first call). */
export async function recordModelCall(ctx: RunContext, meter: CallMeter, model: string, usage: TokenUsage | null): Promise<void> {
  await ctx.tokens?.record(model, usage, meter.turn === 0);
}

/** The update that ends the run on a refused call. */
export function budgetStopUpdate(stop: BudgetStop): { messages: AIMessage[]; finalize_reason: FinalizeReason } {
  const { message, ...detail } = stop;
  return {
    messages: [new AIMessage({ content: message, response_metadata: { agentloop_finalize: 'token_budget', agentloop_budget: detail } })],
    finalize_reason: 'token_budget',
  };
}
