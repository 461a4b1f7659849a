/**
 * The graph's routers: START → (compact | agent); agent → (tools | await_approval | approve |
 * finalize | END); tools → (elicit | delegate | human | agent); elicit → tools; delegate → (human | agent).
 */
import { END } from '@langchain/langgraph';
import type { BaseMessage } from '@langchain/core/messages';
import { isCompactCommand } from '../compaction.js';
import { awaitsHuman, hasVerdicts, judgedCalls } from './approval-verdicts.js';
import { detectRepeatedToolCall, lastAi, pendingCalls } from './shared.js';
import type { AgentGraphDeps, AgentStateType } from './state.js';

export const routeStart = (state: AgentStateType): 'compact' | 'agent' => (isCompactCommand(state.messages.at(-1)) ? 'compact' : 'agent');

/**
 * Whether the tool calls of the latest AI message must not run: the loop limit is reached or the
 * same call was repeated three times (seed 000 §4.3.2). The agent step asks it of the state it is
 * about to write (so it does not ask approvals about calls finalize will answer), the router of the state written.
 */
export const forcedStop = (messages: BaseMessage[], loops: number, maxLoops: number): boolean => loops >= maxLoops || detectRepeatedToolCall(messages) !== null;

/**
 * After the agent: no tool calls → END (the model answered; nothing left for finalize to do); a
 * forced stop → finalize (answers the pending calls, says why); bus calls with approvals on → by
 * the verdicts the agent step wrote with its answer: await_approval when a human must decide, else
 * tools; approve when a call has none (the agent step did not judge these calls: approve.ts).
 */
export function routeAfterAgent(deps: Pick<AgentGraphDeps, 'approvals'>) {
  return (state: AgentStateType): 'tools' | 'approve' | 'await_approval' | 'finalize' | typeof END => {
    const calls = lastAi(state.messages)?.tool_calls ?? [];
    if (calls.length === 0) return END;
    if (forcedStop(state.messages, state.loops, state.max_loops)) return 'finalize';
    if (!deps.approvals || judgedCalls(calls).length === 0) return 'tools';
    if (!hasVerdicts(calls, state.approvals)) return 'approve';
    return awaitsHuman(state.approvals) ? 'await_approval' : 'tools';
  };
}

export const routeAfterDelegate = (state: AgentStateType): 'human' | 'agent' => (pendingCalls(state.messages, 'ask_human').length > 0 ? 'human' : 'agent');

/** Calls waiting for the user's input (MCP elicitation) first; without delegation configured, the tools node already answered delegate_task. */
export function routeAfterTools(deps: Pick<AgentGraphDeps, 'delegation'>) {
  return (state: AgentStateType): 'elicit' | 'delegate' | 'human' | 'agent' => {
    if (Object.values(state.elicitations ?? {}).some((e) => !e.answer)) return 'elicit';
    return deps.delegation && pendingCalls(state.messages, 'delegate_task').length > 0 ? 'delegate' : routeAfterDelegate(state);
  };
}
