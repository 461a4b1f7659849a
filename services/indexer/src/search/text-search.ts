import type { FileHandle } from 'node:fs/promises';
import { firstMatch, markMatches, termsPattern, type TermMatcher } from './snippet.js';

export interface LineMatch {
  /** 1-based line number. */
  line: number;
  /** Phrase found: 10, plus one per distinct query term on the line. */
  score: number;
  before?: string;
  text: string;
  after?: string;
}

export interface TextSearchOutcome {
  matches: LineMatch[];
  /** Matching lines in the file. */
  total: number;
}

/** Characters of a long line shown around its first match. */
const LINE_RADIUS = 200;
/**
 * Lines longer than this are searched in pieces of this size (same line
 * number): a file that is one 100 MB line would otherwise be buffered whole and
 * scanned once per query word in one synchronous step. A phrase straddling two
 * pieces is missed.
 */
export const MAX_LINE_CHARS = 64 * 1024;

/**
 * Live, line-by-line search of a text file (seed 001 §1.2): case-insensitive;
 * a line matches when it holds the whole query, or, for a query of several
 * words, any of them (lines holding the phrase or more words rank first);
 * each match comes with one line of context before and after, matches marked.
 * Memory stays bounded: only the best `maxResults` lines are kept.
 */
export async function searchTextFile(file: FileHandle, query: string, maxResults: number, signal?: AbortSignal): Promise<TextSearchOutcome> {
  const phrase = query.trim().toLowerCase().replace(/\s+/g, ' ');
  const terms = [...new Set(phrase.split(' ').filter((t) => t !== ''))];
  const mark = termsPattern([phrase, ...terms], false);
  const best: LineMatch[] = [];
  let pending: LineMatch[] = [];
  let previous: string | undefined;
  let total = 0;
  let n = 0;

  const stream = file.createReadStream({ encoding: 'utf8', autoClose: false, start: 0 });
  try {
    for await (const [raw, continued] of boundedLines(stream as AsyncIterable<string>, MAX_LINE_CHARS)) {
      if (signal?.aborted) throw signal.reason;
      if (!continued) n++;
      for (const p of pending) p.after = clip(raw, mark);
      pending = [];
      const lower = raw.toLowerCase();
      let score = 0;
      if (phrase !== '' && lower.includes(phrase)) score += 10;
      if (terms.length > 1) for (const t of terms) if (lower.includes(t)) score += 1;
      if (score > 0) {
        total++;
        if (best.length < maxResults || score > (best[best.length - 1]?.score ?? 0)) {
          const m: LineMatch = { line: n, score, text: clip(raw, mark), ...(previous !== undefined ? { before: clip(previous, mark) } : {}) };
          best.push(m);
          best.sort((a, b) => b.score - a.score || a.line - b.line);
          if (best.length > maxResults) best.pop();
          if (best.includes(m)) pending.push(m);
        }
      }
      previous = raw;
    }
  } finally {
    stream.destroy();
  }
  return { matches: best, total };
}

/** The line (cut around its first match when long) with matches marked. */
function clip(line: string, mark: TermMatcher | undefined): string {
  let text = line;
  if (line.length > LINE_RADIUS * 2) {
    const at = Math.max(0, firstMatch(mark, line));
    const start = Math.max(0, at - LINE_RADIUS);
    const end = Math.min(line.length, at + LINE_RADIUS);
    text = `${start > 0 ? '…' : ''}${line.slice(start, end)}${end < line.length ? '…' : ''}`;
  }
  return markMatches(text, mark);
}

/**
 * Lines of a text stream (`\n`, `\r\n` or `\r` end one, as readline splits
 * them) as [text, continued]: a line longer than `maxChars` comes in pieces,
 * the later ones with `continued` true. Memory stays O(chunk + maxChars).
 */
export async function* boundedLines(chunks: AsyncIterable<string>, maxChars: number): AsyncGenerator<[string, boolean]> {
  let partial = '';
  /** The line in `partial` already had pieces emitted. */
  let partialContinued = false;
  const pieces = function* (line: string, continued: boolean): Generator<[string, boolean]> {
    if (line.length <= maxChars) {
      yield [line, continued];
      return;
    }
    for (let i = 0; i < line.length; i += maxChars) yield [line.slice(i, i + maxChars), continued || i > 0];
  };
  const breaks = /\r\n|\n|\r/g;
  for await (const chunk of chunks) {
    const text = partial + chunk;
    let start = 0;
    breaks.lastIndex = 0;
    for (let m = breaks.exec(text); m; m = breaks.exec(text)) {
      // A "\r" at the very end may be the first half of "\r\n": decide with the next chunk.
      if (m[0] === '\r' && m.index === text.length - 1) break;
      yield* pieces(text.slice(start, m.index), partialContinued && start === 0);
      start = m.index + m[0].length;
    }
    if (start > 0) partialContinued = false;
    partial = text.slice(start);
    // Emit full pieces of an unfinished long line now; keep the rest (and a trailing "\r").
    const keep = partial.endsWith('\r') ? 1 : 0;
    while (partial.length - keep > maxChars) {
      yield [partial.slice(0, maxChars), partialContinued];
      partialContinued = true;
      partial = partial.slice(maxChars);
    }
  }
  if (partial.endsWith('\r')) partial = partial.slice(0, -1);
  if (partial !== '') yield* pieces(partial, partialContinued);
}
