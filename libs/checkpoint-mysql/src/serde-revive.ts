/**
 * The values JsonPlusSerializer's reader rebuilds from parsed JSON, rebuilt without an `await` per
 * key (serde.ts says why). The rules are the stock reviver's, innermost value first:
 *
 * - `{lc: 2, type: "undefined"}` → undefined; `{lc: 2, type: "delta_snapshot", value}` → a DeltaSnapshot;
 * - `{lc: 2, type: "constructor"}` → a Set, Map, RegExp, Error or Uint8Array when the record is one
 *   of the closed set the writer produces, else the record itself (never a call of what it names);
 * - `{lc: 1, type: "constructor", id: [...]}` → `@langchain/core`'s `load` of it (a message…);
 * - any other object or array → a fresh copy of its revived entries.
 */
import { load } from '@langchain/core/load';
import { DeltaSnapshot } from '@langchain/langgraph-checkpoint';

type Rec = Record<string, unknown>;

/**
 * A LangChain object still to be loaded, and where its value goes: `load` is async, so the
 * synchronous pass leaves this in its place and fills the place once loaded.
 */
interface PendingLoad {
  record: Rec;
  into: Rec | unknown[] | undefined;
  key: string | number;
}

/**
 * Thrown by the synchronous pass for what it does not rebuild itself: an `lc: 2` record or a
 * `__proto__` key with a LangChain object inside (where the stock reviver's order of construction
 * would have to be reproduced). The caller then runs the stock reviver. Checkpoints have neither.
 */
export const UNSUPPORTED = Symbol('unsupported');

const hasId = (r: Rec, name: string) => Array.isArray(r.id) && r.id.length === 1 && r.id[0] === name;
const noMethod = (r: Rec) => r.method === undefined || r.method === null;
const oneArrayArg = (r: Rec): r is Rec & { args: [unknown[]] } => Array.isArray(r.args) && r.args.length === 1 && Array.isArray(r.args[0]);
const isByte = (n: unknown) => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 255;

/** A Set, Map, RegExp, Error or Uint8Array from its record, or undefined when the record is not a valid one. */
function constructFrom(r: Rec): unknown {
  if (hasId(r, 'Set') && noMethod(r)) return oneArrayArg(r) ? new Set(r.args[0]) : undefined;
  if (hasId(r, 'Map') && noMethod(r)) {
    if (!oneArrayArg(r) || !r.args[0].every((e) => Array.isArray(e) && e.length === 2)) return undefined;
    return new Map(r.args[0] as Array<[unknown, unknown]>);
  }
  if (hasId(r, 'RegExp') && noMethod(r)) {
    const args = r.args;
    if (!Array.isArray(args) || args.length !== 2 || typeof args[0] !== 'string' || typeof args[1] !== 'string') return undefined;
    try {
      return new RegExp(args[0], args[1]);
    } catch {
      return undefined;
    }
  }
  if (hasId(r, 'Error') && noMethod(r)) {
    const args = r.args;
    return Array.isArray(args) && args.length === 1 && typeof args[0] === 'string' ? new Error(args[0]) : undefined;
  }
  if (hasId(r, 'Uint8Array') && (noMethod(r) || r.method === 'from')) {
    return oneArrayArg(r) && r.args[0].every(isByte) ? new Uint8Array(r.args[0] as number[]) : undefined;
  }
  return undefined;
}

/** Revives `value` (held at `into[key]`), queueing the LangChain objects it holds innermost first. */
function reviveSync(value: unknown, into: Rec | unknown[] | undefined, key: string | number, loads: PendingLoad[]): unknown {
  if (!value || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = reviveSync(value[i], out, i, loads);
    return out;
  }
  const queuedBefore = loads.length;
  const out: Rec = {};
  for (const [k, v] of Object.entries(value)) {
    const revived = reviveSync(v, out, k, loads);
    if (k === '__proto__' && loads.length > queuedBefore) throw UNSUPPORTED;
    out[k] = revived;
  }
  if (out.lc === 2 && (out.type === 'undefined' || out.type === 'delta_snapshot' || out.type === 'constructor')) {
    if (loads.length > queuedBefore) throw UNSUPPORTED;
    if (out.type === 'undefined') return undefined;
    if (out.type === 'delta_snapshot' && Object.prototype.hasOwnProperty.call(out, 'value')) return new DeltaSnapshot(out.value);
    if (out.type === 'constructor') return constructFrom(out) ?? out;
  }
  if (out.lc === 1 && out.type === 'constructor' && Array.isArray(out.id)) {
    loads.push({ record: out, into, key });
    return out;
  }
  return out;
}

/**
 * What JsonPlusSerializer's reader returns for `parsed` (the result of `JSON.parse`), or
 * `UNSUPPORTED` when the stock reviver must do it.
 */
export async function reviveParsed(parsed: unknown): Promise<unknown> {
  const loads: PendingLoad[] = [];
  let result: unknown;
  try {
    result = reviveSync(parsed, undefined, '', loads);
  } catch (err) {
    if (err === UNSUPPORTED) return UNSUPPORTED;
    throw err;
  }
  // Innermost first: an outer object is serialized for `load` with its inner ones already loaded,
  // as the stock reviver does.
  for (const { record, into, key } of loads) {
    const loaded: unknown = await load(JSON.stringify(record));
    if (into === undefined) result = loaded;
    else (into as Rec)[key] = loaded;
  }
  return result;
}
