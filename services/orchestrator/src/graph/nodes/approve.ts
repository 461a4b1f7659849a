import { Command, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { awaitsHuman, judgeToolCalls, type VerdictDeps } from '../approval-verdicts.js';
import { ctxOf, lastAi, type NodeShared, type RunContextDeps } from '../shared.js';
import type { AgentGraphDeps, AgentStateType } from '../state.js';

export type ApproveDeps = RunContextDeps & { approvals?: AgentGraphDeps['approvals']; tools?: VerdictDeps['tools'] };

/**
 * Seed 001 §7.3 for the calls the agent step did not judge itself (it normally does, in the same
 * step as the model's answer: agent.ts): a history a client wrote as the agent's
 * (`as_node: "agent"`, which clears the verdicts: client-update.ts), a checkpoint taken before the
 * agent step asked, a client's `goto`. Asks the approval service about every bus tool call of the
 * latest AI message and stores the verdicts (approval-verdicts.ts), then: await_approval when a
 * human must decide, else tools.
 */
export function approveNode(deps: ApproveDeps, _shared: NodeShared) {
  return async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const calls = lastAi(state.messages)?.tool_calls ?? [];
    // Approvals off (APPROVAL_MODE=off): nothing to ask; the tools node runs the calls unchecked.
    const approvals = deps.approvals ? await judgeToolCalls({ approvals: deps.approvals, tools: deps.tools }, ctx, calls, state.parent_context !== null) : {};
    return new Command({ update: { approvals }, goto: awaitsHuman(approvals) ? 'await_approval' : 'tools' });
  };
}
