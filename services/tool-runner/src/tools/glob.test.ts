import { describe, expect, it } from 'vitest';
import { compileGlob, GlobSyntaxError, MAX_PATTERN_ALTERNATIVES, MAX_PATTERN_CHARS } from './glob.js';

const segs = (p: string) => p.split('/').map((s) => Array.from(s));
const matches = (pattern: string, p: string) => compileGlob(pattern).matches(segs(p));

describe('compileGlob: syntax', () => {
  it.each([
    ['*.pdf', 'a.pdf', true],
    ['*.pdf', 'dir/a.pdf', false],
    ['**/*.pdf', 'a.pdf', true],
    ['**/*.pdf', 'x/y/z/a.pdf', true],
    ['uploads/**', 'uploads/a/b.txt', true],
    ['uploads/**/b.txt', 'uploads/b.txt', true],
    ['**/sub/**/*.md', 'a/sub/b/c.md', true],
    ['**/sub/**/*.md', 'a/b/c.md', false],
    ['*report*', 'q1-report.pdf', true],
    ['?.txt', 'a.txt', true],
    ['?.txt', 'ab.txt', false],
    ['[ab].txt', 'b.txt', true],
    ['[!ab].txt', 'b.txt', false],
    ['[^ab].txt', 'c.txt', true],
    ['[a-c]x', 'bx', true],
    ['[a-c]x', 'dx', false],
    ['[]]x', ']x', true],
    ['*.{md,txt}', 'a.txt', true],
    ['*.{md,txt}', 'a.pdf', false],
    ['{a,b{c,d}}.x', 'bd.x', true],
    ['{a}.x', '{a}.x', true],
    ['\\*.txt', '*.txt', true],
    ['\\*.txt', 'a.txt', false],
    ['[oops', '[oops', true],
    ['报告*', '报告-2024.pdf', true],
    ['?.txt', '😀.txt', true],
    ['A.txt', 'a.txt', false],
  ])('%s against %s → %s', (pattern, p, expected) => {
    expect(matches(pattern, p)).toBe(expected);
  });

  it('says which folders may hold a match, so the walk is pruned', () => {
    const g = compileGlob('uploads/*/x.txt');
    expect(g.maxDepth).toBe(3);
    expect(g.mayContain(segs('uploads'))).toBe(true);
    expect(g.mayContain(segs('outputs'))).toBe(false);
    expect(g.mayContain(segs('uploads/a'))).toBe(true);
    expect(g.mayContain(segs('uploads/a/b'))).toBe(false);
    expect(compileGlob('**/x').maxDepth).toBe(Infinity);
    expect(compileGlob('u*/**').mayContain(segs('uploads/a/b/c'))).toBe(true);
  });
});

describe('compileGlob: bounded cost whatever the pattern', () => {
  it('matches a backtracking pattern against a long name at once (a regular expression takes seconds)', () => {
    const g = compileGlob(`${'*a'.repeat(40)}b`);
    const name = 'a'.repeat(255);
    for (let i = 0; i < 100; i++) expect(g.matches([Array.from(name)])).toBe(false);
    expect(g.matches([Array.from(`${name}b`)])).toBe(true);
  });

  it('refuses a pattern longer than the limit', () => {
    expect(() => compileGlob('a'.repeat(MAX_PATTERN_CHARS + 1))).toThrow(
      new GlobSyntaxError(`${MAX_PATTERN_CHARS + 1} characters, more than the ${MAX_PATTERN_CHARS} allowed`),
    );
  });

  it('refuses braces that expand to too many patterns, however they nest', () => {
    expect(() => compileGlob('{a,b}'.repeat(7))).toThrow(`its braces expand to more than ${MAX_PATTERN_ALTERNATIVES} patterns`);
    expect(() => compileGlob('{,}'.repeat(80))).toThrow(GlobSyntaxError);
    expect(compileGlob('{a,b}'.repeat(6)).matches(segs('ababab'))).toBe(true);
  });

  it('refuses more than 32 segments', () => {
    expect(() => compileGlob('a/'.repeat(33))).toThrow('more than 32 segments');
  });
});
