/**
 * The graph's routers: START → (compact | agent); agent → (tools | approve | finalize);
 * tools → (elicit | delegate | human | agent); elicit → tools; delegate → (human | agent).
 */
import { isCompactCommand } from '../compaction.js';
import { isLocalTool } from '../local-tools.js';
import { detectRepeatedToolCall, lastAi, pendingCalls } from './shared.js';
import type { AgentGraphDeps, AgentStateType } from './state.js';

export const routeStart = (state: AgentStateType): 'compact' | 'agent' => (isCompactCommand(state.messages.at(-1)) ? 'compact' : 'agent');

/** Loop limit or a thrice-repeated identical tool call → finalize; bus tool calls needing a check → approve; other calls → tools. */
export function routeAfterAgent(deps: Pick<AgentGraphDeps, 'approvals'>) {
  return (state: AgentStateType): 'tools' | 'approve' | 'finalize' => {
    const ai = lastAi(state.messages);
    const hasCalls = (ai?.tool_calls?.length ?? 0) > 0;
    if (!hasCalls) return 'finalize';
    if (state.loops >= state.max_loops) return 'finalize';
    if (detectRepeatedToolCall(state.messages)) return 'finalize';
    return deps.approvals && (ai?.tool_calls ?? []).some((tc) => !isLocalTool(tc.name)) ? 'approve' : 'tools';
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
