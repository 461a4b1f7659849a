import { REMOVE_ALL_MESSAGES, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { AIMessage, RemoveMessage } from '@langchain/core/messages';
import { planCommandCompaction } from '../../compaction.js';
import { compactWith, meterOf } from '../model-calls.js';
import { budgetStopUpdate } from '../token-budget.js';
import { TokenBudgetExceededError } from '../../budgets/token-accounting.js';
import { ctxOf, type NodeShared, type RunContextDeps } from '../shared.js';
import type { AgentStateType } from '../state.js';

/** A user message that is exactly `/compact` summarizes the conversation before it. */
export function compactNode(deps: RunContextDeps, shared: Pick<NodeShared, 'language' | 'texts'>) {
  const { language, texts } = shared;
  return async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const plan = planCommandCompaction(state.messages);
    if (!plan) return { messages: [new AIMessage({ content: texts.nothingToCompact, response_metadata: { agentloop_compact: 'nothing' } })] };
    const meter = meterOf(state, ctx);
    const compacted = await compactWith(ctx, language, state.messages, plan, meter).catch((err: unknown) => {
      if (err instanceof TokenBudgetExceededError) return err;
      throw err;
    });
    // A token budget refused the summary call (issue 17): the run ends, saying which budget.
    if (compacted instanceof TokenBudgetExceededError) return budgetStopUpdate(compacted.stop);
    const { list, summarized } = compacted;
    const ack = new AIMessage({ content: texts.compacted(summarized), response_metadata: { agentloop_compact: 'command', summarized_messages: summarized } });
    return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...list, ack], ...meter.update(ctx.runId) };
  };
}
