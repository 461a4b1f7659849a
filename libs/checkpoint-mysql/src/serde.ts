/**
 * A checkpoint serializer that writes exactly the bytes LangGraph's `JsonPlusSerializer` writes,
 * and reads exactly what it reads, for less CPU (issue 9: serialization was ~1.3 ms of an embedded
 * run's ~19.7 ms main-thread CPU, bench/throughput README).
 *
 * Writing. The stock `_dumps` first walks the whole value to replace cycles with "[Circular]"
 * (fast-safe-stringify's `decirc`), then runs `JSON.stringify` with a replacer that encodes the
 * values JSON has no form for (undefined, Map, Set, Uint8Array…), then undoes the replacements.
 * The walk changes nothing in a value without cycles — a checkpoint has none — so here the same
 * `JSON.stringify` with the same encoding runs first, and only when it throws (a cycle, a BigInt,
 * a throwing `toJSON`) or meets what a `toJSON` writes for a cut cycle (MAYBE_CUT_CYCLE) is the
 * value handed to the stock path, which then writes what it always wrote.
 *
 * A message already written unchanged by an earlier checkpoint is not serialized again: its text
 * is reused (serde-message-cache.ts says why it cannot be stale). In the `JSON.stringify` pass an
 * array holding messages is replaced by a copy holding a marker string in place of each, and the
 * markers are then replaced by the messages' texts — the same bytes, since JSON text nests as is.
 *
 * Reading. The stock reviver rebuilds every object and array with an `await` per key and a
 * `Promise.all` per array: thousands of microtasks for a checkpoint. Here the same rebuild is
 * synchronous; only LangChain objects (`lc: 1`, messages), which `@langchain/core`'s async `load`
 * must construct, are awaited — innermost first, as the stock reviver does.
 */
import { DeltaSnapshot, JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { reviveParsed, UNSUPPORTED } from './serde-revive.js';
import { messageJson } from './serde-message-cache.js';

const encoder = new TextEncoder();

/** The `lc: 2` record of a value built by a constructor, in JsonPlusSerializer's format. */
const constructed = (name: string, method: string | null, args: unknown[]) => ({ lc: 2, type: 'constructor', id: [name], method, args, kwargs: {} });

/**
 * What JsonPlusSerializer writes in place of a value JSON cannot represent (the same cases in the
 * same order: a value matching several, say an Error subclass that is also a Set, encodes alike).
 * `value` is what JSON.stringify hands a replacer: already through its `toJSON`, if it has one.
 */
function encodeValue(_key: string, value: unknown): unknown {
  if (value === undefined) return { lc: 2, type: 'undefined' };
  // A function is tested too: the stock check for a Send (`lg_name`) does not skip one.
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return value;
  // Most of a checkpoint is plain objects and arrays (a message is one after its toJSON): none of
  // the classes below is on their prototype chain, so only the Send check applies.
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === Array.prototype) {
    if (isNotImplementedRecord(value)) throw MAYBE_CUT_CYCLE;
    return encodeSend(value) ?? value;
  }
  if (value instanceof DeltaSnapshot) return { lc: 2, type: 'delta_snapshot', value: value.value };
  if (value instanceof Set || value instanceof Map) return constructed(value.constructor.name, null, [Array.from(value as Iterable<unknown>)]);
  if (value instanceof RegExp) return constructed('RegExp', null, [value.source, value.flags]);
  if (value instanceof Error) return constructed('Error', null, [value.message]);
  const send = encodeSend(value);
  if (send) return send;
  if (value instanceof Uint8Array) return constructed('Uint8Array', 'from', [Array.from(value)]);
  return value;
}

/**
 * Thrown when a value's `toJSON` may have cut a cycle that the stock path's walk would have
 * replaced first. LangChain's `Serializable.toJSON` (messages) puts `{lc: 1, type: "not_implemented"}`
 * where its kwargs lead back to an object on their path, so JSON.stringify meets no cycle — while
 * the stock path, walking the message's fields before its toJSON runs, writes "[Circular]" there.
 * Any such record (also written for a non-serializable object, rare in a checkpoint) hands the
 * value to the stock path. Other toJSON methods met in checkpoints (Date, Command, Send) keep
 * every cycle visible to JSON.stringify, which then throws.
 */
const MAYBE_CUT_CYCLE = new Error('a toJSON may have cut a cycle');

const isNotImplementedRecord = (value: object) => (value as { type?: unknown }).type === 'not_implemented' && (value as { lc?: unknown }).lc === 1;

/** A Send (LangGraph marks one with `lg_name`) as JsonPlusSerializer writes it, or undefined for anything else. */
function encodeSend(value: object): object | undefined {
  const send = value as { lg_name?: unknown; node?: unknown; args?: unknown; timeout?: unknown };
  if (send.lg_name !== 'Send') return undefined;
  return { node: send.node, args: send.args, ...(send.timeout !== undefined ? { timeout: send.timeout } : {}) };
}

/**
 * What stands for a message in the JSON pass. Its JSON form is looked for in the output, and a
 * value holding that text itself is told apart by counting: each marker placed appears exactly
 * once (a JSON string cannot overlap another token), so more occurrences than markers placed
 * means some are the value's own, and the value is serialized again without markers.
 */
const MARKER = '\u0000agentloop:message\u0000';
const MARKER_JSON = JSON.stringify(MARKER);

const serializeMessage = (message: object) => JSON.stringify(message, encodeValue);

/** encodeValue, with the messages of an array replaced by markers and their texts pushed to `texts`. */
function encodeReusingMessages(texts: string[]): (key: string, value: unknown) => unknown {
  return (key, value) => {
    const encoded = encodeValue(key, value);
    if (encoded !== value || !Array.isArray(value)) return encoded;
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const text = messageJson(value[i], serializeMessage);
      if (text === undefined) continue;
      copy ??= value.slice();
      copy[i] = MARKER;
      texts.push(text);
    }
    return copy ?? value;
  };
}

/** `json` with each marker replaced by the next of `texts`, or undefined when the count does not match. */
function substitute(json: string, texts: string[]): string | undefined {
  const parts = json.split(MARKER_JSON);
  if (parts.length !== texts.length + 1) return undefined;
  let out = parts[0]!;
  for (let i = 0; i < texts.length; i++) out += texts[i]! + parts[i + 1]!;
  return out;
}

/** JsonPlusSerializer's formats, bytes for bytes, with a cheaper path for the values checkpoints hold. */
export class CheckpointSerializer extends JsonPlusSerializer {
  protected override _dumps(obj: unknown): Uint8Array {
    let json: string | undefined;
    try {
      const texts: string[] = [];
      json = JSON.stringify(obj, encodeReusingMessages(texts));
      if (texts.length > 0 && json !== undefined) json = substitute(json, texts) ?? JSON.stringify(obj, encodeValue);
    } catch {
      // A cycle (or anything else JSON.stringify refuses): the stock path's "[Circular]" markers
      // and its fallback text, as before.
      return super._dumps(obj);
    }
    // JSON.stringify yields undefined for a bare function or symbol; the stock path encodes that as no bytes too.
    return encoder.encode(json);
  }

  protected override async _loads(data: string): Promise<unknown> {
    const revived = await reviveParsed(JSON.parse(data));
    return revived === UNSUPPORTED ? super._loads(data) : revived;
  }
}
