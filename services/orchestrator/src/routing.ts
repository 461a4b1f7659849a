import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { MODEL_SLOTS, type ModelSlot } from './models/registry.js';
import { RunInputError } from './errors.js';

/** Which node asks for a model. */
export type RouteNode = 'agent' | 'finalize' | 'compact';

/** Why a slot was chosen; logged and written to the AI message's response_metadata. */
export type RouteReason = 'preference' | 'images' | 'code' | 'complex' | 'default' | 'finalize' | 'compact';

export interface RouteDecision {
  slot: ModelSlot;
  reason: RouteReason;
}

export interface RouteInput {
  node: RouteNode;
  /** User preference: run config `configurable.model_pref` first, then state `model_pref`. */
  preference?: ModelSlot | null;
  messages: readonly BaseMessage[];
  /** Slots the deployment has configured. */
  configured: ReadonlySet<ModelSlot>;
}

/** Messages scanned for code context. */
export const CODE_CONTEXT_WINDOW = 6;
/** A latest user message at least this long counts as a complex task. */
export const COMPLEX_TASK_CHARS = 2_000;

const CODE_FENCE = /```/;
// Extensions that are unambiguous in prose (no single-letter ".m"/".r" that match "a.m").
const CODE_FILE =
  /[\w\-./]*\w\.(?:py|ipynb|js|mjs|cjs|ts|tsx|jsx|java|kt|kts|scala|go|rs|c|h|cc|cpp|cxx|hpp|cs|rb|php|swift|sh|bash|zsh|ps1|sql|lua|pl|dart|vue|svelte)\b/i;
const COMPLEX_EN =
  /\b(?:analy[sz]e|analysis|step[- ]by[- ]step|prove|proof|derive|trade-?offs?|compare|comparison|evaluate|architecture|strategy|root cause|in[- ]depth|reasoning|think through)\b/i;
const COMPLEX_ZH = /分析|推理|证明|推导|比较|对比|评估|规划|方案|架构|深入|为什么|逐步/;

/** Plain text of a message's content (text parts of a multimodal content array). */
export function messageText(m: BaseMessage): string {
  const c = m.content as unknown;
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c
    .map((p: unknown) => {
      if (typeof p === 'string') return p;
      if (p && typeof p === 'object' && (p as { type?: unknown }).type === 'text') return String((p as { text?: unknown }).text ?? '');
      return '';
    })
    .join('\n');
}

/** The latest human message (the user's current request), if any. */
export function lastHumanMessage(messages: readonly BaseMessage[]): HumanMessage | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (HumanMessage.isInstance(m)) return m;
  }
  return undefined;
}

const IMAGE_PART_TYPES = new Set(['image_url', 'image', 'input_image']);

const hasImagePart = (m: BaseMessage): boolean => {
  const c = m.content as unknown;
  return Array.isArray(c) && c.some((p: unknown) => !!p && typeof p === 'object' && IMAGE_PART_TYPES.has(String((p as { type?: unknown }).type)));
};

/**
 * True when the latest human message carries an image part, or a tool result since it does (an
 * MCP tool's image, graph/tool-media.ts): the model that reads it should be one that sees it.
 */
export function hasImages(messages: readonly BaseMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (HumanMessage.isInstance(m)) return hasImagePart(m);
    if (ToolMessage.isInstance(m) && hasImagePart(m)) return true;
  }
  return false;
}

/** Code fences or code file names in the last CODE_CONTEXT_WINDOW messages (tool call arguments included). */
export function hasCodeContext(messages: readonly BaseMessage[]): boolean {
  const recent = messages.filter((m) => !SystemMessage.isInstance(m)).slice(-CODE_CONTEXT_WINDOW);
  return recent.some((m) => {
    const texts = [messageText(m)];
    if (AIMessage.isInstance(m)) for (const tc of m.tool_calls ?? []) texts.push(JSON.stringify(tc.args ?? {}));
    return texts.some((t) => CODE_FENCE.test(t) || CODE_FILE.test(t));
  });
}

/** A long latest user message, or one asking for analysis/reasoning (English or Chinese keywords). */
export function isComplexTask(messages: readonly BaseMessage[]): boolean {
  const human = lastHumanMessage(messages);
  if (!human) return false;
  const text = messageText(human);
  return text.length >= COMPLEX_TASK_CHARS || COMPLEX_EN.test(text) || COMPLEX_ZH.test(text);
}

/**
 * Picks the model slot for a node (seed 001 §1.7): the user's preference, then
 * images (the user's, or a tool result's since) → vision, code context → code, a complex task → reasoning, else base;
 * finalize → chat. A content rule fires only when its slot is configured (the
 * seed does this for vision; doing it for every rule lets a cheaper rule further
 * down still apply). A preferred slot that is not configured is returned as is:
 * the registry falls back to base for it.
 */
export function resolveModelSlot(input: RouteInput): RouteDecision {
  if (input.preference) return { slot: input.preference, reason: 'preference' };
  const has = (s: ModelSlot) => input.configured.has(s);
  switch (input.node) {
    case 'finalize':
      return { slot: has('chat') ? 'chat' : 'base', reason: 'finalize' };
    case 'compact':
      return { slot: 'base', reason: 'compact' };
    case 'agent':
      if (has('vision') && hasImages(input.messages)) return { slot: 'vision', reason: 'images' };
      if (has('code') && hasCodeContext(input.messages)) return { slot: 'code', reason: 'code' };
      if (has('reasoning') && isComplexTask(input.messages)) return { slot: 'reasoning', reason: 'complex' };
      return { slot: 'base', reason: 'default' };
  }
}

/** Validates a `model_pref` value (run config or state); null when absent. */
export function parseModelPref(v: unknown, where: string): ModelSlot | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string' && (MODEL_SLOTS as readonly string[]).includes(v)) return v as ModelSlot;
  throw new RunInputError(`${where} must be one of ${MODEL_SLOTS.join(', ')}, got ${JSON.stringify(v)}`);
}
