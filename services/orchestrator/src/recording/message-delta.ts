/**
 * A model request's messages as what they add to the previous request of the same run (issue 9,
 * README "Record and replay"): from one model call to the next a run sends the same history plus
 * the newest messages, so the recorder stores only those and a reference to what is shared
 * (`StoredRequestRefs.base`, expanded by the store when read). The system prompt leads every
 * request and names the current second, so it often differs while all the history after it is
 * shared: then the request keeps its own system prompt and shares the rest.
 */
import { isDeepStrictEqual } from 'node:util';
import type { BaseMessage } from '@langchain/core/messages';
import { messageToJson } from '../serialize.js';
import type { RecordedMessage } from './format.js';

/** A request the recorder has stored: its event key, the messages as sent and as recorded. */
export interface StoredMessages {
  key: string;
  messages: readonly BaseMessage[];
  json: readonly RecordedMessage[];
}

export interface MessageDelta {
  /** Messages `head` to `keep` (exclusive) are the previous request's; absent when none are (a full copy). */
  base?: { event: string; keep: number; head?: number };
  /** The request's own messages: its first `head`, then those after `keep`. */
  added: RecordedMessage[];
  /** Every message of the request, as recorded (the next request's base). */
  all: RecordedMessage[];
}

interface SharedRun {
  /** Index of the first message that differs (or the end of the shorter list). */
  end: number;
  /** The shared messages, as recorded. */
  json: RecordedMessage[];
  /** The message at `end`, as recorded, when it was serialized to compare it. */
  differing?: RecordedMessage;
}

/**
 * The messages from `start` that `messages` shares with `previous`. A message of the history is the
 * same object from one call to the next (LangGraph keeps the state's messages; they are not changed
 * in place), so identity settles most of them without serializing; any other one counts as shared
 * only when it records the same.
 */
function sharedFrom(previous: StoredMessages, messages: readonly BaseMessage[], start: number): SharedRun {
  const json: RecordedMessage[] = [];
  const limit = Math.min(previous.messages.length, messages.length);
  for (let i = start; i < limit; i++) {
    const m = messages[i]!;
    if (m !== previous.messages[i]) {
      const own = messageToJson(m);
      if (!isDeepStrictEqual(own, previous.json[i])) return { end: i, json, differing: own };
    }
    json.push(previous.json[i]!);
  }
  return { end: Math.max(start, limit), json };
}

const recordFrom = (messages: readonly BaseMessage[], from: number, first?: RecordedMessage): RecordedMessage[] =>
  messages.slice(from).map((m, i) => (i === 0 && first ? first : messageToJson(m)));

export function messageDelta(previous: StoredMessages | undefined, messages: readonly BaseMessage[]): MessageDelta {
  if (!previous) {
    const all = recordFrom(messages, 0);
    return { added: all, all };
  }
  const prefix = sharedFrom(previous, messages, 0);
  if (prefix.end > 0) {
    const added = recordFrom(messages, prefix.end, prefix.differing);
    return { base: { event: previous.key, keep: prefix.end }, added, all: prefix.json.concat(added) };
  }
  const system = prefix.differing;
  const after = system ? sharedFrom(previous, messages, 1) : undefined;
  if (system && after && after.end > 1) {
    const rest = recordFrom(messages, after.end, after.differing);
    return { base: { event: previous.key, keep: after.end, head: 1 }, added: [system, ...rest], all: [system, ...after.json, ...rest] };
  }
  const all = recordFrom(messages, 0, system);
  return { added: all, all };
}
