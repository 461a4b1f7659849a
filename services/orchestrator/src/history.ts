import { z } from 'zod';
import { AIMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { ConfigError } from '@agentloop/core';

/**
 * Message history sent to the model (seed 001 Part 4). The graph state keeps
 * every message; only the list handed to the model is cut. That keeps the
 * thread's full transcript for clients and for compaction, and lets a larger
 * window be applied later without losing anything.
 */
export const HISTORY_STRATEGIES = ['clean', 'truncate'] as const;
export type HistoryStrategy = (typeof HISTORY_STRATEGIES)[number];

export const MAX_MESSAGE_HISTORY_DEFAULT = 40;
export const MAX_MESSAGE_HISTORY_MIN = 10;
export const MAX_MESSAGE_HISTORY_MAX = 100;

export const HistoryOptions = z.object({
  maxMessages: z.number().int().min(MAX_MESSAGE_HISTORY_MIN).max(MAX_MESSAGE_HISTORY_MAX).default(MAX_MESSAGE_HISTORY_DEFAULT),
  strategy: z.enum(HISTORY_STRATEGIES).default('clean'),
});
export type HistoryOptions = z.infer<typeof HistoryOptions>;

/** Validates history options; a value outside 10–100 or an unknown strategy is a ConfigError naming the field. */
export function parseHistoryOptions(input: Partial<HistoryOptions> = {}): HistoryOptions {
  const r = HistoryOptions.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0];
    throw new ConfigError(
      `Invalid message history option ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'} (maxMessages must be ${MAX_MESSAGE_HISTORY_MIN}–${MAX_MESSAGE_HISTORY_MAX}; strategy clean or truncate)`,
    );
  }
  return r.data;
}

const hasToolCalls = (m: BaseMessage): m is AIMessage => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0;

/**
 * Groups messages into units that must stay together: an AI message with tool
 * calls plus the ToolMessages answering it, or a single other message. Returns
 * only complete units: an orphan ToolMessage (its AI message is absent) and an
 * AI message whose calls are not all answered are dropped, with any partial
 * results. Providers reject both shapes.
 */
export function repairToolPairs(messages: readonly BaseMessage[]): BaseMessage[] {
  const out: BaseMessage[] = [];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i]!;
    if (ToolMessage.isInstance(m)) {
      i++; // orphan: no AI message opened a group for it
      continue;
    }
    if (!hasToolCalls(m)) {
      out.push(m);
      i++;
      continue;
    }
    const pending = new Set((m.tool_calls ?? []).map((tc) => tc.id ?? ''));
    const group: BaseMessage[] = [m];
    let j = i + 1;
    while (j < messages.length && ToolMessage.isInstance(messages[j]!)) {
      const t = messages[j] as ToolMessage;
      if (pending.has(t.tool_call_id)) {
        pending.delete(t.tool_call_id);
        group.push(t);
      } // a ToolMessage for another call is an orphan: skipped
      j++;
    }
    if (pending.size === 0) out.push(...group);
    i = j;
  }
  return out;
}

/** Seed 001 §4.2 truncate: the first message plus the last `max - 1`; tool groups cut by the boundary are dropped. */
export function truncateMessages(messages: readonly BaseMessage[], max: number): BaseMessage[] {
  if (messages.length <= max) return repairToolPairs(messages);
  return repairToolPairs([messages[0]!, ...messages.slice(-(max - 1))]);
}

/** Splits into turns, each ending with an AI message without tool calls; the trailing unfinished turn is last (maybe empty). */
function splitTurns(messages: readonly BaseMessage[]): { turns: BaseMessage[][]; current: BaseMessage[] } {
  const turns: BaseMessage[][] = [];
  let cur: BaseMessage[] = [];
  for (const m of messages) {
    cur.push(m);
    if (AIMessage.isInstance(m) && !hasToolCalls(m)) {
      turns.push(cur);
      cur = [];
    }
  }
  return { turns, current: cur };
}

/** A turn without its intermediate steps: the user's message(s) and the final answer. */
const condense = (turn: BaseMessage[]) => turn.filter((m) => !ToolMessage.isInstance(m) && !hasToolCalls(m));

/**
 * Seed 001 §4.2 clean: keeps the first message and whole recent turns
 * (user → assistant → [tools] → assistant). Older turns that no longer fit
 * whole are kept condensed (user message and final answer, intermediate tool
 * steps removed) while they fit; the turn in progress is always kept. Unlike
 * the seed's sketch, the unfinished current turn is never dropped and the
 * limit is in messages rather than `max // 4` turns, so the result never
 * exceeds `max`. If the current turn alone is longer than the limit it is
 * truncated like the truncate strategy.
 */
export function cleanMessages(messages: readonly BaseMessage[], max: number): BaseMessage[] {
  if (messages.length <= max) return repairToolPairs(messages);
  const first = messages[0]!;
  const { turns, current } = splitTurns(messages.slice(1));
  const budget = max - 1;
  if (current.length > budget) return repairToolPairs([first, ...current.slice(-budget)]);

  const kept: BaseMessage[][] = [current];
  let used = current.length;
  let condensing = false;
  for (let t = turns.length - 1; t >= 0; t--) {
    const turn = turns[t]!;
    if (!condensing && used + turn.length <= budget) {
      kept.unshift(turn);
      used += turn.length;
      continue;
    }
    condensing = true;
    const short = condense(turn);
    if (used + short.length > budget) break;
    kept.unshift(short);
    used += short.length;
  }
  return repairToolPairs([first, ...kept.flat()]);
}

/**
 * What the model sees of the conversation: system messages removed (the
 * system prompt is rebuilt for every call and never part of history), the
 * strategy applied, tool groups kept whole.
 */
export function selectHistory(messages: readonly BaseMessage[], options: HistoryOptions): BaseMessage[] {
  const conversation = messages.filter((m) => !SystemMessage.isInstance(m));
  return options.strategy === 'truncate' ? truncateMessages(conversation, options.maxMessages) : cleanMessages(conversation, options.maxMessages);
}
