import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { newId } from '@agentloop/core';
import { promptTexts, type PromptLanguage } from './prompts.js';
import { lastHumanMessage, messageText } from './routing.js';
import { usageOf, type TokenUsage } from './usage.js';

/**
 * Conversation compaction (seed 003 `/compact`): older messages are summarized
 * by the model into one summary message that replaces them in state. The
 * summary is stored as a SystemMessage flagged `agentloop_summary`; like every
 * system message in state it is folded into the system prompt on each call,
 * never sent as a history message.
 */
export const COMPACT_COMMAND = '/compact';
export const SUMMARY_FLAG = 'agentloop_summary';
/** Messages kept verbatim after an automatic compaction when the current turn is too large to keep whole. */
export const COMPACT_KEEP_RECENT = 4;
/** Per-message and total caps of the transcript handed to the summarizer. */
export const TRANSCRIPT_MESSAGE_MAX_CHARS = 4_000;
export const TRANSCRIPT_MAX_CHARS = 200_000;

/** A user message that is exactly `/compact` (surrounding whitespace ignored). */
export function isCompactCommand(m: BaseMessage | undefined): boolean {
  return !!m && HumanMessage.isInstance(m) && messageText(m).trim() === COMPACT_COMMAND;
}

export function isSummaryMessage(m: BaseMessage): boolean {
  return SystemMessage.isInstance(m) && m.additional_kwargs?.[SUMMARY_FLAG] === true;
}

/**
 * Characters an image or audio part is counted as: a provider bills media by size or duration, not
 * by base64 length (a 512×512 image is ~255 OpenAI tokens, high detail ~765 per 1024² tile), so a
 * flat ~1,000 tokens each keeps a tool result's picture from looking like 200k tokens of text.
 */
export const MEDIA_PART_CHARS = 4_000;
const MEDIA_PART_TYPES = new Set(['image', 'audio', 'image_url', 'input_image', 'input_audio', 'file']);

/** Characters a content array contributes: its parts as JSON, media parts at MEDIA_PART_CHARS. */
function contentChars(parts: unknown[]): number {
  return parts.reduce<number>((n, p) => {
    const type = p && typeof p === 'object' ? String((p as { type?: unknown }).type) : '';
    return n + (MEDIA_PART_TYPES.has(type) ? MEDIA_PART_CHARS : JSON.stringify(p ?? '').length);
  }, 0);
}

/** Characters a message contributes to a model input: content plus tool call arguments. */
function messageChars(m: BaseMessage): number {
  const c = m.content as unknown;
  let n = typeof c === 'string' ? c.length : Array.isArray(c) ? contentChars(c) : JSON.stringify(c ?? '').length;
  if (AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0) n += JSON.stringify(m.tool_calls).length;
  return n;
}

/** chars / 4, rounded up. */
export function estimateTokens(messages: readonly BaseMessage[], systemPrompt = ''): number {
  return Math.ceil((systemPrompt.length + messages.reduce((n, m) => n + messageChars(m), 0)) / 4);
}

/**
 * Size of the next model input. When the newest AI message in the history
 * carries provider usage, its prompt + completion tokens are taken as known and
 * only the messages after it are estimated; otherwise everything is chars/4.
 */
export function estimateInputTokens(history: readonly BaseMessage[], systemPrompt: string): number {
  for (let i = history.length - 1; i >= 0; i--) {
    const usage = usageOf(history[i]);
    if (usage && usage.input_tokens > 0) return usage.input_tokens + usage.output_tokens + estimateTokens(history.slice(i + 1));
  }
  return estimateTokens(history, systemPrompt);
}

/** Where to cut: messages before `splitAt` (system messages aside) are summarized, the rest kept. */
export interface CompactionPlan {
  splitAt: number;
}

const countConversation = (messages: readonly BaseMessage[]) => messages.filter((m) => !SystemMessage.isInstance(m)).length;

/**
 * Plan of an automatic compaction of `messages` (the whole state) under a
 * token budget: keep the current turn (from the latest user message) when it
 * takes at most half the budget, else keep the last COMPACT_KEEP_RECENT
 * messages, moving the cut back so a tool group is never split. Null when
 * fewer than two conversation messages would be summarized.
 */
export function planAutoCompaction(messages: readonly BaseMessage[], budget: number): CompactionPlan | null {
  const human = lastHumanMessage(messages);
  const h = human ? messages.lastIndexOf(human) : -1;
  let splitAt: number;
  if (h >= 0 && estimateTokens(messages.slice(h)) <= budget / 2) {
    splitAt = h;
  } else {
    splitAt = Math.max(0, messages.length - COMPACT_KEEP_RECENT);
    while (splitAt > 0 && ToolMessage.isInstance(messages[splitAt]!)) splitAt--;
  }
  return countConversation(messages.slice(0, splitAt).filter((m) => !isSummaryMessage(m))) >= 2 ? { splitAt } : null;
}

/** Plan of `/compact`: everything before the command message; null when there is nothing to summarize. */
export function planCommandCompaction(messages: readonly BaseMessage[]): CompactionPlan | null {
  const last = messages.length - 1;
  if (last < 0 || !isCompactCommand(messages[last])) return null;
  return countConversation(messages.slice(0, last).filter((m) => !isSummaryMessage(m))) >= 1 ? { splitAt: last } : null;
}

const clip = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max)} … [${s.length - max} more characters]`);

/** The messages to summarize as plain text; a previous summary is included so summaries accumulate. */
export function renderTranscript(messages: readonly BaseMessage[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (isSummaryMessage(m)) lines.push(`[Summary of even earlier conversation]\n${messageText(m)}`);
    else if (SystemMessage.isInstance(m)) continue;
    else if (HumanMessage.isInstance(m)) {
      const c = m.content as unknown;
      const images = Array.isArray(c)
        ? c.filter((p: unknown) => !!p && typeof p === 'object' && String((p as { type?: unknown }).type).includes('image')).length
        : 0;
      lines.push(`User: ${clip(messageText(m), TRANSCRIPT_MESSAGE_MAX_CHARS)}${images > 0 ? ` [${images} image(s)]` : ''}`);
    } else if (AIMessage.isInstance(m)) {
      const text = messageText(m).trim();
      if (text) lines.push(`Assistant: ${clip(text, TRANSCRIPT_MESSAGE_MAX_CHARS)}`);
      for (const tc of m.tool_calls ?? [])
        lines.push(`Assistant called tool ${tc.name} with ${clip(JSON.stringify(tc.args ?? {}), TRANSCRIPT_MESSAGE_MAX_CHARS)}`);
    } else if (ToolMessage.isInstance(m)) {
      lines.push(`Tool ${m.name ?? ''} result: ${clip(messageText(m), TRANSCRIPT_MESSAGE_MAX_CHARS)}`);
    }
  }
  let text = lines.join('\n\n');
  if (text.length > TRANSCRIPT_MAX_CHARS) text = `[… earliest part omitted]\n${text.slice(-TRANSCRIPT_MAX_CHARS)}`;
  return text;
}

export interface SummaryResult {
  summary: SystemMessage;
  /** Provider usage of the summary call, when reported. */
  usage: TokenUsage | null;
  /** Conversation messages the summary replaces. */
  summarized: number;
  /** The summary call as sent and answered (recorded for replay, issue 17). */
  call: { request: BaseMessage[]; response: AIMessage };
}

/**
 * Asks the model for a summary of `older`. The call is one model call of the
 * run: with the scripted provider it plays the next scripted turn.
 */
export async function summarizeMessages(
  model: BaseChatModel,
  older: readonly BaseMessage[],
  opts: { language: PromptLanguage; signal?: AbortSignal; callOptions?: Record<string, unknown> },
): Promise<SummaryResult> {
  const t = promptTexts(opts.language);
  const request = [new SystemMessage(t.summarizerSystem), new HumanMessage(t.summarizerRequest(renderTranscript(older)))];
  const response = await model.invoke(request, {
    ...(opts.callOptions ?? {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const summarized = countConversation(older.filter((m) => !isSummaryMessage(m)));
  const text = messageText(response).trim();
  const summary = new SystemMessage({
    id: `summary-${newId()}`,
    content: text,
    name: 'conversation_summary',
    additional_kwargs: { [SUMMARY_FLAG]: true, summarized_messages: summarized },
  });
  return { summary, usage: usageOf(response as AIMessage), summarized, call: { request, response: response as AIMessage } };
}

/**
 * The state's message list after a compaction: client system messages of the
 * summarized part kept, then the summary, then the kept messages. Written with
 * a leading `RemoveMessage(REMOVE_ALL_MESSAGES)` so the order is exact.
 */
export function compactedMessages(messages: readonly BaseMessage[], plan: CompactionPlan, summary: SystemMessage): BaseMessage[] {
  const older = messages.slice(0, plan.splitAt);
  const keptSystem = older.filter((m) => SystemMessage.isInstance(m) && !isSummaryMessage(m));
  return [...keptSystem, summary, ...messages.slice(plan.splitAt)];
}
