/** Model calls shared by the agent and compact nodes: model choice, metering, compaction. */
import type { BaseMessage } from '@langchain/core/messages';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { ResolvedModel } from '../models/registry.js';
import { ScriptedChatModel } from '../models/scripted.js';
import { ReplayChatModel } from '../recording/replay-model.js';
import { compactedMessages, summarizeMessages, type CompactionPlan } from '../compaction.js';
import { resolveModelSlot, type RouteDecision } from '../routing.js';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../usage.js';
import type { PromptLanguage } from '../prompts.js';
import type { AgentStateType, AgentUpdate, RunContext } from './state.js';
import { ensureTokenBudget, recordModelCall } from './token-budget.js';

/** Call options of one model call: the signal, and for the scripted and replay providers the turn to play. */
export function callOptions(model: BaseChatModel, turn: number): Record<string, unknown> {
  return model instanceof ScriptedChatModel || model instanceof ReplayChatModel ? { scripted_turn: turn } : {};
}

/** Usage accumulated across the model calls of one node execution. */
export class CallMeter {
  calls = 0;
  usage: TokenUsage = { ...ZERO_USAGE };
  /** `runTokensBefore`: the run's own tokens before this node (its token budget counts them). */
  constructor(
    readonly startTurn: number,
    readonly runTokensBefore = 0,
  ) {}
  get turn(): number {
    return this.startTurn + this.calls;
  }
  /** The run's own tokens so far, this node's calls included. */
  get runTokens(): number {
    return this.runTokensBefore + this.usage.total_tokens;
  }
  record(usage: TokenUsage | null): void {
    this.calls++;
    this.usage = addUsage(this.usage, usage ?? undefined);
  }
  update(runId: string): Pick<AgentUpdate, 'token_usage' | 'run_usage'> {
    return { token_usage: this.usage, run_usage: { run_id: runId, model_calls: this.calls, ...this.usage } };
  }
}

/** The scripted provider plays turns by index, so a resumed run continues from its own call count. */
export const startTurn = (state: AgentStateType, ctx: RunContext) => (state.run_usage.run_id === ctx.runId ? state.run_usage.model_calls : 0);

/** A meter for one node execution, starting from the run's own calls and tokens in state. */
export const meterOf = (state: AgentStateType, ctx: RunContext) =>
  state.run_usage.run_id === ctx.runId ? new CallMeter(state.run_usage.model_calls, state.run_usage.total_tokens) : new CallMeter(0, 0);

export const pickModel = (ctx: RunContext, decision: RouteDecision): ResolvedModel => (ctx.router ? ctx.router.forSlot(decision.slot) : ctx.model);

/** Summarizes `messages` before `plan.splitAt`; returns the new full message list. */
export async function compactWith(ctx: RunContext, language: PromptLanguage, messages: BaseMessage[], plan: CompactionPlan, meter: CallMeter) {
  const decision = resolveModelSlot({ node: 'compact', preference: null, messages, configured: ctx.router?.configured ?? new Set() });
  const resolved = pickModel(ctx, decision);
  const older = messages.slice(0, plan.splitAt);
  await ensureTokenBudget(ctx, meter);
  // `langsmith:nostream`: the summary is not an answer; its tokens are not streamed to clients.
  const summarize = () =>
    summarizeMessages(resolved.model, older, {
      language,
      signal: ctx.signal,
      callOptions: { ...callOptions(resolved.model, meter.turn), tags: ['langsmith:nostream'] },
    });
  // The worker's CPU slot is released while waiting on the provider.
  const startedAt = new Date();
  const result = await (ctx.stepLease ? ctx.stepLease.idle(summarize) : summarize());
  await recordModelCall(ctx, meter, resolved.label, result.usage);
  // Record and replay (issue 17): a summary call takes a model call index like any other.
  await ctx.tape?.modelCall({ turn: meter.turn, model: resolved, tools: [], messages: result.call.request, response: result.call.response, startedAt });
  meter.record(result.usage);
  ctx.logger.info({ summarized: result.summarized, model: resolved.label, kept: messages.length - plan.splitAt }, 'conversation compacted');
  return { list: compactedMessages(messages, plan, result.summary), summarized: result.summarized };
}
