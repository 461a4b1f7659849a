import type { FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
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
 * Live, line-by-line search of a text file (seed 001 §1.2): case-insensitive;
 * a line matches when it holds the whole query, or, for a query of several
 * words, any of them (lines holding the phrase or more words rank first);
 * each match comes with one line of context before and after, matches marked.
 * Memory stays bounded: only the best `maxResults` lines are kept.
 */
export async function searchTextFile(
  file: FileHandle,
  query: string,
  maxResults: number,
  signal?: AbortSignal,
): Promise<TextSearchOutcome> {
  const phrase = query.trim().toLowerCase().replace(/\s+/g, ' ');
  const terms = [...new Set(phrase.split(' ').filter((t) => t !== ''))];
  const mark = termsPattern([phrase, ...terms], false);
  const best: LineMatch[] = [];
  let pending: LineMatch[] = [];
  let previous: string | undefined;
  let total = 0;
  let n = 0;

  const stream = file.createReadStream({ encoding: 'utf8', autoClose: false, start: 0 });
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  try {
    for await (const raw of lines) {
      if (signal?.aborted) throw signal.reason;
      n++;
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
    lines.close();
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
