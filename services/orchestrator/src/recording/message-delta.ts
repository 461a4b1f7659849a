/**
 * A model request's messages as what they add to the previous request of the same run (issue 9,
 * README "Record and replay"): from one model call to the next a run sends the same system prompt
 * and history plus the newest messages, so the recorder stores only those and a reference to the
 * shared prefix (`StoredRequestRefs.base`, expanded by the store when read).
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
  /** The prefix shared with the previous request; absent when none is (a full copy). */
  base?: { event: string; keep: number };
  /** The messages after the prefix, as recorded. */
  added: RecordedMessage[];
  /** Every message of the request, as recorded (the next request's base). */
  all: RecordedMessage[];
}

/**
 * The longest prefix `messages` shares with `previous`, then the rest. A message of the history
 * is the same object from one call to the next (LangGraph keeps the state's messages; they are not
 * changed in place), so identity settles most of them without serializing; any other message — the
 * system prompt is built anew for every call — counts as shared only when it records the same.
 */
export function messageDelta(previous: StoredMessages | undefined, messages: readonly BaseMessage[]): MessageDelta {
  const recorded: RecordedMessage[] = [];
  let keep = 0;
  let differing: RecordedMessage | undefined;
  if (previous) {
    const limit = Math.min(previous.messages.length, messages.length);
    while (keep < limit) {
      const m = messages[keep]!;
      if (m === previous.messages[keep]) {
        recorded.push(previous.json[keep]!);
      } else {
        const json = messageToJson(m);
        if (!isDeepStrictEqual(json, previous.json[keep])) {
          differing = json;
          break;
        }
        recorded.push(previous.json[keep]!);
      }
      keep++;
    }
  }
  const added = messages.slice(keep).map((m, i) => (i === 0 && differing ? differing : messageToJson(m)));
  const all = recorded.concat(added);
  return keep > 0 && previous ? { base: { event: previous.key, keep }, added, all } : { added, all };
}
