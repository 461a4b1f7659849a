import type { BaseMessage } from '@langchain/core/messages';
import { lastHumanMessage, messageText } from './routing.js';

export type MentionKind = 'tool' | 'skill' | 'agent';

/**
 * `@name` with letters, digits, `_` and `-` (seed 001 §2.2's `@([\w\-]+)`,
 * Unicode-aware so `@助手` works). Not preceded by a word character, `.` or
 * `@`, so the domain of an e-mail address is not a mention.
 */
const MENTION = /(?<![\p{L}\p{N}_.@-])@([\p{L}\p{N}_-]+)/gu;

/** Substrings that make an unknown mention an agent (seed 001 §2.1). */
export const AGENT_KEYWORDS = ['delegated agent', 'agent', '助手', '代理'] as const;

/** Agent names accepted by default (config `AGENT_NAMES`). */
export const DEFAULT_AGENT_NAMES = ['general'] as const;

/** Mention names in order of first appearance, without duplicates. */
export function parseMentions(text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(MENTION)) {
    const name = m[1]!.replace(/-+$/u, '');
    if (name) seen.add(name);
  }
  return [...seen];
}

/**
 * Mentions parsed per message object: the agent and tools nodes ask on every step, and within a
 * run the state keeps the same message objects from step to step (issue 9: nothing per call that
 * can be done once). Keyed by the object and its text, so a message whose content changed is parsed again.
 */
const parsedMentions = new WeakMap<BaseMessage, { text: string; mentions: readonly string[] }>();

/** Mentions of the latest human message (the user's current request). */
export function mentionsOf(messages: readonly BaseMessage[]): string[] {
  const human = lastHumanMessage(messages);
  if (!human) return [];
  const text = messageText(human);
  let known = parsedMentions.get(human);
  if (known?.text !== text) {
    known = { text, mentions: parseMentions(text) };
    parsedMentions.set(human, known);
  }
  return [...known.mentions];
}

/** What a mention may refer to: known tool names, skill names, agent names. */
export interface MentionCatalog {
  tools: ReadonlySet<string>;
  skills: ReadonlySet<string>;
  /** Compared case-insensitively. */
  agents: ReadonlySet<string>;
}

/**
 * Seed 001 §2.1, in priority order: a known tool, then a known skill, then an
 * agent (a configured agent name, or a name containing an agent keyword);
 * anything else is treated as a tool (perhaps misspelled or not loaded yet).
 */
export function classifyMention(mention: string, catalog: MentionCatalog): MentionKind {
  const name = mention.replace(/^@+/u, '');
  if (catalog.tools.has(name)) return 'tool';
  if (catalog.skills.has(name)) return 'skill';
  const lower = name.toLowerCase();
  if ([...catalog.agents].some((a) => a.toLowerCase() === lower)) return 'agent';
  if (AGENT_KEYWORDS.some((k) => lower.includes(k))) return 'agent';
  return 'tool';
}

export interface ClassifiedMentions {
  tools: string[];
  skills: string[];
  agents: string[];
}

export function classifyMentions(mentions: readonly string[], catalog: MentionCatalog): ClassifiedMentions {
  const out: ClassifiedMentions = { tools: [], skills: [], agents: [] };
  for (const m of mentions) {
    const kind = classifyMention(m, catalog);
    (kind === 'tool' ? out.tools : kind === 'skill' ? out.skills : out.agents).push(m);
  }
  return out;
}
