import type { DocKind, Extraction, UnitName } from '../extract/types.js';
import { unitOf } from '../extract/types.js';
import { chunkUnits } from './chunk.js';
import { makeSnippet, termsPattern } from './snippet.js';
import { isSpacedScript, keywordsOf, normalizeForPhrase, tokenize } from './tokenize.js';

/** Bumped when the stored shape or the tokenizer changes: older index files are rebuilt. */
export const INDEX_FORMAT_VERSION = 1;

/** Scoring weights (seed 001 §1.2). */
export const SCORE = { phrase: 10, trigram: 5, bigram: 3, keyword: 2, fuzzy: 1, coverageMax: 2 } as const;

export interface StoredChunk {
  page: number;
  label?: string;
  text: string;
  /** The chunk's tokens joined by single spaces (tokens never contain whitespace). */
  tokens: string;
}

/** An index as stored on disk, one per content hash. */
export interface IndexFile {
  version: number;
  /** sha256 of the file's bytes. */
  hash: string;
  kind: DocKind | 'text';
  unit: UnitName;
  /** Pages, sheets or slides of the document. */
  total: number;
  /** False when the extraction stopped at a limit; `notes` say where. */
  complete: boolean;
  notes: string[];
  createdAt: string;
  chunks: StoredChunk[];
}

/** Builds the stored index of an extraction (runs in the extraction worker). */
export function buildIndexFile(ex: Extraction, hash: string, createdAt = new Date().toISOString()): IndexFile {
  const chunks = chunkUnits(ex.units).map((c) => ({ ...c, tokens: tokenize(c.text).join(' ') }));
  return {
    version: INDEX_FORMAT_VERSION,
    hash,
    kind: ex.kind,
    unit: unitOf(ex.kind),
    total: ex.total,
    complete: ex.complete,
    notes: ex.notes,
    createdAt,
    chunks,
  };
}

export interface ScoredMatch {
  page: number;
  label?: string;
  score: number;
  snippet: string;
}

export interface SearchOutcome {
  matches: ScoredMatch[];
  /** Chunks with a positive score, before the max_results cut. */
  total: number;
}

interface LoadedChunk {
  page: number;
  label?: string;
  text: string;
  /** Token ids, in order. */
  ids: Uint32Array;
  /** Lower-cased, whitespace-collapsed text for phrase matching. */
  phraseText: string;
}

/**
 * A loaded index: chunks as token-id sequences plus an inverted index
 * token → chunk ids, so a search only scores chunks that share a keyword (or
 * a fuzzy variant) with the query; a query without word tokens falls back to
 * a phrase scan of every chunk.
 */
export class DocumentIndex {
  private readonly chunks: LoadedChunk[];
  private readonly vocab = new Map<string, number>();
  private readonly postings: number[][] = [];

  constructor(readonly file: IndexFile) {
    this.chunks = file.chunks.map((c, chunkId) => {
      const tokens = c.tokens === '' ? [] : c.tokens.split(' ');
      const ids = new Uint32Array(tokens.length);
      tokens.forEach((t, i) => {
        let id = this.vocab.get(t);
        if (id === undefined) {
          id = this.postings.length;
          this.vocab.set(t, id);
          this.postings.push([]);
        }
        ids[i] = id;
        const list = this.postings[id] as number[];
        if (list[list.length - 1] !== chunkId) list.push(chunkId);
      });
      return { page: c.page, ...(c.label ? { label: c.label } : {}), text: c.text, ids, phraseText: normalizeForPhrase(c.text) };
    });
  }

  get chunkCount(): number {
    return this.chunks.length;
  }

  /**
   * Scores chunks: phrase +10, each query trigram found +5, each bigram +3,
   * each keyword found exactly +2 or only fuzzily +1, plus a coverage bonus of
   * 2 × (share of keywords found). Ties go to the earlier page.
   */
  search(query: string, maxResults: number): SearchOutcome {
    const phrase = normalizeForPhrase(query);
    const qTokens = tokenize(query);
    const keywords = keywordsOf(qTokens);
    const fuzzy = new Map(keywords.map((k) => [k, this.fuzzyVariants(k)]));
    const V = this.postings.length + 1;
    // A query token absent from the index gets id V - 1, which no chunk holds.
    const qIds = qTokens.map((t) => this.vocab.get(t) ?? V - 1);
    // One byte per vocabulary word: is it a query token? (cheaper than a Set lookup in the hot loop)
    const inQuery = new Uint8Array(V);
    for (const id of qIds) inQuery[id] = 1;
    const bigrams = new Set<number>();
    const trigrams = new Set<string>();
    for (let i = 0; i + 1 < qIds.length; i++) {
      const b = (qIds[i] as number) * V + (qIds[i + 1] as number);
      bigrams.add(b);
      if (i + 2 < qIds.length) trigrams.add(`${b}:${qIds[i + 2] as number}`);
    }
    // Per keyword: the chunks holding it exactly, and those holding a fuzzy variant.
    const exactIn = keywords.map((k) => new Set(this.postingsOf(k)));
    const fuzzyIn = keywords.map((k) => new Set((fuzzy.get(k) ?? []).flatMap((v) => this.postingsOf(v))));

    let candidates: Iterable<number>;
    if (keywords.length === 0) {
      candidates = this.chunks.keys();
    } else {
      const ids = new Set<number>();
      for (const set of [...exactIn, ...fuzzyIn]) for (const id of set) ids.add(id);
      candidates = ids;
    }

    const scored: { id: number; score: number; phrase: boolean }[] = [];
    for (const id of candidates) {
      const c = this.chunks[id];
      if (!c) continue;
      let score = 0;
      const hasPhrase = phrase !== '' && c.phraseText.includes(phrase);
      if (hasPhrase) score += SCORE.phrase;
      if (bigrams.size > 0) {
        const seen2 = new Set<number>();
        const seen3 = new Set<string>();
        const ids = c.ids;
        for (let i = 0; i + 1 < ids.length; i++) {
          // Cheap small-integer test first: most positions hold no query token.
          if (inQuery[ids[i] as number] === 0 || inQuery[ids[i + 1] as number] === 0) continue;
          const b = (ids[i] as number) * V + (ids[i + 1] as number);
          if (!bigrams.has(b)) continue;
          seen2.add(b);
          if (i + 2 < ids.length) {
            const t = `${b}:${ids[i + 2] as number}`;
            if (trigrams.has(t)) seen3.add(t);
          }
        }
        score += seen3.size * SCORE.trigram + seen2.size * SCORE.bigram;
      }
      let found = 0;
      keywords.forEach((_, k) => {
        if (exactIn[k]?.has(id)) {
          score += SCORE.keyword;
          found++;
        } else if (fuzzyIn[k]?.has(id)) {
          score += SCORE.fuzzy;
          found++;
        }
      });
      if (keywords.length > 0) score += (SCORE.coverageMax * found) / keywords.length;
      if (score > 0) scored.push({ id, score: Math.round(score * 100) / 100, phrase: hasPhrase });
    }
    scored.sort((a, b) => b.score - a.score || (this.chunks[a.id]?.page ?? 0) - (this.chunks[b.id]?.page ?? 0) || a.id - b.id);

    const exactPattern = termsPattern(keywords);
    const phrasePattern = termsPattern([phrase]);
    const fuzzyTerms = [...fuzzy.values()].flat();
    const fuzzyPattern = termsPattern(fuzzyTerms);
    const markPattern = termsPattern([phrase, ...keywords, ...fuzzyTerms]);
    const matches = scored.slice(0, maxResults).map(({ id, score, phrase: hasPhrase }) => {
      const c = this.chunks[id] as LoadedChunk;
      const focus = hasPhrase ? [phrasePattern, exactPattern] : [exactPattern, fuzzyPattern];
      return { page: c.page, ...(c.label ? { label: c.label } : {}), score, snippet: makeSnippet(c.text, focus, markPattern) };
    });
    return { matches, total: scored.length };
  }

  private postingsOf(token: string): number[] {
    const id = this.vocab.get(token);
    return id === undefined ? [] : (this.postings[id] ?? []);
  }

  /**
   * Index words close to a keyword: for spaced scripts, words of ≥ 3 letters
   * sharing a prefix with it or one edit away (keywords of ≥ 5 letters); for
   * scripts without spaces, words containing it or contained in it (≥ 2 chars).
   */
  private fuzzyVariants(k: string): string[] {
    const out: string[] = [];
    const spaced = isSpacedScript(k);
    if (spaced && k.length < 3) return out;
    for (const t of this.vocab.keys()) {
      if (t === k) continue;
      if (spaced) {
        if (t.length < 3) continue;
        if (t.startsWith(k) || k.startsWith(t) || (k.length >= 5 && Math.abs(t.length - k.length) <= 1 && withinOneEdit(t, k))) out.push(t);
      } else if (t.length >= 2 && (t.includes(k) || k.includes(t))) {
        out.push(t);
      }
    }
    return out;
  }
}

/** True when a and b differ by at most one insertion, deletion or substitution. */
export function withinOneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  let j = 0;
  let edits = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++;
      j++;
      continue;
    }
    if (++edits > 1) return false;
    if (a.length > b.length) i++;
    else if (b.length > a.length) j++;
    else {
      i++;
      j++;
    }
  }
  return edits + (a.length - i) + (b.length - j) <= 1;
}
