import { Annotation, END, MessagesAnnotation, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { AIMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { Logger } from '@agentloop/core';
import type { ToolSpec } from '@agentloop/proto';
import type { ResolvedModel } from './models/registry.js';
import type { ToolClient } from './tool-client.js';
import { buildSystemPrompt, loopLimitMessage, repeatedCallMessage } from './prompts.js';

export const MAX_LOOPS_DEFAULT = 100;
export const MAX_LOOPS_MIN = 1;
export const MAX_LOOPS_MAX = 500;

/** Why the finalize node was forced; null when the model finished by itself. */
export type FinalizeReason = 'loop_limit' | 'repeated_tool_call' | null;

/** Agent state (seed 000 §1.2: the fields this stage needs). */
export const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  loops: Annotation<number>({ reducer: (_a, b) => b, default: () => 0 }),
  max_loops: Annotation<number>({ reducer: (_a, b) => b, default: () => MAX_LOOPS_DEFAULT }),
  finalize_reason: Annotation<FinalizeReason>({ reducer: (_a, b) => b, default: () => null }),
  context_id: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
  parent_context: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
  thread_id: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
  user_id: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
});
export type AgentStateType = typeof AgentState.State;

/** What a node needs to know about the run it is part of; looked up by run id, never checkpointed. */
export interface RunContext {
  runId: string;
  tenantId: string;
  threadId: string;
  model: ResolvedModel;
  logger: Logger;
  signal: AbortSignal;
}

export interface AgentGraphDeps {
  tools: Pick<ToolClient, 'listTools' | 'execute'>;
  /** Resolves the context of the run a node executes for. */
  runContext: (runId: string) => RunContext | undefined;
  checkpointer: BaseCheckpointSaver;
  systemPrompt?: string;
}

function ctxOf(deps: AgentGraphDeps, config: LangGraphRunnableConfig): RunContext {
  const runId = config.configurable?.run_id as string | undefined;
  const ctx = runId ? deps.runContext(runId) : undefined;
  if (!ctx) throw new Error(`internal: no run context for run ${runId ?? '(none)'}`);
  return ctx;
}

/** Stable identity of a tool call for repetition detection: name + args with sorted keys. */
function callKey(name: string, args: unknown): string {
  const stable = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(stable);
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, stable((v as Record<string, unknown>)[k])]));
    }
    return v;
  };
  return `${name}\u0000${JSON.stringify(stable(args ?? {}))}`;
}

/**
 * Seed 000 §4.3.2: within the last 10 messages, the last three tool calls are
 * the same tool with the same arguments. Returns that tool's name, or null.
 */
export function detectRepeatedToolCall(messages: BaseMessage[]): string | null {
  const calls: Array<{ key: string; name: string }> = [];
  for (const m of messages.slice(-10)) {
    if (AIMessage.isInstance(m)) for (const tc of m.tool_calls ?? []) calls.push({ key: callKey(tc.name, tc.args), name: tc.name });
  }
  const n = calls.length;
  if (n >= 3 && calls[n - 1]!.key === calls[n - 2]!.key && calls[n - 2]!.key === calls[n - 3]!.key) return calls[n - 1]!.name;
  return null;
}

function lastAi(messages: BaseMessage[]): AIMessage | undefined {
  const last = messages[messages.length - 1];
  return last && AIMessage.isInstance(last) ? last : undefined;
}

function toOpenAiTools(specs: ToolSpec[]) {
  return specs.map((s) => ({
    type: 'function' as const,
    function: { name: s.name, description: s.description, parameters: safeJson(s.parametersJsonSchema) },
  }));
}

function safeJson(s: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(s);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : { type: 'object' };
  } catch {
    return { type: 'object' };
  }
}

/**
 * The agent loop (seed 000 §1.1–1.4): START → agent ⇄ tools → finalize → END.
 * - agent: builds the system prompt on every call (never stored), calls the model with the visible tools.
 * - route: loop limit or a thrice-repeated identical tool call → finalize; tool calls → tools; else finalize.
 * - tools: each call goes over the bus to tool-runner, in parallel; failures become "Error:" ToolMessages.
 * - finalize: when forced, answers pending tool calls (so history stays valid) and explains why it stopped.
 */
export function buildAgentGraph(deps: AgentGraphDeps) {
  const agent = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const specs = await deps.tools.listTools(ctx.tenantId).catch((err: unknown) => {
      // No tool-runner reachable: the model still answers, without tools.
      ctx.logger.warn({ err }, 'tool list unavailable; calling the model without tools');
      return [] as ToolSpec[];
    });
    const system = new SystemMessage(buildSystemPrompt(deps.systemPrompt ? { base: deps.systemPrompt } : {}));
    const model = specs.length > 0 && typeof ctx.model.model.bindTools === 'function' ? ctx.model.model.bindTools(toOpenAiTools(specs)) : ctx.model.model;
    const response = await model.invoke([system, ...state.messages], { signal: ctx.signal });
    // Bound models return chunks; store a plain AIMessage in history.
    const r = response as AIMessage;
    const ai = new AIMessage({
      content: r.content,
      tool_calls: r.tool_calls ?? [],
      ...(r.id ? { id: r.id } : {}),
      ...(r.usage_metadata ? { usage_metadata: r.usage_metadata } : {}),
      response_metadata: { ...(r.response_metadata ?? {}), agentloop_model: ctx.model.label },
      additional_kwargs: r.additional_kwargs ?? {},
    });
    return { messages: [ai], loops: state.loops + 1 };
  };

  const route = (state: AgentStateType): 'tools' | 'finalize' => {
    const ai = lastAi(state.messages);
    const hasCalls = (ai?.tool_calls?.length ?? 0) > 0;
    if (!hasCalls) return 'finalize';
    if (state.loops >= state.max_loops) return 'finalize';
    if (detectRepeatedToolCall(state.messages)) return 'finalize';
    return 'tools';
  };

  const tools = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const ai = lastAi(state.messages);
    const calls = ai?.tool_calls ?? [];
    const results = await Promise.all(
      calls.map(async (tc) => {
        const id = tc.id ?? '';
        const started = Date.now();
        const res = await deps.tools.execute({ tenantId: ctx.tenantId, threadId: ctx.threadId, runId: ctx.runId, toolCallId: id, name: tc.name, args: tc.args });
        ctx.logger.info({ tool: tc.name, tool_call_id: id, ms: Date.now() - started, error: res.isError ? res.errorCode : undefined }, 'tool call');
        return new ToolMessage({ content: res.content, tool_call_id: id, name: tc.name, status: res.isError ? 'error' : 'success' });
      }),
    );
    return { messages: results };
  };

  const finalize = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ai = lastAi(state.messages);
    const pending = ai?.tool_calls ?? [];
    if (pending.length === 0) return { finalize_reason: null };
    const ctx = ctxOf(deps, config);
    const repeated = detectRepeatedToolCall(state.messages);
    const reason: FinalizeReason = state.loops >= state.max_loops ? 'loop_limit' : repeated ? 'repeated_tool_call' : 'loop_limit';
    const text = reason === 'repeated_tool_call' ? repeatedCallMessage(repeated ?? pending[0]!.name) : loopLimitMessage(state.max_loops);
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

  return new StateGraph(AgentState)
    .addNode('agent', agent)
    .addNode('tools', tools)
    .addNode('finalize', finalize)
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', route, ['tools', 'finalize'])
    .addEdge('tools', 'agent')
    .addEdge('finalize', END)
    .compile({ checkpointer: deps.checkpointer });
}

export type AgentGraph = ReturnType<typeof buildAgentGraph>;
