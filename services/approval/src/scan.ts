/**
 * Text scanning for the rules' patterns: normalization, a linear-time regex
 * engine, and chunked matching that lets the event loop breathe.
 *
 * Why RE2 (the `re2js` package, a pure-JavaScript port of RE2): JavaScript's
 * own engine backtracks, has no time limit, and a rules-file pattern as
 * ordinary as `[a-z_]*_token\s*=` takes quadratic time on a long run of
 * letters (10 MB of "x": minutes). The old answer was to examine only the
 * first 64 KB of each string — which is exactly where a secret after padding
 * hid. RE2 matches in time linear in the text for every pattern it accepts
 * (it has no backreferences or lookaround, and refuses them when the rules are
 * loaded), so whole strings can be scanned. `re2js` needs no native build and
 * no install script. A chunked scan with plain JavaScript regexes was the other
 * option; it bounds the work per chunk but not the cost of a badly written
 * pattern inside a chunk, and still misses matches longer than the overlap.
 *
 * The scan is still chunked (512 KiB, overlapping by 32 KiB), but only to yield
 * to the event loop between chunks: in embedded mode the approval service runs
 * in the gateway's process, and a 10 MB write must not stall every other request.
 * A match that is longer than the overlap and straddles a chunk boundary can be
 * missed; secrets are far shorter.
 */
import { RE2JS } from 're2js';
import { ConfigError, errorMessage } from '@agentloop/core';

/** Characters per chunk of a scan, and how much consecutive chunks overlap. */
export const SCAN_CHUNK_CHARS = 512 * 1024;
export const SCAN_OVERLAP_CHARS = 32 * 1024;
/**
 * Characters normalized at a time: text dense in accents costs ~0.1 ms per KiB,
 * and compatibility decomposition can make one character 18 (U+FDFA).
 */
const NORMALIZE_PIECE_CHARS = 64 * 1024;
/** Work (characters) between two yields to the event loop: some tens of milliseconds at most. */
const YIELD_EVERY_CHARS = 256 * 1024;

/**
 * What is removed before scanning: format characters (zero-width space and
 * joiners, BOM, bidi controls, soft hyphen, tags… — \p{Cf}), every other
 * default-ignorable code point (variation selectors, Hangul fillers, combining
 * grapheme joiner…), and control characters other than the usual whitespace.
 */
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u0000-\u0008\u000e-\u001f\u007f-\u009f]/gu;
/** Whitespace that NFKC leaves alone (line/paragraph separators, NEL, …), read as a space. */
const OTHER_SPACE = /[^\S\t\n\v\f\r ]/gu;
const MARK = /\p{M}/u;
const MARKS = /\p{M}/gu;
/** Printable ASCII and the usual whitespace: already in every normal form. */
const NOT_PLAIN = /[^\u0020-\u007e\t\n\r]/;

/**
 * The text as the patterns see it: invisible characters dropped, NFKC
 * (fullwidth "ｐａｓｓｗｏｒｄ", ligatures, math alphanumerics and superscripts
 * become ASCII; a letter and its combining accent become one character),
 * exotic spaces made plain. Case is folded by the matcher (every pattern is
 * case-insensitive unless it says `(?-i:…)`), not here, so credential shapes
 * that depend on case (AKIA…, eyJ…) can say so.
 */
export function normalizeForScan(s: string): string {
  if (!NOT_PLAIN.test(s)) return s;
  return s.replace(INVISIBLE, '').normalize('NFKC').replace(OTHER_SPACE, ' ');
}

/**
 * A normalized text without its combining marks ("pa\u0301ssword", "pässword"
 * read "password"), or undefined when it has none. Scanned besides the
 * normalized text, not instead of it: a pattern may name accented letters.
 */
export function withoutMarks(normalized: string): string | undefined {
  if (!NOT_PLAIN.test(normalized)) return undefined;
  const decomposed = normalized.normalize('NFD');
  if (!MARK.test(decomposed)) return undefined;
  return decomposed.replace(MARKS, '').normalize('NFC');
}

/**
 * Spends a budget of characters and yields to the event loop (setImmediate)
 * each time a slice of it has been used, so a long scan does not block other
 * work. One per check.
 */
export class Pacer {
  private used = 0;
  constructor(private readonly sliceChars = YIELD_EVERY_CHARS) {}

  async spent(chars: number): Promise<void> {
    this.used += chars;
    if (this.used < this.sliceChars) return;
    this.used = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** s in pieces of at most NORMALIZE_PIECE_CHARS, never cut between the halves of a surrogate pair. */
function* pieces(s: string): Generator<string> {
  for (let start = 0; start < s.length;) {
    let end = Math.min(s.length, start + NORMALIZE_PIECE_CHARS);
    if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1))) end--;
    yield start === 0 && end === s.length ? s : s.slice(start, end);
    start = end;
  }
}

/**
 * The forms of a (possibly long) string the patterns examine: normalized
 * (normalizeForScan) and, when it has combining marks, also without them.
 * Built piece by piece with yields between pieces; undefined as soon as the
 * forms together grow past `maxChars` (normalization can lengthen text).
 */
export async function scanForms(s: string, pacer: Pacer, maxChars: number): Promise<string[] | undefined> {
  let normalized = '';
  let unmarked = '';
  let marked = false;
  for (const raw of pieces(s)) {
    const n = normalizeForScan(raw);
    const u = withoutMarks(n);
    normalized += n;
    unmarked += u ?? n;
    marked ||= u !== undefined;
    if (normalized.length + (marked ? unmarked.length : 0) > maxChars) return undefined;
    // Normalizing text that is not plain ASCII costs several times what scanning it does: count it so.
    await pacer.spent(n === raw ? raw.length : 4 * (raw.length + n.length + (u?.length ?? 0)));
  }
  return marked ? [normalized, unmarked] : [normalized];
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/** One pattern of the rules file, compiled for RE2. */
export interface CompiledPattern {
  /** As written in the rules file (for reasons and logs). */
  source: string;
  /** In RE2 syntax (JavaScript spellings such as `\u00e9` and `(?<name>…)` translated). */
  re2Source: string;
  re: RE2JS;
}

/**
 * Compiles one pattern (case-insensitive); a pattern RE2 refuses is a
 * ConfigError naming `where`. JavaScript-only spellings that RE2 has another
 * way to say (`\uXXXX`, named groups) are translated first, so rules files
 * written for the JavaScript engine keep loading; lookaround and
 * backreferences have no linear-time equivalent and are refused.
 */
export function compilePattern(source: string, where: string): CompiledPattern {
  try {
    const re2Source = RE2JS.translateRegExp(source);
    return { source, re2Source, re: RE2JS.compile(re2Source, RE2JS.CASE_INSENSITIVE) };
  } catch (err) {
    throw new ConfigError(
      `${where}: invalid regular expression ${JSON.stringify(source)}: ${errorMessage(err)} (patterns use RE2 syntax: no lookaround, no backreferences)`,
    );
  }
}

/**
 * The patterns of one level, tried together: one pass of their alternation
 * over the text, then (only on a hit) each alone to name the one that matched.
 */
export class PatternSet {
  readonly patterns: readonly CompiledPattern[];
  /** `(?:p1)|(?:p2)|…`, or undefined when the set is empty or RE2 would not compile the union (each is then tried alone). */
  private readonly any: RE2JS | undefined;

  constructor(patterns: readonly CompiledPattern[]) {
    this.patterns = patterns;
    let any: RE2JS | undefined;
    if (patterns.length > 1) {
      try {
        any = RE2JS.compile(patterns.map((p) => `(?:${p.re2Source})`).join('|'), RE2JS.CASE_INSENSITIVE);
      } catch {
        any = undefined;
      }
    } else {
      any = patterns[0]?.re;
    }
    this.any = any;
  }

  get size(): number {
    return this.patterns.length;
  }

  /** The first pattern (in file order) that matches somewhere in `text` (already normalized), or undefined. */
  async firstMatch(text: string, pacer: Pacer): Promise<CompiledPattern | undefined> {
    if (this.patterns.length === 0) return undefined;
    for (let start = 0; ;) {
      let end = Math.min(text.length, start + SCAN_CHUNK_CHARS);
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
      const piece = start === 0 && end === text.length ? text : text.slice(start, end);
      const hit = this.match(piece);
      if (hit) return hit;
      // A test costs something however short the text: count that too, so many small strings also yield.
      await pacer.spent(piece.length + 64);
      if (end >= text.length) return undefined;
      start = end - SCAN_OVERLAP_CHARS;
      if (isHighSurrogate(text.charCodeAt(start - 1))) start--;
    }
  }

  private match(piece: string): CompiledPattern | undefined {
    if (this.any && !this.any.test(piece)) return undefined;
    return this.patterns.find((p) => p.re.test(piece));
  }
}
