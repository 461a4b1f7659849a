import { Annotation, Command, END, interrupt, MessagesAnnotation, REMOVE_ALL_MESSAGES, START, StateGraph, type LangGraphRunnableConfig } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { AIMessage, RemoveMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { errorMessage, type Logger } from '@agentloop/core';
import { instruments, SpanKind, SpanStatusCode, withSpan } from '@agentloop/telemetry';
import type { ToolSpec } from '@agentloop/proto';
import type { ModelSlot, ResolvedModel } from './models/registry.js';
import { ScriptedChatModel } from './models/scripted.js';
import type { ToolClient } from './tool-client.js';
import type { SkillsClient } from './skills-client.js';
import type { JsonObject, Store } from '@agentloop/store';
import { executeWithLedger } from './effect-ledger.js';
import { basePrompt, buildSystemPrompt, mentionReminders, promptTexts, todoReminder, type PromptLanguage } from './prompts.js';
import {
  childConfig,
  childRunId,
  childThreadId,
  DELEGATION_INTERRUPT,
  delegationId,
  parseDelegateArgs,
  type DelegatedChild,
  type DelegationLimits,
  type DelegationRequest,
  type DelegationResume,
} from './delegation.js';
import type { TodoItem } from './todos.js';
import { ASK_HUMAN_SPEC, DELEGATE_TASK_SPEC, isLocalTool, runLocalTool, TODO_READ_SPEC, TODO_WRITE_SPEC } from './local-tools.js';
import { parseApprovalAnswer, type ApprovalClient, type ApprovalVerdict, type HumanDecision } from './approval-client.js';
import { classifyMentions, DEFAULT_AGENT_NAMES, mentionsOf } from './mentions.js';
import { parseHistoryOptions, selectHistory, type HistoryOptions } from './history.js';
import {
  compactedMessages,
  estimateInputTokens,
  isCompactCommand,
  isSummaryMessage,
  planAutoCompaction,
  planCommandCompaction,
  summarizeMessages,
  type CompactionPlan,
} from './compaction.js';
import { messageText, parseModelPref, resolveModelSlot, type RouteDecision } from './routing.js';
import { addUsage, EMPTY_RUN_USAGE, runUsageReducer, threadUsageReducer, usageOf, ZERO_USAGE, type RunUsage, type TokenUsage } from './usage.js';

import { MAX_LOOPS_DEFAULT } from './limits.js';
import { sharedToolCallIds, withUniqueToolCallIds } from './tool-call-ids.js';
import type { StepLease } from './step-gate.js';
import { installLightRunContext } from './langchain-context.js';

/** The argument naming the file a tool writes, for tools whose approval depends on where it lands. */
const PATH_ARGS: Readonly<Record<string, string>> = { write_file: 'file_path' };
/** How much of a file's end an append's approval sees (CheckApprovalRequest.preceding_text). */
const APPEND_CONTEXT_BYTES = 4096;
export { MAX_LOOPS_DEFAULT, MAX_LOOPS_MIN, MAX_LOOPS_MAX } from './limits.js';

/** A tool call's approval (seed 001 Part 7): the rules' verdict, then what was decided. */
export interface ApprovalEntry extends Omit<ApprovalVerdict, 'action'> {
  action: ApprovalVerdict['action'] | 'unavailable';
  tool: string;
  /** Set once decided: by a human (approved/rejected), by the rules (denied), or not obtainable. */
  decision?: HumanDecision | 'unavailable' | 'not_recorded';
  by?: string;
  comment?: string;
}

/** `type` of the interrupt value a tool approval raises. */
export const TOOL_APPROVAL_INTERRUPT = 'tool_approval';
/** `type` of the interrupt value ask_human raises. */
export const USER_INPUT_INTERRUPT = 'user_input_request';

/** Why the finalize node was forced; null when the model finished by itself. */
export type FinalizeReason = 'loop_limit' | 'repeated_tool_call' | null;

const replace = <T>(def: () => T) => Annotation<T>({ reducer: (_a, b) => b, default: def });

/** Agent state (seed 000 §1.2). */
export const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  loops: replace<number>(() => 0),
  max_loops: replace<number>(() => MAX_LOOPS_DEFAULT),
  finalize_reason: replace<FinalizeReason>(() => null),
  context_id: replace<string | null>(() => null),
  parent_context: replace<string | null>(() => null),
  thread_id: replace<string | null>(() => null),
  user_id: replace<string | null>(() => null),
  /** Task list written by todo_write (seed 000 §2.7); replaced as a whole on each write. */
  todos: replace<TodoItem[]>(() => []),
  /** Tools the active skill allows (seed 000 §2.6 step 2); passed to the tool list request. */
  allowed_tools: replace<string[]>(() => []),
  /** The user's model slot preference (seed 001 §1.7); run config `model_pref` overrides it. */
  model_pref: replace<string | null>(() => null),
  /** Approval verdicts and decisions for the tool calls of the latest AI message, by tool call id. */
  approvals: replace<Record<string, ApprovalEntry>>(() => ({})),
  /** Tokens of every model call on this thread; updates are deltas. */
  token_usage: Annotation<TokenUsage>({ reducer: threadUsageReducer, default: () => ({ ...ZERO_USAGE }) }),
  /** Tokens and model calls of the current run; an update from a new run starts over. */
  run_usage: Annotation<RunUsage>({ reducer: runUsageReducer, default: () => ({ ...EMPTY_RUN_USAGE }) }),
});
export type AgentStateType = typeof AgentState.State;
type AgentUpdate = typeof AgentState.Update;

/** Picks a model per call (seed 001 §1.7). Absent when the scripted provider pins the run's model. */
export interface ModelRouter {
  /** Slots the deployment configured. */
  configured: ReadonlySet<ModelSlot>;
  /** The model of a slot; falls back to base when the slot is not configured. */
  forSlot(slot: ModelSlot): ResolvedModel;
}

/** What a node needs to know about the run it is part of; looked up by run id, never checkpointed. */
export interface RunContext {
  runId: string;
  tenantId: string;
  threadId: string;
  /** The run's model: used for every call when `router` is absent (the scripted provider). */
  model: ResolvedModel;
  router?: ModelRouter;
  /** Preference from the run config (`configurable.model_pref`, or a slot given as `configurable.model`). */
  modelPref?: ModelSlot | null;
  logger: Logger;
  signal: AbortSignal;
  /** 0 for a run started by a client, 1 for its delegated agents, 2 for theirs... */
  depth?: number;
  /** Thread whose workspace tool calls use: the parent's for a delegated agent. Default: `threadId`. */
  workspaceThreadId?: string;
  /** A stateless run: its thread is deleted when it ends, so it cannot be resumed (no ask_human). */
  ephemeral?: boolean;
  /** The run's `config` as submitted: delegated agents inherit it (see `childConfig`). */
  runConfig?: JsonObject;
  /**
   * The API key id of the request that started this job (RunJob.api_key_id; "" without API keys):
   * for a resume, who really answered an approval, recorded in the audit trail beside the
   * client's own `by` label.
   */
  apiKeyId?: string;
  /** The run's slot of the worker's CPU gate (step-gate.ts): model calls are made without holding it. */
  stepLease?: Pick<StepLease, 'idle'>;
}

export interface AgentGraphDeps {
  tools: Pick<ToolClient, 'listTools' | 'execute'> & Partial<Pick<ToolClient, 'isIdempotent' | 'recordedOutcome' | 'reexecute' | 'inspectPath'>>;
  /** Effect ledger: when given, every bus call of a side-effecting (non-idempotent) tool is recorded by (run, tool call id) and never re-executed on resume; idempotent tools skip it. */
  ledger?: Pick<Store, 'claimToolEffect' | 'restartToolEffect' | 'completeToolEffect'>;
  /** Resolves the context of the run a node executes for. */
  runContext: (runId: string) => RunContext | undefined;
  checkpointer: BaseCheckpointSaver;
  systemPrompt?: string;
  /** Language of prompts, reminders and orchestrator messages (`PROMPT_LANGUAGE`). Default en. */
  language?: PromptLanguage;
  /** What is sent to the model of the history (`MAX_MESSAGE_HISTORY`, `MESSAGE_HISTORY_STRATEGY`). Default 40, clean. */
  history?: Partial<HistoryOptions>;
  /** Compact automatically when the next model input is estimated above this many tokens; 0 or absent = never. */
  compactTokenBudget?: number;
  /** Agent names an @mention may address (`AGENT_NAMES`). Default ["general"]. */
  agentNames?: readonly string[];
  /** Skills an @mention may address (from the skill sandbox), and loading one into the workspace. */
  skills?: Pick<SkillsClient, 'names' | 'load'>;
  /**
   * Delegated agents (seed 001 Part 5): when given, delegate_task calls go to the `delegate` node, which
   * suspends the graph with an interrupt until the children answer. Absent: delegate_task answers "not available".
   */
  delegation?: DelegationLimits;
  /**
   * Tool approval (seed 001 Part 7): every bus tool call is checked first; a call that needs a
   * human suspends the run until it is approved or rejected. Absent: no checks (APPROVAL_MODE=off).
   */
  approvals?: Pick<ApprovalClient, 'check' | 'record'>;
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

/** Call options of one model call: the signal, and for the scripted provider the turn to play. */
function callOptions(model: BaseChatModel, turn: number): Record<string, unknown> {
  return model instanceof ScriptedChatModel ? { scripted_turn: turn } : {};
}

/** Usage accumulated across the model calls of one node execution. */
class CallMeter {
  calls = 0;
  usage: TokenUsage = { ...ZERO_USAGE };
  constructor(readonly startTurn: number) {}
  get turn(): number {
    return this.startTurn + this.calls;
  }
  record(usage: TokenUsage | null): void {
    this.calls++;
    this.usage = addUsage(this.usage, usage ?? undefined);
  }
  update(runId: string): Pick<AgentUpdate, 'token_usage' | 'run_usage'> {
    return { token_usage: this.usage, run_usage: { run_id: runId, model_calls: this.calls, ...this.usage } };
  }
}

/**
 * The agent loop (seed 000 §1.1–1.4): START → (compact | agent) ; agent ⇄ tools → finalize → END.
 * - compact: a user message that is exactly `/compact` summarizes the conversation before it.
 * - agent: routes to a model slot, builds the system prompt (base, time, summaries, todo and
 *   @mention reminders) on every call without storing it, windows the history, compacts
 *   automatically past the token budget, and calls the model with the visible tools.
 * - route: loop limit or a thrice-repeated identical tool call → finalize; tool calls → tools; else finalize.
 * - tools: todo_write / todo_read / delegate_task run here (they change graph state); every other
 *   call goes over the bus to tool-runner, in parallel; failures become "Error:" ToolMessages.
 * - finalize: when forced, answers pending tool calls (so history stays valid) and explains why it stopped.
 */
export function buildAgentGraph(deps: AgentGraphDeps) {
  // No LangSmith RunTree per runnable call while tracing is off (langchain-context.ts).
  installLightRunContext();
  const language: PromptLanguage = deps.language ?? 'en';
  const texts = promptTexts(language);
  const history = parseHistoryOptions(deps.history ?? {});
  const budget = deps.compactTokenBudget ?? 0;
  const agentNames = new Set(deps.agentNames ?? DEFAULT_AGENT_NAMES);

  const startTurn = (state: AgentStateType, ctx: RunContext) => (state.run_usage.run_id === ctx.runId ? state.run_usage.model_calls : 0);

  const preference = (state: AgentStateType, ctx: RunContext): ModelSlot | null => {
    if (ctx.modelPref) return ctx.modelPref;
    try {
      return parseModelPref(state.model_pref, 'state model_pref');
    } catch (err) {
      ctx.logger.warn({ err, model_pref: state.model_pref }, 'ignoring invalid model_pref in state');
      return null;
    }
  };

  const pick = (ctx: RunContext, decision: RouteDecision): ResolvedModel => (ctx.router ? ctx.router.forSlot(decision.slot) : ctx.model);

  /** Summarizes `messages` before `plan.splitAt`; returns the new full message list. */
  const compactWith = async (ctx: RunContext, messages: BaseMessage[], plan: CompactionPlan, meter: CallMeter) => {
    const decision = resolveModelSlot({ node: 'compact', preference: null, messages, configured: ctx.router?.configured ?? new Set() });
    const resolved = pick(ctx, decision);
    const older = messages.slice(0, plan.splitAt);
    const summarize = () => summarizeMessages(resolved.model, older, { language, signal: ctx.signal, callOptions: callOptions(resolved.model, meter.turn) });
    const result = await (ctx.stepLease ? ctx.stepLease.idle(summarize) : summarize());
    meter.record(result.usage);
    ctx.logger.info({ summarized: result.summarized, model: resolved.label, kept: messages.length - plan.splitAt }, 'conversation compacted');
    return { list: compactedMessages(messages, plan, result.summary), summarized: result.summarized };
  };

  /** System messages in state (client instructions, compaction summaries) become system prompt sections. */
  const systemSections = (messages: readonly BaseMessage[]) =>
    messages.filter((m) => SystemMessage.isInstance(m)).map((m) => (isSummaryMessage(m) ? texts.summarySection(messageText(m)) : messageText(m)));

  const compact = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const plan = planCommandCompaction(state.messages);
    if (!plan) return { messages: [new AIMessage({ content: texts.nothingToCompact, response_metadata: { agentloop_compact: 'nothing' } })] };
    const meter = new CallMeter(startTurn(state, ctx));
    const { list, summarized } = await compactWith(ctx, state.messages, plan, meter);
    const ack = new AIMessage({ content: texts.compacted(summarized), response_metadata: { agentloop_compact: 'command', summarized_messages: summarized } });
    return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...list, ack], ...meter.update(ctx.runId) };
  };

  const agent = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const meter = new CallMeter(startTurn(state, ctx));

    // Visible tools: the tool-runner's list (with @mentioned tools loaded on demand) plus the local ones.
    const mentioned = mentionsOf(state.messages);
    const listed = await deps.tools
      .listTools(ctx.tenantId, { mentioned, allowed: state.allowed_tools, subagent: state.parent_context !== null })
      .catch((err: unknown) => {
        // No tool-runner reachable: the model still answers, with the local tools only.
        ctx.logger.warn({ err }, 'tool list unavailable; calling the model with the orchestrator tools only');
        return [] as ToolSpec[];
      });
    // ask_human needs someone to resume the run: not for delegated agents nor stateless (ephemeral) runs.
    const local = [TODO_WRITE_SPEC, TODO_READ_SPEC, ...(state.parent_context === null && !ctx.ephemeral ? [ASK_HUMAN_SPEC] : [])];
    const known = new Set([...listed, ...local].map((s) => s.name));
    const skillNames = mentioned.length > 0 && deps.skills ? await deps.skills.names(ctx.tenantId) : new Set<string>();
    const mentions = classifyMentions(mentioned, { tools: known, skills: skillNames, agents: agentNames });
    // A mentioned skill is linked into the workspace so the reminder's skills/<id>/SKILL.md is there to read.
    for (const id of mentions.skills) {
      await deps.skills?.load(ctx.tenantId, ctx.workspaceThreadId ?? ctx.threadId, id).catch((err: unknown) => ctx.logger.warn({ skill: id, err: errorMessage(err) }, '@mentioned skill not loaded'));
    }
    const missing = mentions.tools.filter((n) => !known.has(n));
    if (missing.length > 0) ctx.logger.warn({ tools: missing }, '@mentioned tool not found');
    // delegate_task is offered when an agent is @mentioned (seed 001 §2.5) and this run may still delegate.
    const mayDelegate = !deps.delegation || (ctx.depth ?? 0) < deps.delegation.maxDepth;
    const visible: ToolSpec[] = [];
    for (const s of [...local, ...listed, ...(mentions.agents.length > 0 && mayDelegate ? [DELEGATE_TASK_SPEC] : [])]) {
      if (!visible.some((v) => v.name === s.name)) visible.push(s);
    }

    // A delegated agent executes a task and cannot talk to the user (seed 001 §5.4).
    const delegated = state.parent_context !== null;
    const reminders = [
      todoReminder(state.todos, language),
      mentionReminders({ tools: mentions.tools.filter((n) => known.has(n)), skills: mentions.skills, agents: mentions.agents }, language),
    ];
    const input = (messages: BaseMessage[]) => ({
      system: buildSystemPrompt({ base: delegated ? basePrompt(language, true) : (deps.systemPrompt ?? basePrompt(language)), language, extra: [...systemSections(messages), ...reminders] }),
      history: selectHistory(messages, history),
    });

    let messages = state.messages;
    let rewrite: BaseMessage[] | null = null;
    let next = input(messages);
    if (budget > 0) {
      const estimate = estimateInputTokens(next.history, next.system);
      const plan = estimate > budget ? planAutoCompaction(messages, budget) : null;
      if (plan) {
        ctx.logger.info({ estimate, budget }, 'token budget exceeded; compacting');
        messages = (await compactWith(ctx, messages, plan, meter)).list;
        rewrite = messages;
        next = input(messages);
      }
    }

    const decision = resolveModelSlot({ node: 'agent', preference: preference(state, ctx), messages, configured: ctx.router?.configured ?? new Set() });
    const resolved = pick(ctx, decision);
    const base = resolved.model;
    const model = typeof base.bindTools === 'function' ? base.bindTools(toOpenAiTools(visible)) : base;
    const modelStarted = performance.now();
    const response = await withSpan(`model ${resolved.label}`, { kind: SpanKind.CLIENT, attributes: { 'gen_ai.request.model': resolved.label, 'gen_ai.provider.name': resolved.provider, 'agentloop.route': decision.reason } }, async (span) => {
      const call = () => model.invoke([new SystemMessage(next.system), ...next.history], { ...callOptions(base, meter.turn), signal: ctx.signal });
      const r = await (ctx.stepLease ? ctx.stepLease.idle(call) : call());
      const u = (r as AIMessage).usage_metadata;
      if (u) span.setAttributes({ 'gen_ai.usage.input_tokens': u.input_tokens, 'gen_ai.usage.output_tokens': u.output_tokens });
      return r;
    }).catch((err: unknown) => {
      instruments().modelCalls.add(1, { 'gen_ai.request.model': resolved.label, outcome: 'error' });
      throw err;
    });
    {
      const metrics = instruments();
      const attrs = { 'gen_ai.request.model': resolved.label };
      metrics.modelCalls.add(1, { ...attrs, outcome: 'ok' });
      metrics.modelCallDuration.record((performance.now() - modelStarted) / 1000, attrs);
      const u = (response as AIMessage).usage_metadata;
      if (u) {
        metrics.tokens.add(u.input_tokens, { ...attrs, kind: 'input' });
        metrics.tokens.add(u.output_tokens, { ...attrs, kind: 'output' });
      }
    }
    // Bound models return chunks; store a plain AIMessage in history.
    const r = response as AIMessage;
    // Every call gets its own id before anything keys on it (approval, ledger, replay log).
    const unique = withUniqueToolCallIds(r.tool_calls ?? []);
    if (unique.changed) ctx.logger.warn({ ids: (r.tool_calls ?? []).map((tc) => tc.id ?? '') }, 'the model gave tool calls missing or repeated ids; fresh ids assigned');
    const { tool_calls: rawToolCalls, ...kwargs } = (r.additional_kwargs ?? {}) as Record<string, unknown>;
    const ai = new AIMessage({
      content: r.content,
      tool_calls: unique.calls,
      ...(r.id ? { id: r.id } : {}),
      ...(r.usage_metadata ? { usage_metadata: r.usage_metadata } : {}),
      response_metadata: { ...(r.response_metadata ?? {}), agentloop_model: resolved.label, agentloop_route: ctx.router ? decision.reason : 'scripted' },
      // The provider's raw tool calls carry the old ids; `tool_calls` above is what is sent back.
      additional_kwargs: unique.changed || rawToolCalls === undefined ? kwargs : { ...kwargs, tool_calls: rawToolCalls },
    });
    meter.record(usageOf(ai));
    ctx.logger.debug({ slot: resolved.label, reason: decision.reason, tools: visible.length, history: next.history.length }, 'model call');
    const out: BaseMessage[] = rewrite ? [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...rewrite, ai] : [ai];
    return { messages: out, loops: state.loops + 1, ...meter.update(ctx.runId) };
  };

  const route = (state: AgentStateType): 'tools' | 'approve' | 'finalize' => {
    const ai = lastAi(state.messages);
    const hasCalls = (ai?.tool_calls?.length ?? 0) > 0;
    if (!hasCalls) return 'finalize';
    if (state.loops >= state.max_loops) return 'finalize';
    if (detectRepeatedToolCall(state.messages)) return 'finalize';
    return deps.approvals && (ai?.tool_calls ?? []).some((tc) => !isLocalTool(tc.name)) ? 'approve' : 'tools';
  };

  const approvalCall = (ctx: RunContext, tc: { id?: string; name: string; args: unknown }, subagent: boolean) => ({
    tenantId: ctx.tenantId,
    threadId: ctx.threadId,
    runId: ctx.runId,
    toolCallId: tc.id ?? '',
    toolName: tc.name,
    args: tc.args,
    subagent,
  });

  /**
   * What the rules need besides the arguments for calls that name a file: where the path really
   * lands (an absolute spelling of uploads/x is uploads/x) and, for an append, the end of the file
   * it extends (a secret split across two appends is seen whole). Asked of the tool-runner, which
   * resolves paths exactly as the write will. When it cannot say, the rules get nothing extra and
   * judge the raw path, failing closed on what they cannot place.
   */
  const approvalContext = async (ctx: RunContext, tc: { name: string; args: unknown }): Promise<{ resolvedPaths?: Record<string, string>; precedingText?: string }> => {
    const arg = PATH_ARGS[tc.name];
    const args = (tc.args ?? {}) as Record<string, unknown>;
    const raw = arg ? args[arg] : undefined;
    if (!arg || typeof raw !== 'string' || raw === '' || !deps.tools.inspectPath) return {};
    const append = tc.name === 'write_file' && args.append === true;
    try {
      const seen = await deps.tools.inspectPath(ctx.tenantId, ctx.workspaceThreadId ?? ctx.threadId, raw, { tailBytes: append ? APPEND_CONTEXT_BYTES : 0 });
      if ('refused' in seen) return {}; // the tool refuses the path itself
      return { resolvedPaths: { [arg]: seen.relativePath }, ...(append && seen.tail !== '' ? { precedingText: seen.tail } : {}) };
    } catch (err) {
      ctx.logger.warn({ tool: tc.name, err: errorMessage(err) }, 'path not inspected before approval; the rules judge the raw path');
      return {};
    }
  };

  /**
   * Seed 001 §7.3: asks the approval service about every bus tool call of the step (in parallel)
   * and stores the verdicts. Fails closed: a call without a verdict is not run. Calls the rules
   * deny are recorded in the audit trail. Then: await_approval when a human must decide, else tools.
   */
  const approve = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const subagent = state.parent_context !== null;
    const all = lastAi(state.messages)?.tool_calls ?? [];
    // Calls sharing an id are never run (see tools); asking about them would only mix verdicts.
    const shared = sharedToolCallIds(all);
    const calls = all.filter((tc) => !isLocalTool(tc.name) && !shared.has(tc.id ?? ''));
    const approvals: Record<string, ApprovalEntry> = {};
    await Promise.all(
      calls.map(async (tc) => {
        const id = tc.id ?? '';
        const call = approvalCall(ctx, tc, subagent);
        let entry: ApprovalEntry;
        try {
          entry = { ...(await deps.approvals!.check({ ...call, ...(await approvalContext(ctx, tc)) })), tool: tc.name };
        } catch (err) {
          ctx.logger.error({ tool: tc.name, tool_call_id: id, err: errorMessage(err) }, 'no approval verdict; the call will not run');
          approvals[id] = { action: 'unavailable', reason: errorMessage(err), risk_level: 'unspecified', rule: '', tool: tc.name, decision: 'unavailable' };
          return;
        }
        if (entry.action === 'deny' || (entry.action === 'require_approval' && subagent)) {
          entry.decision = 'denied';
          entry.by = 'rules';
          await deps.approvals!.record(call, { ...entry, action: entry.action }, 'denied', 'rules', subagent && entry.action === 'require_approval' ? 'delegated agent: no human to ask' : '').catch((err: unknown) =>
            ctx.logger.warn({ tool: tc.name, err: errorMessage(err) }, 'denial not recorded in the audit trail'),
          );
        }
        instruments().approvals.add(1, { verdict: entry.action, 'agentloop.tool': tc.name });
        if (entry.action !== 'allow') ctx.logger.info({ tool: tc.name, tool_call_id: id, action: entry.action, rule: entry.rule, risk: entry.risk_level }, 'tool call approval');
        approvals[id] = entry;
      }),
    );
    const waiting = Object.values(approvals).some((a) => a.action === 'require_approval' && a.decision === undefined);
    return new Command({ update: { approvals }, goto: waiting ? 'await_approval' : 'tools' });
  };

  /**
   * Suspends the run (one interrupt per call, in order) until a human approves or rejects each call
   * that needs it; an unrecognized answer asks again. Decisions go to the audit trail before any call
   * runs: an approval that cannot be recorded does not run the call. Re-executed from the top on
   * resume: LangGraph replays the earlier answers to the earlier interrupts.
   */
  const awaitApproval = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const calls = lastAi(state.messages)?.tool_calls ?? [];
    const approvals = { ...state.approvals };
    const decided: string[] = [];
    for (const tc of calls) {
      const id = tc.id ?? '';
      const a = approvals[id];
      if (!a || a.action !== 'require_approval' || a.decision !== undefined) continue;
      const request = {
        type: TOOL_APPROVAL_INTERRUPT,
        tool_call_id: id,
        tool: tc.name,
        args: tc.args,
        reason: a.reason,
        risk_level: a.risk_level,
        rule: a.rule,
        options: ['approve', 'reject'],
      };
      let answer = parseApprovalAnswer(interrupt(request));
      while (!answer) answer = parseApprovalAnswer(interrupt({ ...request, error: texts.approval.badAnswer }));
      approvals[id] = { ...a, decision: answer.decision, by: answer.by, comment: answer.comment };
      decided.push(id);
    }
    // Past the last interrupt: this execution of the node completes, so each decision is counted once.
    for (const id of decided) {
      const a = approvals[id]!;
      instruments().approvals.add(1, { verdict: a.decision ?? 'unknown', 'agentloop.tool': a.tool });
      const tc = calls.find((c) => (c.id ?? '') === id)!;
      try {
        // `by` is the client's label; the tenant and key of the resume are recorded beside it.
        await deps.approvals!.record(approvalCall(ctx, tc, false), { ...a, action: 'require_approval' }, a.decision as HumanDecision, a.by || `tenant:${ctx.tenantId}`, a.comment ?? '', {
          tenantId: ctx.tenantId,
          keyId: ctx.apiKeyId ?? '',
        });
      } catch (err) {
        ctx.logger.error({ tool: a.tool, tool_call_id: id, err: errorMessage(err) }, 'approval decision not recorded');
        if (a.decision === 'approved') approvals[id] = { ...a, decision: 'not_recorded' };
      }
      ctx.logger.info({ tool: a.tool, tool_call_id: id, decision: approvals[id]!.decision, by: a.by || undefined }, 'tool call decided');
    }
    return { approvals };
  };

  /** The ToolMessage standing for a call that the approval step stopped, or null to run it. */
  const approvalBlock = (state: AgentStateType, tc: { id?: string; name: string }): ToolMessage | null => {
    if (!deps.approvals) return null;
    const id = tc.id ?? '';
    const a = state.approvals[id];
    const block = (content: string) => new ToolMessage({ content, tool_call_id: id, name: tc.name, status: 'error' });
    if (!a) return block(texts.approval.unavailable(tc.name, 'the call was never checked'));
    switch (a.decision) {
      case undefined:
        return a.action === 'allow' ? null : block(texts.approval.unavailable(tc.name, 'no decision was made'));
      case 'approved':
        return null;
      case 'rejected':
        return block(texts.approval.rejected(a.reason, a.comment ?? ''));
      case 'denied':
        return block(a.action === 'require_approval' ? texts.approval.subagent(tc.name, a.reason) : texts.approval.denied(tc.name, a.reason));
      case 'not_recorded':
        return block(texts.approval.notRecorded(tc.name));
      case 'unavailable':
        return block(texts.approval.unavailable(tc.name, a.reason));
    }
  };

  const tools = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const ai = lastAi(state.messages);
    const calls = ai?.tool_calls ?? [];
    const mentioned = new Set(mentionsOf(state.messages));
    const subagent = state.parent_context !== null;
    const shared = sharedToolCallIds(calls);
    const results: Array<ToolMessage | null> = await Promise.all(
      calls.map(async (tc) => {
        if (shared.has(tc.id ?? '')) {
          // Fail closed: verdicts and recorded effects are per id, so none of these calls is safe to run.
          ctx.logger.warn({ tool: tc.name, tool_call_id: tc.id }, 'tool call id shared by several calls; not run');
          return new ToolMessage({ content: texts.approval.sharedId(tc.name, tc.id ?? ''), tool_call_id: tc.id ?? '', name: tc.name, status: 'error' });
        }
        if (isLocalTool(tc.name)) return null; // run below, in order, against the todo list (delegate_task: the delegate node)
        const blocked = approvalBlock(state, tc);
        if (blocked) {
          ctx.logger.info({ tool: tc.name, tool_call_id: tc.id, decision: state.approvals[tc.id ?? '']?.decision ?? 'unchecked' }, 'tool call not run');
          return blocked;
        }
        const id = tc.id ?? '';
        const started = Date.now();
        const call = {
          tenantId: ctx.tenantId,
          threadId: ctx.threadId,
          runId: ctx.runId,
          toolCallId: id,
          name: tc.name,
          args: tc.args,
          onDemand: mentioned.has(tc.name),
          subagent,
          ...(ctx.workspaceThreadId ? { workspaceThreadId: ctx.workspaceThreadId } : {}),
        };
        // An idempotent tool may run again after a crash (that is what the flag says), so the ledger
        // — a store write before and after the call — would buy it nothing: only side-effecting
        // calls are claimed and recorded (issue 9: no work for a read-only tool that only a
        // side-effecting one needs).
        const idempotent = deps.tools.isIdempotent?.(tc.name) ?? false;
        const res = await withSpan(`tool ${tc.name}`, { attributes: { 'agentloop.tool': tc.name, 'agentloop.tool_call_id': id } }, async (span) => {
          const r = deps.ledger && !idempotent
            ? await executeWithLedger(
                deps.ledger,
                { ...call, idempotent },
                (c) => deps.tools.execute(c),
                deps.tools.recordedOutcome ? (c) => deps.tools.recordedOutcome!(c) : undefined,
                deps.tools.reexecute ? (c) => deps.tools.reexecute!(c) : undefined,
              )
            : await deps.tools.execute(call);
          if (r.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: r.errorCode ?? 'tool error' });
          return r;
        });
        const metrics = instruments();
        const outcome = res.isError ? (res.errorCode ?? 'error') : 'ok';
        metrics.toolCalls.add(1, { 'agentloop.tool': tc.name, outcome });
        metrics.toolCallDuration.record((Date.now() - started) / 1000, { 'agentloop.tool': tc.name, outcome });
        ctx.logger.info({ tool: tc.name, tool_call_id: id, ms: Date.now() - started, error: res.isError ? res.errorCode : undefined }, 'tool call');
        return new ToolMessage({ content: res.content, tool_call_id: id, name: tc.name, status: res.isError ? 'error' : 'success' });
      }),
    );
    let todos = state.todos;
    let todosChanged = false;
    calls.forEach((tc, i) => {
      if (!isLocalTool(tc.name)) return;
      if (tc.name === 'delegate_task' && deps.delegation) return; // answered by the delegate node
      if (tc.name === 'ask_human') return; // answered by the human node
      const r = runLocalTool({ id: tc.id ?? '', name: tc.name, args: tc.args }, todos, language);
      if (r.todos) {
        todos = r.todos;
        todosChanged = true;
      }
      ctx.logger.info({ tool: tc.name, tool_call_id: tc.id, error: r.message.status === 'error' ? 'REJECTED' : undefined }, 'local tool call');
      results[i] = r.message;
    });
    // The todo list and the ToolMessages are written together, in one update (seed 000 §2.7).
    return new Command({ update: { messages: results.filter((m): m is ToolMessage => m !== null), ...(todosChanged ? { todos } : {}) } });
  };

  /** delegate_task calls of the last AI message that have no ToolMessage yet. */
  const pendingDelegateCalls = (messages: BaseMessage[]) => pendingCalls(messages, 'delegate_task');

  /** Calls of a tool in the last AI message that have no ToolMessage yet. */
  const pendingCalls = (messages: BaseMessage[], name: string) => {
    let i = messages.length - 1;
    const answered = new Set<string>();
    for (; i >= 0 && ToolMessage.isInstance(messages[i]); i--) answered.add((messages[i] as ToolMessage).tool_call_id);
    const ai = messages[i];
    if (!ai || !AIMessage.isInstance(ai)) return [];
    return (ai.tool_calls ?? []).filter((tc) => tc.name === name && !answered.has(tc.id ?? ''));
  };

  const afterTools = (state: AgentStateType): 'delegate' | 'human' | 'agent' =>
    deps.delegation && pendingDelegateCalls(state.messages).length > 0 ? 'delegate' : afterDelegate(state);
  const afterDelegate = (state: AgentStateType): 'human' | 'agent' => (pendingCalls(state.messages, 'ask_human').length > 0 ? 'human' : 'agent');

  /**
   * Seed 001 §7.2: each pending ask_human call suspends the run with a `user_input_request`
   * interrupt; the resume value (a string, or {answer}) becomes the call's ToolMessage.
   */
  const human = (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const out: ToolMessage[] = [];
    const reply = (id: string, content: string, ok: boolean) => out.push(new ToolMessage({ content, tool_call_id: id, name: 'ask_human', status: ok ? 'success' : 'error' }));
    for (const tc of pendingCalls(state.messages, 'ask_human')) {
      const id = tc.id ?? '';
      if (state.parent_context !== null || ctx.ephemeral) {
        reply(id, texts.askHuman.subagent, false);
        continue;
      }
      const args = (tc.args ?? {}) as Record<string, unknown>;
      const question = typeof args.question === 'string' ? args.question.trim() : '';
      if (question === '') {
        reply(id, texts.askHuman.invalid('"question" must be a non-empty string'), false);
        continue;
      }
      const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
      const dflt = text(args.default);
      const raw = interrupt({
        type: USER_INPUT_INTERRUPT,
        tool_call_id: id,
        question,
        context: text(args.context) ?? '',
        default: dflt ?? null,
        required: args.required !== false,
      });
      const obj = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : undefined;
      const given = typeof raw === 'string' ? raw : text(obj?.answer) ?? text(obj?.response) ?? text(obj?.args) ?? (raw === undefined || raw === null ? '' : JSON.stringify(raw));
      const answer = given.trim() === '' ? (dflt ?? '') : given;
      ctx.logger.info({ tool_call_id: id, answered: answer !== '' }, 'ask_human answered');
      reply(id, answer === '' ? texts.askHuman.noAnswer : answer, true);
    }
    return { messages: out };
  };

  /**
   * Seed 001 Part 5. Validates the step's delegate_task calls, then suspends the graph
   * (`interrupt`) with the children to start; the run's executor starts them and ends the
   * job. The resume value carries each child's answer, which becomes the call's ToolMessage.
   * Re-executed from the top on resume: everything before `interrupt` is deterministic.
   */
  const delegate = (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const limits = deps.delegation!;
    const depth = ctx.depth ?? 0;
    const calls = pendingDelegateCalls(state.messages);
    const refused: ToolMessage[] = [];
    const children: DelegatedChild[] = [];
    const refuse = (id: string, content: string) => refused.push(new ToolMessage({ content, tool_call_id: id, name: 'delegate_task', status: 'error' }));
    calls.forEach((tc, index) => {
      const id = tc.id ?? '';
      if (depth >= limits.maxDepth) return refuse(id, texts.delegateDepth(limits.maxDepth));
      const args = parseDelegateArgs(tc.args, language);
      if (!args.ok) return refuse(id, texts.delegateInvalid(args.error));
      if (!id) return refuse(id, texts.delegateInvalid('the tool call has no id'));
      if (children.length >= limits.maxParallel) return refuse(id, texts.delegateTooMany(limits.maxParallel));
      const cfg = childConfig(ctx.runConfig ?? {}, { task: args.task, index, maxLoops: args.maxLoops });
      if (!cfg.ok) return refuse(id, texts.delegateInvalid(cfg.error));
      const runId = childRunId(ctx.runId, id);
      children.push({ tool_call_id: id, run_id: runId, thread_id: childThreadId(runId), task: args.task, max_loops: args.maxLoops, config: cfg.config });
    });
    if (refused.length > 0) ctx.logger.warn({ refused: refused.map((m) => m.content) }, 'delegate_task calls refused');
    if (children.length === 0) return { messages: refused };
    const request: DelegationRequest = {
      type: DELEGATION_INTERRUPT,
      delegation_id: delegationId(ctx.runId, children.map((c) => c.tool_call_id)),
      children,
    };
    const resume = interrupt<DelegationRequest, DelegationResume | undefined>(request);
    const answers = children.map((c) => {
      const r = resume?.delegation_id === request.delegation_id ? resume.results?.[c.tool_call_id] : undefined;
      const content = r ? r.content : texts.delegateFailed('no result was recorded for this delegated agent');
      return new ToolMessage({
        content,
        tool_call_id: c.tool_call_id,
        name: 'delegate_task',
        status: r && !r.is_error ? 'success' : 'error',
        additional_kwargs: { agentloop_delegated_run: { run_id: c.run_id, thread_id: c.thread_id, status: r?.status ?? 'unknown' } },
      });
    });
    ctx.logger.info({ delegation_id: request.delegation_id, children: children.length, failed: answers.filter((m) => m.status === 'error').length }, 'delegated agents answered');
    return { messages: [...refused, ...answers] };
  };

  const finalize = async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ai = lastAi(state.messages);
    const pending = ai?.tool_calls ?? [];
    if (pending.length === 0) return { finalize_reason: null };
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

  const start = (state: AgentStateType): 'compact' | 'agent' => (isCompactCommand(state.messages.at(-1)) ? 'compact' : 'agent');

  return new StateGraph(AgentState)
    .addNode('compact', compact)
    .addNode('agent', agent)
    .addNode('approve', approve, { ends: ['await_approval', 'tools'] })
    .addNode('await_approval', awaitApproval)
    .addNode('tools', tools)
    .addNode('delegate', delegate)
    .addNode('human', human)
    .addNode('finalize', finalize)
    .addConditionalEdges(START, start, ['compact', 'agent'])
    .addEdge('compact', END)
    .addConditionalEdges('agent', route, ['tools', 'approve', 'finalize'])
    .addEdge('await_approval', 'tools')
    .addConditionalEdges('tools', afterTools, ['delegate', 'human', 'agent'])
    .addConditionalEdges('delegate', afterDelegate, ['human', 'agent'])
    .addEdge('human', 'agent')
    .addEdge('finalize', END)
    .compile({ checkpointer: deps.checkpointer });
}

export type AgentGraph = ReturnType<typeof buildAgentGraph>;
