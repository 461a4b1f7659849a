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
 * Whether `text` nests arrays/objects deeper than `maxDepth`, by one linear scan that skips string
 * contents (brackets inside strings do not count) and stops at the first level past the limit. It
 * allocates nothing and does not validate the JSON: parse it afterwards.
 */
export function jsonDepthExceeds(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > maxDepth) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
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
