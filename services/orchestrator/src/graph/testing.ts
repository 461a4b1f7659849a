/**
 * Fakes for testing one node at a time (graph/nodes/*.test.ts): a run context, a full state with
 * defaults, and the config a node reads its run id from. Not used by production code.
 */
import { END, MemorySaver, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { silentLogger } from '@agentloop/core';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { EMPTY_RUN_USAGE, ZERO_USAGE } from '../usage.js';
import { ScriptedChatModel } from '../models/scripted.js';
import { nodeShared, type NodeShared } from './shared.js';
import { AgentState, type AgentGraphDeps, type AgentStateType, type RunContext } from './state.js';
import type { ApprovalCall, ApprovalVerdict } from '../approval-client.js';

export const RUN_ID = 'r1';

export function fakeCtx(over: Partial<RunContext> = {}, model: BaseChatModel = new ScriptedChatModel([{ content: 'ok' }])): RunContext {
  return {
    runId: RUN_ID,
    tenantId: 't1',
    threadId: 'th1',
    model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
    logger: silentLogger(),
    signal: new AbortController().signal,
    ...over,
  };
}

export function stateOf(messages: BaseMessage[], over: Partial<AgentStateType> = {}): AgentStateType {
  return {
    messages,
    loops: 0,
    max_loops: 100,
    finalize_reason: null,
    context_id: null,
    parent_context: null,
    thread_id: null,
    user_id: null,
    todos: [],
    allowed_tools: [],
    model_pref: null,
    approvals: {},
    elicitations: {},
    token_usage: { ...ZERO_USAGE },
    run_usage: { ...EMPTY_RUN_USAGE },
    ...over,
  };
}

export const config = { configurable: { run_id: RUN_ID } };

export const runContextOf = (ctx: RunContext): Pick<AgentGraphDeps, 'runContext'> => ({ runContext: (id) => (id === ctx.runId ? ctx : undefined) });

export const sharedEn = (over: Partial<Pick<AgentGraphDeps, 'language' | 'history' | 'compactTokenBudget' | 'agentNames'>> = {}): NodeShared =>
  nodeShared(over);

export const aiCalling = (...calls: Array<{ name: string; args?: Record<string, unknown>; id?: string }>) =>
  new AIMessage({ content: '', tool_calls: calls.map((c, i) => ({ name: c.name, args: c.args ?? {}, id: c.id ?? `c${i + 1}`, type: 'tool_call' as const })) });

/**
 * A graph of this one node, for nodes that `interrupt`: LangGraph only lets a node suspend and
 * resume inside a compiled graph with a checkpointer.
 */
export function aloneInGraph(node: (state: AgentStateType, config: LangGraphRunnableConfig) => unknown) {
  const graph = new StateGraph(AgentState)
    .addNode('node', node as (state: AgentStateType, config: LangGraphRunnableConfig) => Promise<Partial<AgentStateType>>)
    .addEdge(START, 'node')
    .addEdge('node', END)
    .compile({ checkpointer: new MemorySaver() });
  return { graph, config: { configurable: { thread_id: 'alone', run_id: RUN_ID } } };
}

/** An approval service answering from a table by tool name, recording what it is told. */
export function fakeApprovals(verdicts: Record<string, ApprovalVerdict['action'] | Error>) {
  const checked: ApprovalCall[] = [];
  const recorded: Array<{ tool: string; decision: string; by: string }> = [];
  return {
    checked,
    recorded,
    async check(call: ApprovalCall): Promise<ApprovalVerdict> {
      checked.push(call);
      const v = verdicts[call.toolName] ?? 'allow';
      if (v instanceof Error) throw v;
      return { action: v, reason: `because ${call.toolName}`, risk_level: 'medium', rule: 'r1' };
    },
    async record(call: ApprovalCall, _v: ApprovalVerdict, decision: string, by: string) {
      recorded.push({ tool: call.toolName, decision, by });
    },
  };
}
