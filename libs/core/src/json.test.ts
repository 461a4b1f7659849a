import { describe, expect, it } from 'vitest';
import { JsonDepthError, jsonDepthExceeds, MAX_JSON_DEPTH, parseJsonWithin, jsonShapeExceeds } from './json.js';

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

describe('jsonShapeExceeds', () => {
  const obj = (n: number) => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])));
  it('counts the members of each container, not of the whole document', () => {
    expect(jsonShapeExceeds(obj(10), 64, 10)).toBeUndefined();
    expect(jsonShapeExceeds(obj(11), 64, 10)).toBe('members');
    expect(
      jsonShapeExceeds(
        JSON.stringify([
          [1, 2, 3],
          [4, 5, 6],
          [7, 8, 9],
        ]),
        64,
        3,
      ),
    ).toBeUndefined();
    expect(jsonShapeExceeds(JSON.stringify({ a: [1, 2, 3, 4] }), 64, 3)).toBe('members');
  });

  it('does not count commas inside strings', () => {
    expect(jsonShapeExceeds(JSON.stringify({ a: ',,,,,,,,,,,,', b: 'x\\",,,' }), 64, 2)).toBeUndefined();
  });

  it('reports depth before members when both are broken', () => {
    expect(jsonShapeExceeds(`${'['.repeat(70)}1,2,3${']'.repeat(70)}`, 64, 2)).toBe('depth');
  });

  it('a 100,000-key object is refused without being parsed', () => {
    expect(jsonShapeExceeds(obj(100_000), 64, 10_000)).toBe('members');
  });
});
