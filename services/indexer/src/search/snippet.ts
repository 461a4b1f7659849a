import { isSpacedScript } from './tokenize.js';

/** Characters shown on each side of the first match in a snippet. */
export const SNIPPET_RADIUS = 160;

const WORD_CHAR = /[\p{L}\p{N}]/u;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Finds query terms in text: case-insensitive; terms of spaced scripts only as whole words. */
export interface TermMatcher {
  regex: RegExp;
  wholeWords: boolean;
}

/**
 * A matcher for any of `terms` ("cat" does not match "category" when
 * `wholeWords`). Word boundaries are checked in code: a lookbehind on
 * \p{L} with the i and u flags makes V8 compile slowly.
 */
export function termsPattern(terms: readonly string[], wholeWords = true): TermMatcher | undefined {
  const distinct = [...new Set(terms.map((t) => t.trim()).filter((t) => t !== ''))].sort((a, b) => b.length - a.length);
  if (distinct.length === 0) return undefined;
  const regex = new RegExp(distinct.map((t) => escapeRegExp(t).replace(/\s+/g, '\\s+')).join('|'), 'giu');
  return { regex, wholeWords };
}

/** True when the match at `index` is acceptable (whole word when required for its script). */
function accepted(m: TermMatcher, text: string, index: number, match: string): boolean {
  if (!m.wholeWords || !isSpacedScript(match)) return true;
  const before = index > 0 ? text[index - 1] : undefined;
  const after = text[index + match.length];
  return !(before !== undefined && WORD_CHAR.test(before)) && !(after !== undefined && WORD_CHAR.test(after));
}

/** Index of the first accepted match, or -1. */
export function firstMatch(m: TermMatcher | undefined, text: string): number {
  if (!m) return -1;
  m.regex.lastIndex = 0;
  for (let r = m.regex.exec(text); r; r = m.regex.exec(text)) {
    if (accepted(m, text, r.index, r[0])) return r.index;
    if (r[0] === '') m.regex.lastIndex++;
  }
  return -1;
}

/** Wraps every accepted match in `**`; adjacent marks merge (**机器****学习** → **机器学习**). */
export function markMatches(text: string, m: TermMatcher | undefined): string {
  if (!m) return text;
  m.regex.lastIndex = 0;
  return text.replace(m.regex, (match: string, offset: number) => (accepted(m, text, offset, match) ? `**${match}**` : match)).replace(/\*\*\*\*/g, '');
}

/**
 * A one-line passage of `text` around the first match of the first matcher
 * that matches (most specific first), with every term marked.
 */
export function makeSnippet(text: string, focus: readonly (TermMatcher | undefined)[], mark: TermMatcher | undefined): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  let at = -1;
  for (const f of focus) {
    at = firstMatch(f, flat);
    if (at >= 0) break;
  }
  if (at < 0) at = 0;
  let start = Math.max(0, at - SNIPPET_RADIUS);
  let end = Math.min(flat.length, at + SNIPPET_RADIUS * 2);
  // Do not cut a word of a spaced script in half.
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    if (space >= 0 && space < at && space - start < 30) start = space + 1;
  }
  if (end < flat.length) {
    const space = flat.lastIndexOf(' ', end);
    if (space > at && end - space < 30) end = space;
  }
  const body = markMatches(flat.slice(start, end), mark);
  return `${start > 0 ? '…' : ''}${body}${end < flat.length ? '…' : ''}`;
}
