import { isBaseMessage, coerceMessageLikeToMessage, type BaseMessage, AIMessage, ToolMessage } from '@langchain/core/messages';
import { RunInputError } from './errors.js';

/** A message in the LangGraph Platform JSON shape (what the SDK and agent-chat-ui read). */
export function messageToJson(m: BaseMessage): Record<string, unknown> {
  const out: Record<string, unknown> = {
    type: m.getType(),
    content: m.content,
    id: m.id ?? null,
    name: m.name ?? null,
    additional_kwargs: m.additional_kwargs ?? {},
    response_metadata: m.response_metadata ?? {},
  };
  if (AIMessage.isInstance(m)) {
    out.tool_calls = m.tool_calls ?? [];
    out.invalid_tool_calls = m.invalid_tool_calls ?? [];
    out.usage_metadata = m.usage_metadata ?? null;
  }
  if (ToolMessage.isInstance(m)) {
    out.tool_call_id = m.tool_call_id;
    out.status = m.status ?? 'success';
  }
  return out;
}

/**
 * Deep-converts LangChain messages inside a state/update object to JSON. Every streamed chunk and
 * every run's final values go through here, so it copies with plain loops rather than through
 * `Object.entries`/`fromEntries` pairs (~0.1 ms of a 3-step run in the bench/throughput profile).
 * Same result: own enumerable string keys in order, a `__proto__` key kept as an own property.
 */
export function toJsonValue(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (isBaseMessage(v)) return messageToJson(v);
  if (Array.isArray(v)) {
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = toJsonValue(v[i]);
    return out;
  }
  if (v.constructor !== Object && v.constructor !== undefined) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = toJsonValue((v as Record<string, unknown>)[k]);
    if (k === '__proto__') Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
    else out[k] = x;
  }
  return out;
}

/**
 * The run's `input.messages`: role/content dicts ({role:"user"}), LangGraph
 * dicts ({type:"human"}) or a single string. Anything else is a clear error.
 */
export function parseInputMessages(input: unknown): BaseMessage[] {
  if (input === null || input === undefined) return [];
  if (typeof input !== 'object' || Array.isArray(input))
    throw new RunInputError('input must be an object such as {"messages":[{"role":"user","content":"..."}]}');
  const raw = (input as Record<string, unknown>).messages;
  if (raw === undefined) return [];
  const list = typeof raw === 'string' ? [{ role: 'user', content: raw }] : raw;
  if (!Array.isArray(list)) throw new RunInputError('input.messages must be an array of messages');
  return list.map((m, i) => {
    try {
      if (typeof m === 'string') return coerceMessageLikeToMessage({ role: 'user', content: m });
      if (m && typeof m === 'object') {
        const o = m as Record<string, unknown>;
        if (typeof o.type === 'string' && !('role' in o)) {
          const role = o.type === 'human' ? 'user' : o.type === 'ai' ? 'assistant' : o.type;
          return coerceMessageLikeToMessage({ ...o, role } as never);
        }
        return coerceMessageLikeToMessage(o as never);
      }
      throw new Error('not an object');
    } catch (err) {
      throw new RunInputError(`input.messages[${i}] is not a valid message: ${(err as Error).message}`, { cause: err });
    }
  });
}
