import type { BaseMessage } from '@langchain/core/messages';
import { AIMessage } from '@langchain/core/messages';

/** Token counts, the shape of LangChain's `usage_metadata` totals. */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

/** Usage of the current run, tagged with the run it belongs to (see `runUsageReducer`). */
export interface RunUsage extends TokenUsage {
  run_id: string | null;
  /** Model calls made by this run so far (agent turns and compaction summaries). */
  model_calls: number;
}

export const ZERO_USAGE: TokenUsage = Object.freeze({ input_tokens: 0, output_tokens: 0, total_tokens: 0 });
export const EMPTY_RUN_USAGE: RunUsage = Object.freeze({ run_id: null, model_calls: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 });

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);

/** Sum of two usages; missing or non-numeric counts count as zero. */
export function addUsage(a: Partial<TokenUsage> | undefined, b: Partial<TokenUsage> | undefined): TokenUsage {
  return {
    input_tokens: num(a?.input_tokens) + num(b?.input_tokens),
    output_tokens: num(a?.output_tokens) + num(b?.output_tokens),
    total_tokens: num(a?.total_tokens) + num(b?.total_tokens),
  };
}

/** A message's `usage_metadata` totals, or null when the provider reported none. */
export function usageOf(message: BaseMessage | undefined): TokenUsage | null {
  if (!message || !AIMessage.isInstance(message) || !message.usage_metadata) return null;
  const u = message.usage_metadata;
  return {
    input_tokens: num(u.input_tokens),
    output_tokens: num(u.output_tokens),
    total_tokens: num(u.total_tokens) || num(u.input_tokens) + num(u.output_tokens),
  };
}

/** Sum of the `usage_metadata` of the AI messages given. */
export function sumUsage(messages: readonly BaseMessage[]): TokenUsage {
  return messages.reduce<TokenUsage>((acc, m) => addUsage(acc, usageOf(m) ?? undefined), { ...ZERO_USAGE });
}

/** Thread channel reducer: every update is a delta added to the running total. */
export function threadUsageReducer(a: TokenUsage, b: TokenUsage): TokenUsage {
  return addUsage(a, b);
}

/**
 * Run channel reducer: an update for the same run adds to it; an update from
 * another run starts over. No reset write is needed at run start, and a run
 * resumed from its checkpoint (same run id) keeps counting where it stopped.
 */
export function runUsageReducer(a: RunUsage, b: RunUsage): RunUsage {
  if (b.run_id !== a.run_id) return { ...b };
  return { run_id: a.run_id, model_calls: a.model_calls + b.model_calls, ...addUsage(a, b) };
}

/** The run's usage as shown to clients: zero when the channel holds another run's counts. */
export function runUsageFor(runId: string, v: RunUsage | undefined): TokenUsage & { model_calls: number } {
  if (!v || v.run_id !== runId) return { ...ZERO_USAGE, model_calls: 0 };
  return { input_tokens: v.input_tokens, output_tokens: v.output_tokens, total_tokens: v.total_tokens, model_calls: v.model_calls };
}
