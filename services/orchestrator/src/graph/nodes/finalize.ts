import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { ctxOf, detectRepeatedToolCall, lastAi, type NodeShared, type RunContextDeps } from '../shared.js';
import type { AgentStateType, FinalizeReason } from '../state.js';

/**
 * When forced, answers the pending tool calls (so the history stays valid) and explains why the run
 * stopped. The router only comes here with pending calls (a final answer goes to END); without any
 * (a client's `goto`) there is nothing to answer.
 */
export function finalizeNode(deps: RunContextDeps, shared: Pick<NodeShared, 'texts'>) {
  const { texts } = shared;
  return async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ai = lastAi(state.messages);
    const pending = ai?.tool_calls ?? [];
    // A run a token budget stopped keeps saying so (the executor ends it as `error`).
    if (pending.length === 0) return state.finalize_reason === 'token_budget' ? {} : { finalize_reason: null };
    const ctx = ctxOf(deps, config);
    const repeated = detectRepeatedToolCall(state.messages);
    const reason: FinalizeReason = state.loops >= state.max_loops ? 'loop_limit' : repeated ? 'repeated_tool_call' : 'loop_limit';
    const text = reason === 'repeated_tool_call' ? texts.repeatedCall(repeated ?? pending[0]!.name) : texts.loopLimit(state.max_loops);
    ctx.logger.warn({ reason, loops: state.loops, max_loops: state.max_loops }, 'forcing finalize');
    const skipped = pending.map(
      (tc) =>
        new ToolMessage({
          content: `Error: not executed: ${reason === 'loop_limit' ? `the run reached max_loops (${state.max_loops})` : 'the same call was repeated three times in a row'}.`,
          tool_call_id: tc.id ?? '',
          name: tc.name,
          status: 'error',
        }),
    );
    return { messages: [...skipped, new AIMessage({ content: text, response_metadata: { agentloop_finalize: reason } })], finalize_reason: reason };
  };
}
