import { describe, expect, it } from 'vitest';
import { JsonDepthError, jsonDepthExceeds, MAX_JSON_DEPTH, parseJsonWithin } from './json.js';

const nested = (n: number, open = '[', close = ']') => `${open.repeat(n)}${close.repeat(n)}`;

describe('jsonDepthExceeds', () => {
  it('counts arrays and objects, and allows exactly the limit', () => {
    expect(jsonDepthExceeds(nested(3), 3)).toBe(false);
    expect(jsonDepthExceeds(nested(4), 3)).toBe(true);
    expect(jsonDepthExceeds('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
    expect(jsonDepthExceeds('{"a":{"b":[{"c":[1]}]}}', 4)).toBe(true);
    expect(jsonDepthExceeds('"plain"', 0)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(jsonDepthExceeds(JSON.stringify({ s: '[[[[[[{{{{' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ s: 'a"[[[[\\"[[[' }), 1)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify(['\\', [[1]]]), 2)).toBe(true);
  });

  it('measures the deepest branch, not the total of siblings', () => {
    expect(jsonDepthExceeds(`[${Array(1000).fill(nested(5)).join(',')}]`, 6)).toBe(false);
  });
});

describe('parseJsonWithin', () => {
  it('parses documents within the limit', () => {
    expect(parseJsonWithin(nested(MAX_JSON_DEPTH))).toBeInstanceOf(Array);
    expect(parseJsonWithin('{"a":[1,{"b":"]]]"}]}')).toEqual({ a: [1, { b: ']]]' }] });
  });

  it('refuses 10,000 nested arrays with a JsonDepthError naming the limit, without parsing', () => {
    const err = (() => {
      try {
        parseJsonWithin(nested(10_000));
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(JsonDepthError);
    expect((err as JsonDepthError).code).toBe('INVALID_ARGUMENT');
    expect((err as Error).message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
  });

  it('still reports invalid JSON as a SyntaxError', () => {
    expect(() => parseJsonWithin('{nope')).toThrow(SyntaxError);
  });
});
