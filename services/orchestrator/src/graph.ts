/**
 * The agent loop (seed 000 §1.1–1.4): START → (compact | agent) ; agent ⇄ tools ; agent → END, or
 * → finalize → END when forced.
 * This file only wires the graph; state and types are in graph/state.ts, each node in
 * graph/nodes/, the routers in graph/edges.ts. It also remains the import path the rest of the
 * repository uses for all of them.
 * - compact: a user message that is exactly `/compact` summarizes the conversation before it.
 * - agent: routes to a model slot, builds the system prompt (base, time, summaries, todo and
 *   @mention reminders) on every call without storing it, windows the history, compacts
 *   automatically past the token budget, and calls the model with the visible tools.
 *   After a model answer with bus tool calls it also asks the approval service's verdicts (issue 9:
 *   checkpointed with the answer, no step of their own).
 * - approve: the same verdicts for calls the agent step did not judge (a client-written history, a
 *   checkpoint taken before it asked); await_approval: a human's decisions.
 * - tools: todo_write / todo_read run here (they change graph state); every other call goes over
 *   the bus to tool-runner, in parallel; failures become "Error:" ToolMessages.
 * - elicit: an MCP server asked the user's input during a call: an interrupt, then the call runs again
 *   with the answer (graph/elicitation.ts).
 * - delegate / human: delegate_task and ask_human, each suspending the run with an interrupt.
 * - finalize: only when forced (loop limit, repeated call): answers the pending tool calls (so history
 *   stays valid) and explains why it stopped. A model's final answer goes straight to END.
 */
import { END, START, StateGraph } from '@langchain/langgraph';
import { installLightRunContext } from './langchain-context.js';
import { installEventDrivenStoreBatching } from './store-batching.js';
import { AgentState, type AgentGraphDeps } from './graph/state.js';
import { nodeShared } from './graph/shared.js';
import { routeAfterAgent, routeAfterDelegate, routeAfterTools, routeStart } from './graph/edges.js';
import { router } from './graph/router.js';
import { routed, routeInNodes } from './graph/routed.js';
import { agentNode } from './graph/nodes/agent.js';
import { approveNode } from './graph/nodes/approve.js';
import { awaitApprovalNode } from './graph/nodes/await-approval.js';
import { compactNode } from './graph/nodes/compact.js';
import { delegateNode } from './graph/nodes/delegate.js';
import { elicitNode } from './graph/nodes/elicit.js';
import { finalizeNode } from './graph/nodes/finalize.js';
import { humanNode } from './graph/nodes/human.js';
import { toolsNode } from './graph/nodes/tools.js';

export { MAX_LOOPS_DEFAULT, MAX_LOOPS_MIN, MAX_LOOPS_MAX } from './limits.js';
export {
  AgentState,
  MCP_ELICITATION_INTERRUPT,
  TOOL_APPROVAL_INTERRUPT,
  USER_INPUT_INTERRUPT,
  type AgentGraphDeps,
  type AgentStateType,
  type ApprovalEntry,
  type FinalizeReason,
  type ModelRouter,
  type RunContext,
} from './graph/state.js';
export { detectRepeatedToolCall } from './graph/shared.js';

export function buildAgentGraph(deps: AgentGraphDeps) {
  // No LangSmith RunTree per runnable call while tracing is off (langchain-context.ts).
  installLightRunContext();
  // No timer loop per invocation for config.store's batching while no store call waits (store-batching.ts).
  installEventDrivenStoreBatching();
  const shared = nodeShared(deps);
  // Routers called without a RunnableLambda's callback plumbing unless someone listens (graph/router.ts).
  const afterAgent = router(routeAfterAgent(deps));
  const afterTools = router(routeAfterTools(deps));
  const afterDelegate = router(routeAfterDelegate);
  // agent, tools and delegate choose their next node from the state they leave; their edges route
  // what a client writes as them (graph/routed.ts).
  const builder = new StateGraph(AgentState)
    .addNode('compact', compactNode(deps, shared))
    .addNode('agent', routed(AgentState.spec, agentNode(deps, shared), afterAgent))
    .addNode('approve', approveNode(deps, shared), { ends: ['await_approval', 'tools'] })
    .addNode('await_approval', awaitApprovalNode(deps, shared))
    .addNode('tools', routed(AgentState.spec, toolsNode(deps, shared), afterTools))
    .addNode('elicit', elicitNode(deps, shared))
    .addNode('delegate', routed(AgentState.spec, delegateNode(deps, shared), afterDelegate))
    .addNode('human', humanNode(deps, shared))
    .addNode('finalize', finalizeNode(deps, shared))
    .addConditionalEdges(START, router(routeStart), ['compact', 'agent'])
    .addEdge('compact', END)
    .addConditionalEdges('agent', afterAgent, ['tools', 'approve', 'await_approval', 'finalize', END])
    .addEdge('await_approval', 'tools')
    .addConditionalEdges('tools', afterTools, ['elicit', 'delegate', 'human', 'agent'])
    .addEdge('elicit', 'tools')
    .addConditionalEdges('delegate', afterDelegate, ['human', 'agent'])
    .addEdge('human', 'agent')
    .addEdge('finalize', END);
  routeInNodes(builder, ['agent', 'tools', 'delegate']);
  return builder.compile({ checkpointer: deps.checkpointer });
}

export type AgentGraph = ReturnType<typeof buildAgentGraph>;
