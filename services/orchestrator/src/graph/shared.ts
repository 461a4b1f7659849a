/**
 * What every node of the graph reads besides its dependencies: settings resolved once per graph
 * (`NodeShared`) and the helpers several nodes and routers use to read the state.
 */
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { promptTexts, type PromptLanguage } from '../prompts.js';
import { parseHistoryOptions, type HistoryOptions } from '../history.js';
import { DEFAULT_AGENT_NAMES } from '../mentions.js';
import type { AgentGraphDeps, RunContext } from './state.js';

/** Settings derived from the deps once per graph, so each node does not re-derive them per call. */
export interface NodeShared {
  language: PromptLanguage;
  texts: ReturnType<typeof promptTexts>;
  history: HistoryOptions;
  /** Auto-compaction token budget; 0 = never. */
  budget: number;
  agentNames: ReadonlySet<string>;
}

export function nodeShared(deps: Pick<AgentGraphDeps, 'language' | 'history' | 'compactTokenBudget' | 'agentNames'>): NodeShared {
  const language: PromptLanguage = deps.language ?? 'en';
  return {
    language,
    texts: promptTexts(language),
    history: parseHistoryOptions(deps.history ?? {}),
    budget: deps.compactTokenBudget ?? 0,
    agentNames: new Set(deps.agentNames ?? DEFAULT_AGENT_NAMES),
  };
}

/** The deps every node needs: how to find its run. */
export type RunContextDeps = Pick<AgentGraphDeps, 'runContext'>;

export function ctxOf(deps: RunContextDeps, config: LangGraphRunnableConfig): RunContext {
  const runId = config.configurable?.run_id as string | undefined;
  const ctx = runId ? deps.runContext(runId) : undefined;
  if (!ctx) throw new Error(`internal: no run context for run ${runId ?? '(none)'}`);
  return ctx;
}

export function lastAi(messages: BaseMessage[]): AIMessage | undefined {
  const last = messages[messages.length - 1];
  return last && AIMessage.isInstance(last) ? last : undefined;
}

/** Calls of a tool in the last AI message that have no ToolMessage yet. */
export function pendingCalls(messages: BaseMessage[], name: string) {
  let i = messages.length - 1;
  const answered = new Set<string>();
  for (; i >= 0 && ToolMessage.isInstance(messages[i]); i--) answered.add((messages[i] as ToolMessage).tool_call_id);
  const ai = messages[i];
  if (!ai || !AIMessage.isInstance(ai)) return [];
  return (ai.tool_calls ?? []).filter((tc) => tc.name === name && !answered.has(tc.id ?? ''));
}

/** Stable identity of a tool call for repetition detection: name + args with sorted keys. */
function callKey(name: string, args: unknown): string {
  const stable = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(stable);
    if (v && typeof v === 'object') {
      return Object.fromEntries(
        Object.keys(v as object)
          .sort()
          .map((k) => [k, stable((v as Record<string, unknown>)[k])]),
      );
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
