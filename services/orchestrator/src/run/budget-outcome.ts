/**
 * A run a token budget stopped (issue 17) ran its graph to the end, but did not succeed: it ends
 * as `error` with error `token_budget_exceeded` and the message of its last AI message (which
 * budget, its limit, what was used, when it resets). LangGraph's run statuses have no dedicated
 * one, and SDK clients must keep understanding the status.
 */
import type { JsonObject } from '@agentloop/store';
import { TOKEN_BUDGET_EXCEEDED } from '../budgets/token-accounting.js';
import type { RunOutcome } from '../run-outcome.js';

export function budgetOutcome(values: JsonObject): Extract<RunOutcome, { kind: 'failed' }> | null {
  if (values.finalize_reason !== 'token_budget') return null;
  const messages = Array.isArray(values.messages) ? values.messages : [];
  const last = messages.at(-1) as { content?: unknown } | undefined;
  const message = typeof last?.content === 'string' && last.content !== '' ? last.content : 'The run stopped: a token budget is used up.';
  return { kind: 'failed', error: { error: TOKEN_BUDGET_EXCEEDED, message } };
}
