/**
 * The agent node: one model call per execution, made of the steps below in this order —
 * visible tools, prompt, fit to the token budget, route to a model slot, call the model,
 * post-process its answer. Each step is its own function so it can be read (and tested) alone.
 */
import { REMOVE_ALL_MESSAGES, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { AIMessage, RemoveMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { errorMessage } from '@agentloop/core';
import { instruments, SpanKind, withSpan, type Attributes } from '@agentloop/telemetry';
import type { ToolSpec } from '@agentloop/proto';
import { TEXT_ONLY, type ModelSlot, type ResolvedModel } from '../../models/registry.js';
import { mediaForModel } from '../tool-media.js';
import { basePrompt, buildSystemPrompt, mentionReminders, todoReminder } from '../../prompts.js';
import { ASK_HUMAN_SPEC, DELEGATE_TASK_SPEC, TODO_READ_SPEC, TODO_WRITE_SPEC } from '../../local-tools.js';
import { MEMORY_TOOL_SPECS } from '../../memory/memory-tools.js';
import { classifyMentions, mentionsOf } from '../../mentions.js';
import { selectHistory } from '../../history.js';
import { estimateInputTokens, isSummaryMessage, planAutoCompaction } from '../../compaction.js';
import { messageText, parseModelPref, resolveModelSlot, type RouteDecision } from '../../routing.js';
import { usageOf } from '../../usage.js';
import { withUniqueToolCallIds } from '../../tool-call-ids.js';
import { CallMeter, callOptions, compactWith, meterOf, pickModel } from '../model-calls.js';
import { budgetStopUpdate, ensureTokenBudget, recordModelCall } from '../token-budget.js';
import { TokenBudgetExceededError } from '../../budgets/token-accounting.js';
import { allowedSkills, offeredTools } from '../../agent-config.js';
import { runPolicy } from '../../environments.js';
import { activeSkills, scopeSkillTool, skillsCatalogSection, toolAllowed, toolRestriction } from '../../skill-policy.js';
import { ctxOf, type NodeShared, type RunContextDeps } from '../shared.js';
import { judgedCalls, judgeToolCalls } from '../approval-verdicts.js';
import { forcedStop } from '../edges.js';
import type { AgentGraphDeps, AgentStateType, AgentUpdate, ApprovalEntry, RunContext } from '../state.js';

export type AgentDeps = RunContextDeps & Pick<AgentGraphDeps, 'tools' | 'skills' | 'delegation' | 'systemPrompt' | 'approvals'>;

/** What the model is sent: the system prompt (rebuilt every call, never stored) and the history window. */
export interface ModelInput {
  system: string;
  history: BaseMessage[];
}

export function toOpenAiTools(specs: ToolSpec[]) {
  return specs.map((s) => ({
    type: 'function' as const,
    function: { name: s.name, description: s.description, parameters: safeJson(s.parametersJsonSchema) },
  }));
}

/** Parsed tool schemas by their JSON text; beyond this many distinct schemas the oldest is dropped. */
const SCHEMA_CACHE_SIZE = 1024;
const parsedSchemas = new Map<string, Record<string, unknown>>();

/**
 * A tool's JSON Schema as an object, parsed once per distinct text: every model call sends every
 * visible tool's schema, and parsing them again per call was ~1.3% of an embedded run's CPU
 * (issue 9, bench/throughput profile). The object is shared between calls; its readers (the
 * providers' request builders in @langchain/openai and the scripted model) only read it.
 */
function safeJson(s: string): Record<string, unknown> {
  const hit = parsedSchemas.get(s);
  if (hit) return hit;
  let parsed: Record<string, unknown> = { type: 'object' };
  try {
    const v: unknown = JSON.parse(s);
    if (v && typeof v === 'object') parsed = v as Record<string, unknown>;
  } catch {
    // Not JSON: the model sees an open object schema, as before.
  }
  parsedSchemas.set(s, parsed);
  if (parsedSchemas.size > SCHEMA_CACHE_SIZE) parsedSchemas.delete(parsedSchemas.keys().next().value!);
  return parsed;
}

/**
 * The tool-runner's list (with @mentioned tools loaded on demand) plus the local tools, and how the
 * @mentions of the conversation classify against them. The run's agent configuration (an
 * assistant's `tools`, `skills`, `mcp_servers`, `environment`) narrows both, and so does the
 * `allowed-tools` of an active skill (skill-policy.ts). Also the skills catalog of the prompt.
 */
export async function visibleTools(deps: AgentDeps, shared: Pick<NodeShared, 'agentNames' | 'language'>, state: AgentStateType, ctx: RunContext) {
  const mentioned = mentionsOf(state.messages);
  const policy = runPolicy(ctx);
  const all = await deps.tools
    .listTools(ctx.tenantId, { mentioned, allowed: state.allowed_tools, subagent: state.parent_context !== null })
    .catch((err: unknown) => {
      // No tool-runner reachable: the model still answers, with the local tools only.
      ctx.logger.warn({ err }, 'tool list unavailable; calling the model with the orchestrator tools only');
      return [] as ToolSpec[];
    });
  const listed = offeredTools(all, policy);
  // ask_human needs someone to resume the run: not for delegated agents nor stateless (ephemeral) runs.
  const local = offeredTools(
    [TODO_WRITE_SPEC, TODO_READ_SPEC, ...(state.parent_context === null && !ctx.ephemeral ? [ASK_HUMAN_SPEC] : []), ...(ctx.memory ? MEMORY_TOOL_SPECS : [])],
    policy,
  );
  const subagent = state.parent_context !== null;
  const catalog = deps.skills
    ? (await deps.skills.catalog(ctx.tenantId, { ...(policy.environment ? { environment: policy.environment } : {}), subagent })).skills
    : [];
  const known = new Set([...listed, ...local].map((s) => s.name));
  const skillNames = allowedSkills(new Set(catalog.map((s) => s.id)), policy);
  const mentions = classifyMentions(mentioned, { tools: known, skills: skillNames, agents: policy.agents ?? shared.agentNames });
  // Core skills are preloaded into the workspace at the start of a run (seed 000 §3.4), and a
  // mentioned skill is linked so the reminder's skills/<id>/SKILL.md is there to read.
  const core = catalog.filter((s) => s.core && skillNames.has(s.id)).map((s) => s.id);
  const toLoad = [...new Set([...(state.loops === 0 ? core : []), ...mentions.skills])];
  for (const id of toLoad) {
    await deps.skills
      ?.load(ctx.tenantId, ctx.workspaceThreadId ?? ctx.threadId, id)
      .catch((err: unknown) => ctx.logger.warn({ skill: id, err: errorMessage(err) }, 'skill not preloaded'));
  }
  const missing = mentions.tools.filter((n) => !known.has(n));
  if (missing.length > 0) ctx.logger.warn({ tools: missing }, '@mentioned tool not found');
  // delegate_task is offered when an agent is @mentioned (seed 001 §2.5) and this run may still delegate.
  const mayDelegate = !deps.delegation || (ctx.depth ?? 0) < deps.delegation.maxDepth;
  const delegate = mentions.agents.length > 0 && mayDelegate ? offeredTools([DELEGATE_TASK_SPEC], policy) : [];
  // While a skill with `allowed-tools` is active, the tools it does not list are not offered.
  const restriction = toolRestriction(activeSkills(state.messages, { core, mentioned: mentions.skills }), catalog);
  const allowedCatalog = catalog.filter((s) => skillNames.has(s.id));
  const scoped = policy.environment ? scopeSkillTool(listed, allowedCatalog) : listed;
  // The first spec of each name, in this order (a Set: the tool-runner lists tens of tools).
  const visible: ToolSpec[] = [];
  const names = new Set<string>();
  for (const group of [local, scoped, delegate]) {
    for (const s of group) {
      if (names.has(s.name) || !toolAllowed(s.name, restriction)) continue;
      names.add(s.name);
      visible.push(s);
    }
  }
  const skillsSection = skillsCatalogSection(allowedCatalog, shared.language);
  return { visible, known, mentions, instructions: policy.instructions, skillsSection };
}

/** System messages in state (client instructions, compaction summaries) become system prompt sections. */
function systemSections(texts: NodeShared['texts'], messages: readonly BaseMessage[]) {
  return messages.filter((m) => SystemMessage.isInstance(m)).map((m) => (isSummaryMessage(m) ? texts.summarySection(messageText(m)) : messageText(m)));
}

/**
 * The prompt builder for this call. A function of the messages because compaction may replace them
 * and the summary then becomes a system prompt section. The agent's instructions (an assistant's
 * `system_prompt`) come right after the base prompt, before the conversation's own sections.
 */
export function promptBuilder(
  deps: Pick<AgentDeps, 'systemPrompt'>,
  shared: Pick<NodeShared, 'language' | 'texts' | 'history'>,
  state: AgentStateType,
  tools: Pick<Awaited<ReturnType<typeof visibleTools>>, 'known' | 'mentions'> & { instructions?: string | null; skillsSection?: string },
): (messages: BaseMessage[]) => ModelInput {
  const { language, texts, history } = shared;
  const { known, mentions } = tools;
  const instructions = tools.instructions ? [tools.instructions] : [];
  const skills = tools.skillsSection ? [tools.skillsSection] : [];
  // A delegated agent executes a task and cannot talk to the user (seed 001 §5.4).
  const delegated = state.parent_context !== null;
  const reminders = [
    todoReminder(state.todos, language),
    mentionReminders({ tools: mentions.tools.filter((n) => known.has(n)), skills: mentions.skills, agents: mentions.agents }, language),
  ];
  return (messages) => ({
    system: buildSystemPrompt({
      base: delegated ? basePrompt(language, true) : (deps.systemPrompt ?? basePrompt(language)),
      language,
      extra: [...instructions, ...skills, ...systemSections(texts, messages), ...reminders],
    }),
    history: selectHistory(messages, history),
  });
}

/**
 * Compacts first when the input would exceed the token budget. `rewrite` is the new full message
 * list when it did (the state's messages are then replaced), else null.
 */
export async function fitToBudget(
  shared: Pick<NodeShared, 'language' | 'budget'>,
  ctx: RunContext,
  messages: BaseMessage[],
  input: (messages: BaseMessage[]) => ModelInput,
  meter: CallMeter,
): Promise<{ messages: BaseMessage[]; rewrite: BaseMessage[] | null; next: ModelInput }> {
  const next = input(messages);
  if (shared.budget <= 0) return { messages, rewrite: null, next };
  const estimate = estimateInputTokens(next.history, next.system);
  const plan = estimate > shared.budget ? planAutoCompaction(messages, shared.budget) : null;
  if (!plan) return { messages, rewrite: null, next };
  ctx.logger.info({ estimate, budget: shared.budget }, 'token budget exceeded; compacting');
  const list = (await compactWith(ctx, shared.language, messages, plan, meter)).list;
  return { messages: list, rewrite: list, next: input(list) };
}

/** The run config's preference wins over the state's; an invalid state value is ignored, not fatal. */
function preference(state: AgentStateType, ctx: RunContext): ModelSlot | null {
  if (ctx.modelPref) return ctx.modelPref;
  try {
    return parseModelPref(state.model_pref, 'state model_pref');
  } catch (err) {
    ctx.logger.warn({ err, model_pref: state.model_pref }, 'ignoring invalid model_pref in state');
    return null;
  }
}

/** Seed 001 §1.7: the model slot of this call. */
export function routeModel(state: AgentStateType, ctx: RunContext, messages: BaseMessage[]): { decision: RouteDecision; resolved: ResolvedModel } {
  const decision = resolveModelSlot({ node: 'agent', preference: preference(state, ctx), messages, configured: ctx.router?.configured ?? new Set() });
  return { decision, resolved: pickModel(ctx, decision) };
}

/**
 * One model call, traced and metered; the worker's CPU slot is released while the provider answers.
 * With the run's ModelSuspension (models/model-suspension.ts) and `suspendable`, a call that takes
 * longer than its grace period suspends the run (ModelCallSuspendedError) and, when the step runs
 * again, this returns the answer received meanwhile without calling the model again.
 */
export async function callModel(
  ctx: RunContext,
  resolved: ResolvedModel,
  decision: RouteDecision,
  visible: ToolSpec[],
  next: ModelInput,
  meter: CallMeter,
  suspendable = true,
): Promise<AIMessage> {
  await ensureTokenBudget(ctx, meter);
  const base = resolved.model;
  const model = typeof base.bindTools === 'function' ? base.bindTools(toOpenAiTools(visible)) : base;
  // GenAI semantic conventions (docs/operations.md): span "chat <model>", the request's model and
  // provider, then the usage and finish reasons of the answer. gen_ai.system is the name the
  // conventions used before gen_ai.provider.name; backends that predate it still read it. The span
  // and the metrics are the provider call's: once per call, however often the step runs.
  const request = (): Promise<AIMessage> => {
    const modelStarted = performance.now();
    const attrs = { 'gen_ai.request.model': resolved.label };
    return withSpan(
      `chat ${resolved.label}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': resolved.label,
          'gen_ai.provider.name': resolved.provider,
          'gen_ai.system': resolved.provider,
          'agentloop.route': decision.reason,
          'agentloop.tenant': ctx.tenantId,
        },
      },
      async (span) => {
        // Tool results' images and audio as this model takes them (tool-media.ts).
        const history = mediaForModel(next.history, resolved.accepts ?? TEXT_ONLY);
        const r = (await model.invoke([new SystemMessage(next.system), ...history], { ...callOptions(base, meter.turn), signal: ctx.signal })) as AIMessage;
        const u = r.usage_metadata;
        if (u) span.setAttributes({ 'gen_ai.usage.input_tokens': u.input_tokens, 'gen_ai.usage.output_tokens': u.output_tokens });
        span.setAttributes(responseAttributes(r));
        return r;
      },
    ).then(
      (r) => {
        const metrics = instruments();
        metrics.modelCalls.add(1, { ...attrs, outcome: 'ok' });
        metrics.modelCallDuration.record((performance.now() - modelStarted) / 1000, attrs);
        return r;
      },
      (err: unknown) => {
        instruments().modelCalls.add(1, { ...attrs, outcome: 'error' });
        throw err;
      },
    );
  };
  const lease = ctx.stepLease;
  const idle = <T>(wait: () => Promise<T>): Promise<T> => (lease ? lease.idle(wait) : wait());
  // Token counts are metered with the tenant when the call is recorded (budgets/token-accounting.ts).
  // The step's identity for a suspension: the run's model call index and the history sent, both
  // read from the checkpoint the step runs from.
  if (ctx.suspension && suspendable) return ctx.suspension.call(`${meter.turn}:${next.history.length}`, request, idle);
  return idle(request);
}

/**
 * `gen_ai.response.model` and `gen_ai.response.finish_reasons` of an answer: the provider's own
 * words where it gives them (OpenAI `finish_reason`, Anthropic `stop_reason`), else what the
 * answer shows (tool calls or a final message).
 */
function responseAttributes(r: AIMessage): Attributes {
  const meta = (r.response_metadata ?? {}) as Record<string, unknown>;
  const given = meta.finish_reason ?? meta.stop_reason;
  const reason = typeof given === 'string' && given !== '' ? given : (r.tool_calls?.length ?? 0) > 0 ? 'tool_calls' : 'stop';
  return {
    'gen_ai.response.finish_reasons': [reason],
    ...(typeof meta.model_name === 'string' ? { 'gen_ai.response.model': meta.model_name } : {}),
  };
}

/**
 * The message stored in history: a plain AIMessage (bound models return chunks) whose tool calls
 * each have their own id before anything keys on it (approval, ledger, replay log).
 */
export function postProcess(ctx: RunContext, r: AIMessage, resolved: ResolvedModel, decision: RouteDecision): AIMessage {
  const unique = withUniqueToolCallIds(r.tool_calls ?? []);
  if (unique.changed)
    ctx.logger.warn({ ids: (r.tool_calls ?? []).map((tc) => tc.id ?? '') }, 'the model gave tool calls missing or repeated ids; fresh ids assigned');
  const { tool_calls: rawToolCalls, ...kwargs } = (r.additional_kwargs ?? {}) as Record<string, unknown>;
  return new AIMessage({
    content: r.content,
    tool_calls: unique.calls,
    ...(r.id ? { id: r.id } : {}),
    ...(r.usage_metadata ? { usage_metadata: r.usage_metadata } : {}),
    response_metadata: { ...(r.response_metadata ?? {}), agentloop_model: resolved.label, agentloop_route: ctx.router ? decision.reason : 'scripted' },
    // The provider's raw tool calls carry the old ids; `tool_calls` above is what is sent back.
    additional_kwargs: unique.changed || rawToolCalls === undefined ? kwargs : { ...kwargs, tool_calls: rawToolCalls },
  });
}

/** Seed 000 §1.1–1.4: the agent step. Counts one loop per execution. */
export function agentNode(deps: AgentDeps, shared: NodeShared) {
  return async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const meter = meterOf(state, ctx);
    try {
      return await agentStep(deps, shared, state, ctx, meter);
    } catch (err) {
      // A token budget refused a call (issue 17): the run ends here, saying which budget.
      if (err instanceof TokenBudgetExceededError) return { ...budgetStopUpdate(err.stop), loops: state.loops + 1, ...meter.update(ctx.runId) };
      throw err;
    }
  };
}

/** One agent step: tools, prompt, compaction when needed, routing, the model call, its record. */
async function agentStep(deps: AgentDeps, shared: NodeShared, state: AgentStateType, ctx: RunContext, meter: CallMeter) {
  const tools = await visibleTools(deps, shared, state, ctx);
  const input = promptBuilder(deps, shared, state, tools);
  const { messages, rewrite, next } = await fitToBudget(shared, ctx, state.messages, input, meter);
  const { decision, resolved } = routeModel(state, ctx, messages);
  const startedAt = new Date();
  // A step that compacted made a model call of its own (the summary): it does not suspend, so that
  // running again never summarizes twice.
  const response = await callModel(ctx, resolved, decision, tools.visible, next, meter, rewrite === null);
  const ai = postProcess(ctx, response, resolved, decision);
  // Record and replay (issue 17): the request as sent and the answer as stored.
  await ctx.tape?.modelCall({
    turn: meter.turn,
    model: resolved,
    tools: tools.visible,
    messages: [new SystemMessage(next.system), ...next.history],
    response: ai,
    startedAt,
  });
  await recordModelCall(ctx, meter, resolved.label, usageOf(ai));
  meter.record(usageOf(ai));
  ctx.logger.debug({ slot: resolved.label, reason: decision.reason, tools: tools.visible.length, history: next.history.length }, 'model call');
  const out: BaseMessage[] = rewrite ? [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...rewrite, ai] : [ai];
  const approvals = await verdictsFor(deps, ctx, state, [...messages, ai]);
  return {
    messages: out,
    loops: state.loops + 1,
    ...meter.update(ctx.runId),
    ...(approvals ? { approvals } : {}),
    // The model answered, so no earlier stop reason holds any more (a command resuming a run that
    // stopped keeps the old value otherwise); a run that ends with this answer goes straight to END.
    ...(state.finalize_reason !== null ? { finalize_reason: null } : {}),
  } satisfies AgentUpdate;
}

/**
 * Seed 001 §7.3 in the agent step: the verdicts on the bus tool calls of the model's answer, asked
 * here so they are checkpointed with the answer in one superstep (issue 9) rather than by an
 * approve step of their own. Undefined when there is nothing to ask: approvals off, no bus calls,
 * or calls that will not run (loop limit, repeated call: finalize answers them). A crash before
 * this step's checkpoint re-runs the whole step — the model is called again and the new calls are
 * judged again (a denial may then be audited twice, as when the approve step re-ran) — and no call
 * runs without the verdicts of the checkpoint it is read from.
 */
async function verdictsFor(deps: AgentDeps, ctx: RunContext, state: AgentStateType, next: BaseMessage[]): Promise<Record<string, ApprovalEntry> | undefined> {
  const calls = (next.at(-1) as AIMessage).tool_calls ?? [];
  if (!deps.approvals || judgedCalls(calls).length === 0 || forcedStop(next, state.loops + 1, state.max_loops)) return undefined;
  return judgeToolCalls({ approvals: deps.approvals, tools: deps.tools }, ctx, calls, state.parent_context !== null);
}
