/**
 * The serialized JSON of LangChain messages, kept per message object across the checkpoints of a
 * run (issue 9). A checkpoint stores every channel value, so the messages channel is written whole
 * at every step: a 3-turn run's 7 checkpoints serialized its first message 7 times, each time
 * through the message's `Serializable.toJSON` (a walk of its kwargs, aliases and secrets) — about
 * two thirds of `_dumps`' time (bench/throughput README).
 *
 * Why a cached text cannot go stale. `toJSON` writes, for each key of `lc_kwargs`, the message's
 * own field of that name (else the kwarg), plus its class's constant aliases and id. An entry
 * keeps those keys and values, and is used only while the message still has the same keys bound
 * to the same values (`===`): a reassigned field — what LangGraph's `messagesStateReducer` does to
 * a message without an id when it enters the state (`m.id = uuid`), after that message was
 * already written as a task's write — makes a fresh text. What the check cannot see is a change
 * *inside* a field's object (a pushed tool call, an edited `additional_kwargs` entry). Nothing
 * does that to a message once a node has returned it: LangGraph's reducers build new arrays and
 * only assign `id`, and AgentLoop builds new messages rather than editing them (its reads of a
 * message, services/orchestrator/src/serialize.ts, copy fields into new objects). A node that
 * edited a message of its state in place would be writing state behind its reducer, which
 * LangGraph does not support either (the edit would reach no write and no checkpoint of its own).
 *
 * Entries are weak: a message no checkpoint holds any longer is collected with its text.
 */
import { BaseMessage } from '@langchain/core/messages';

interface Entry {
  /** The message's JSON as the serializer writes it. */
  text: string;
  /** What `toJSON` read: the keys of `lc_kwargs` and their values, flattened as key, value, key, value… */
  fields: unknown[];
}

const entries = new WeakMap<object, Entry>();

type Fields = Record<string, unknown>;

/** The value `Serializable.toJSON` writes for `key`: the message's field, else its kwarg. */
const fieldOf = (message: Fields, kwargs: Fields, key: string) => (key in message ? message[key] : kwargs[key]);

function readFields(message: BaseMessage): unknown[] {
  const kwargs = message.lc_kwargs as Fields;
  const fields: unknown[] = [];
  for (const key of Object.keys(kwargs)) fields.push(key, fieldOf(message as unknown as Fields, kwargs, key));
  return fields;
}

function unchanged(message: BaseMessage, fields: unknown[]): boolean {
  const kwargs = message.lc_kwargs as Fields;
  const keys = Object.keys(kwargs);
  if (keys.length * 2 !== fields.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (fields[2 * i] !== key || fields[2 * i + 1] !== fieldOf(message as unknown as Fields, kwargs, key)) return false;
  }
  return true;
}

/**
 * The JSON of `value` when it is a message, by `serialize` (called only when no cached text is
 * still valid), or undefined for anything else or when `serialize` throws — the caller then
 * serializes the message in place, with whatever fallback it has.
 */
export function messageJson(value: unknown, serialize: (message: BaseMessage) => string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = entries.get(value);
  if (entry && unchanged(value as BaseMessage, entry.fields)) return entry.text;
  if (!BaseMessage.isInstance(value)) return undefined;
  const fields = readFields(value);
  let text: string;
  try {
    text = serialize(value);
  } catch {
    return undefined;
  }
  entries.set(value, { text, fields });
  return text;
}
