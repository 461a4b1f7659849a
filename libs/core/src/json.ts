import { InvalidArgumentError } from './errors.js';

/**
 * Deepest nesting of arrays and objects accepted in JSON that arrives from outside (request bodies,
 * gRPC `*_json` fields). Everything downstream — the store's `JSON.stringify`, checkpoint
 * serializers, LangChain message handling, the approval scanners — walks documents recursively, so
 * a 10,000-deep array ends as a `RangeError` (a 500) somewhere past the gateway. 64 is far beyond
 * what a LangGraph payload needs (messages → content blocks → tool arguments is about ten levels,
 * a JSON Schema in a config a few more) and keeps every recursive walker far from the stack limit.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Most members (keys of an object, items of an array) one container may have in JSON from outside.
 * Building a 100,000-key object is what costs: JSON.parse takes ~80 ms for it on a 2-core machine
 * and every later walk as much again, all on the event loop (issue 18: a "metadata bomb" stalled
 * the server). No LangGraph payload comes near 10,000 members in one object or array.
 */
export const MAX_JSON_MEMBERS = 10_000;

/**
 * Whether `text` nests arrays/objects deeper than `maxDepth`, by one linear scan that skips string
 * contents (brackets inside strings do not count) and stops at the first level past the limit. It
 * allocates nothing and does not validate the JSON: parse it afterwards.
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  return jsonShapeExceeds(text, maxDepth, Number.POSITIVE_INFINITY) === 'depth';
}

/**
 * Which limit `text` breaks, if any: nesting deeper than `maxDepth`, or a container with more than
 * `maxMembers` members (counted by its top-level commas). One linear scan like jsonDepthExceeds,
 * stopping at the first breach; it does not validate the JSON.
 */
export function jsonShapeExceeds(text: string, maxDepth: number, maxMembers: number): 'depth' | 'members' | undefined {
  // commas[d]: commas seen so far in the container open at depth d (members = commas + 1).
  const commas = new Uint32Array(Math.min(maxDepth, 1024) + 2);
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > maxDepth) return 'depth';
      commas[depth] = 0;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
    else if (c === 0x2c /* , */ && depth > 0 && ++commas[depth]! >= maxMembers) return 'members';
  }
  return undefined;
}

/** JSON nested deeper than the limit (see MAX_JSON_DEPTH). */
export class JsonDepthError extends InvalidArgumentError {
  override name = 'JsonDepthError';
  readonly maxDepth: number;
  constructor(maxDepth: number) {
    super(`JSON is nested deeper than ${maxDepth} levels of arrays and objects (the limit); flatten the document`);
    this.maxDepth = maxDepth;
  }
}

/**
 * `JSON.parse` with a nesting limit checked first (jsonDepthExceeds): a too-deep document throws a
 * JsonDepthError before any parsing; invalid JSON throws JSON.parse's SyntaxError as usual.
 */
export function parseJsonWithin(text: string, maxDepth: number = MAX_JSON_DEPTH): unknown {
  if (jsonDepthExceeds(text, maxDepth)) throw new JsonDepthError(maxDepth);
  return JSON.parse(text) as unknown;
}
