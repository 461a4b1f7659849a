/**
 * Glob patterns for find_files, matched without regular expressions.
 *
 * A glob library compiles `*a*a*a*a*a*ab` into a backtracking regular
 * expression: against one 100-character file name that takes seconds of
 * synchronous CPU (measured: 11 s for six stars with picomatch), and the model
 * chooses both the pattern and, through write_file, the names. Here a name is
 * matched with the two-pointer wildcard algorithm, O(name × pattern) at worst,
 * and a path segment by segment with the same algorithm (`**` is the star).
 *
 * Syntax: `*` (any run of characters within a name), `?` (one character),
 * `[abc]`, `[a-z]`, `[!abc]` / `[^abc]`, `**` as a whole segment (any number of
 * folders, none included), `{a,b}` alternatives (nested allowed), `\` escapes
 * the next character. Matching is case-sensitive. A pattern without `/` matches
 * names directly in the searched folder (`*.pdf`), as in a shell.
 */

/** Longest pattern accepted, in characters. */
export const MAX_PATTERN_CHARS = 256;
/** Patterns a pattern's braces may expand to. */
export const MAX_PATTERN_ALTERNATIVES = 64;
/** Segments (`a/b/c` has 3) one expanded pattern may have. */
export const MAX_PATTERN_SEGMENTS = 32;

type Token = { t: 'lit'; c: string } | { t: 'any' } | { t: 'star' } | { t: 'class'; negate: boolean; ranges: [string, string][] };
type Segment = { kind: 'globstar' } | { kind: 'name'; tokens: Token[] };

/** A pattern problem, worded for the model after "Invalid pattern: <pattern>: ". */
export class GlobSyntaxError extends Error {
  override name = 'GlobSyntaxError';
}

export interface CompiledGlob {
  /** Deepest folder level a match can lie at (1 = directly in the searched folder); Infinity with `**`. */
  readonly maxDepth: number;
  /** Whether a file at these path segments (code points of each name) matches. */
  matches(segments: readonly (readonly string[])[]): boolean;
  /** Whether a folder at these segments may hold a match (prunes the walk). */
  mayContain(segments: readonly (readonly string[])[]): boolean;
}

/** Compiles a pattern; throws GlobSyntaxError over the limits. Cost O(length × alternatives). */
export function compileGlob(pattern: string): CompiledGlob {
  const chars = Array.from(pattern);
  if (chars.length > MAX_PATTERN_CHARS) throw new GlobSyntaxError(`${chars.length} characters, more than the ${MAX_PATTERN_CHARS} allowed`);
  const alternatives: Segment[][] = [];
  for (const alt of expandBraces(chars)) {
    const segments = splitSegments(alt).map(parseSegment);
    if (segments.length > MAX_PATTERN_SEGMENTS) throw new GlobSyntaxError(`more than ${MAX_PATTERN_SEGMENTS} segments`);
    // `**/**` is `**`; collapsing keeps the segment matcher's star semantics simple.
    alternatives.push(segments.filter((s, i) => !(s.kind === 'globstar' && segments[i - 1]?.kind === 'globstar')));
  }
  const usable = alternatives.filter((a) => a.length > 0);
  const maxDepth = Math.max(0, ...usable.map((a) => (a.some((s) => s.kind === 'globstar') ? Infinity : a.length)));
  return {
    maxDepth,
    matches: (segs) => usable.some((a) => matchSegments(a, segs)),
    mayContain: (segs) => usable.some((a) => prefixMayMatch(a, segs)),
  };
}

/** `{a,b}c` → `ac`, `bc`, with nesting; a brace group without a top-level comma stays literal. */
function expandBraces(chars: readonly string[]): string[][] {
  const out: string[][] = [];
  const expand = (p: readonly string[]): void => {
    const group = findGroup(p);
    if (!group) {
      out.push([...p]);
      if (out.length > MAX_PATTERN_ALTERNATIVES) throw new GlobSyntaxError(`its braces expand to more than ${MAX_PATTERN_ALTERNATIVES} patterns`);
      return;
    }
    // Every group has two alternatives or more, so the calls made before the limit trips are bounded too.
    for (const alt of group.alternatives) expand([...group.prefix, ...alt, ...group.suffix]);
  };
  expand(chars);
  return out;
}

function findGroup(p: readonly string[]): { prefix: string[]; alternatives: string[][]; suffix: string[] } | undefined {
  for (let start = 0; start < p.length; start++) {
    if (p[start] === '\\') {
      start++;
      continue;
    }
    if (p[start] !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    for (let i = start; i < p.length; i++) {
      const c = p[i];
      if (c === '\\') {
        i++;
        continue;
      }
      if (c === '{') depth++;
      else if (c === ',' && depth === 1) commas.push(i);
      else if (c === '}' && --depth === 0) {
        if (commas.length === 0) break; // "{a}": literal; look for a later group
        const bounds = [start, ...commas, i];
        const alternatives = bounds.slice(1).map((end, k) => p.slice((bounds[k] as number) + 1, end));
        return { prefix: p.slice(0, start), alternatives, suffix: p.slice(i + 1) };
      }
    }
  }
  return undefined;
}

function splitSegments(chars: readonly string[]): string[][] {
  const segments: string[][] = [];
  let current: string[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '\\' && i + 1 < chars.length) {
      current.push(c, chars[++i] as string);
    } else if (c === '/') {
      if (current.length > 0) segments.push(current);
      current = [];
    } else {
      current.push(c);
    }
  }
  if (current.length > 0) segments.push(current);
  return segments;
}

function parseSegment(chars: readonly string[]): Segment {
  if (chars.length === 2 && chars[0] === '*' && chars[1] === '*') return { kind: 'globstar' };
  const tokens: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i] as string;
    if (c === '\\' && i + 1 < chars.length) {
      tokens.push({ t: 'lit', c: chars[++i] as string });
    } else if (c === '*') {
      if (tokens[tokens.length - 1]?.t !== 'star') tokens.push({ t: 'star' });
    } else if (c === '?') {
      tokens.push({ t: 'any' });
    } else if (c === '[') {
      const cls = parseClass(chars, i);
      if (cls) {
        tokens.push(cls.token);
        i = cls.end;
      } else {
        tokens.push({ t: 'lit', c });
      }
    } else {
      tokens.push({ t: 'lit', c });
    }
  }
  return { kind: 'name', tokens };
}

/** `[...]` starting at `open`; undefined when it is not closed (then `[` is literal). */
function parseClass(chars: readonly string[], open: number): { token: Token; end: number } | undefined {
  let i = open + 1;
  const negate = chars[i] === '!' || chars[i] === '^';
  if (negate) i++;
  const ranges: [string, string][] = [];
  let first = true;
  for (; i < chars.length; i++) {
    let c = chars[i] as string;
    if (c === ']' && !first) return { token: { t: 'class', negate, ranges }, end: i };
    first = false;
    if (c === '\\' && i + 1 < chars.length) c = chars[++i] as string;
    if (chars[i + 1] === '-' && i + 2 < chars.length && chars[i + 2] !== ']') {
      let hi = chars[i + 2] as string;
      i += 2;
      if (hi === '\\' && i + 1 < chars.length) hi = chars[++i] as string;
      ranges.push([c, hi]);
    } else {
      ranges.push([c, c]);
    }
  }
  return undefined;
}

function matchOne(token: Token, c: string): boolean {
  switch (token.t) {
    case 'lit':
      return token.c === c;
    case 'any':
      return true;
    case 'class': {
      const cp = c.codePointAt(0) as number;
      const inside = token.ranges.some(([lo, hi]) => cp >= (lo.codePointAt(0) as number) && cp <= (hi.codePointAt(0) as number));
      return inside !== token.negate;
    }
    case 'star':
      return false;
  }
}

/**
 * The two-pointer wildcard match: on a mismatch, go back to just after the
 * last star and let it swallow one more character. Every other token matches
 * exactly one character, which makes this exact and O(name × tokens).
 */
function matchName(tokens: readonly Token[], name: readonly string[]): boolean {
  let t = 0;
  let n = 0;
  let starT = -1;
  let starN = 0;
  while (n < name.length) {
    const token = tokens[t];
    if (token?.t === 'star') {
      starT = t++;
      starN = n;
    } else if (token !== undefined && matchOne(token, name[n] as string)) {
      t++;
      n++;
    } else if (starT >= 0) {
      t = starT + 1;
      n = ++starN;
    } else {
      return false;
    }
  }
  while (tokens[t]?.t === 'star') t++;
  return t === tokens.length;
}

/** The same algorithm one level up: `**` is the star, a name segment matches exactly one folder or file name. */
function matchSegments(pattern: readonly Segment[], segs: readonly (readonly string[])[]): boolean {
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  while (s < segs.length) {
    const seg = pattern[p];
    if (seg?.kind === 'globstar') {
      starP = p++;
      starS = s;
    } else if (seg !== undefined && matchName(seg.tokens, segs[s] as readonly string[])) {
      p++;
      s++;
    } else if (starP >= 0) {
      p = starP + 1;
      s = ++starS;
    } else {
      return false;
    }
  }
  while (pattern[p]?.kind === 'globstar') p++;
  return p === pattern.length;
}

function prefixMayMatch(pattern: readonly Segment[], segs: readonly (readonly string[])[]): boolean {
  for (let i = 0; i < segs.length; i++) {
    const seg = pattern[i];
    if (seg === undefined) return false;
    if (seg.kind === 'globstar') return true;
    if (!matchName(seg.tokens, segs[i] as readonly string[])) return false;
  }
  return segs.length < pattern.length;
}
