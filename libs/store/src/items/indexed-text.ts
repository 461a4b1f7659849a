/**
 * The text of an item that a query matches and an embedding stands for (issue 12). LangGraph's
 * `index` argument: false = not indexed; a list of field paths ("fact", "a.b", "tags[*]",
 * "steps[0]"); absent = the whole value.
 */
import type { JsonObject } from '../types.js';

/** Longest indexed text kept: embeddings endpoints refuse long inputs, and a memory is short. */
export const MAX_INDEXED_TEXT = 8000;

function stringLeaves(v: unknown, out: string[]): void {
  if (typeof v === 'string') out.push(v);
  else if (typeof v === 'number' || typeof v === 'boolean') out.push(String(v));
  else if (Array.isArray(v)) v.forEach((x) => stringLeaves(x, out));
  else if (v !== null && typeof v === 'object') Object.values(v).forEach((x) => stringLeaves(x, out));
}

/** The values at a path: "a.b", "list[*]" (every element), "list[2]". */
function atPath(value: unknown, path: string): unknown[] {
  let current: unknown[] = [value];
  for (const part of path.split('.')) {
    const m = /^([^[\]]*)((?:\[(?:\*|\d+)\])*)$/.exec(part);
    if (!m) return [];
    const [, name, brackets] = m;
    current = current.flatMap((v) => (name && v !== null && typeof v === 'object' && !Array.isArray(v) ? [(v as JsonObject)[name]] : name ? [] : [v]));
    for (const b of brackets?.match(/\[(\*|\d+)\]/g) ?? []) {
      const index = b.slice(1, -1);
      current = current.flatMap((v) => (Array.isArray(v) ? (index === '*' ? v : [v[Number(index)]]) : []));
    }
  }
  return current.filter((v) => v !== undefined);
}

/** The indexed text of `value`, or null when the item is not indexed. */
export function indexedText(value: JsonObject, index: false | readonly string[] | null | undefined): string | null {
  if (index === false) return null;
  const parts: string[] = [];
  const sources = index && index.length > 0 ? index.flatMap((p) => atPath(value, p)) : [value];
  sources.forEach((v) => stringLeaves(v, parts));
  return parts.join('\n').slice(0, MAX_INDEXED_TEXT);
}
