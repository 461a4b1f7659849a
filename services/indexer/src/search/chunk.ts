import type { DocUnit } from '../extract/types.js';

export interface TextChunk {
  /** Page, sheet or slide number (1-based); 0 for plain text. */
  page: number;
  label?: string;
  text: string;
}

/** Target chunk size in characters, and the overlap kept between neighbours so a phrase across a cut is found. */
export const CHUNK_CHARS = 1_000;
export const CHUNK_OVERLAP = 100;

/** Cuts each unit into chunks of about CHUNK_CHARS, preferring line, sentence and word ends. */
export function chunkUnits(units: readonly DocUnit[]): TextChunk[] {
  const out: TextChunk[] = [];
  for (const unit of units) {
    for (const text of chunkText(unit.text)) out.push({ page: unit.n, ...(unit.label ? { label: unit.label } : {}), text });
  }
  return out;
}

export function chunkText(text: string): string[] {
  const t = text.trim();
  if (t === '') return [];
  const out: string[] = [];
  let pos = 0;
  while (pos < t.length) {
    let end = Math.min(t.length, pos + CHUNK_CHARS);
    if (end < t.length) end = cutPoint(t, pos + Math.floor(CHUNK_CHARS * 0.7), end);
    out.push(t.slice(pos, end).trim());
    if (end >= t.length) break;
    pos = Math.max(pos + 1, end - CHUNK_OVERLAP);
  }
  return out.filter((c) => c !== '');
}

/** Best place to cut in [min, max): after a newline, else a sentence end, else a space, else max. */
function cutPoint(t: string, min: number, max: number): number {
  for (const re of [/\n/g, /[.!?。！？；;]/g, /\s/g]) {
    let best = -1;
    re.lastIndex = min;
    for (let m = re.exec(t); m && m.index < max; m = re.exec(t)) best = m.index + 1;
    if (best > min) return best;
  }
  return max;
}
