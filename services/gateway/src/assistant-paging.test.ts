import { describe, expect, it } from 'vitest';
import { pageWithBuiltin, storedWindow } from './assistant-paging.js';

/** Every page of the stored letters merged with the built-in, as the route computes it. */
function pages(all: string[], builtin: string | null, limit: number): string[][] {
  const out: string[][] = [];
  for (let offset = 0; ; offset += limit) {
    const w = storedWindow(offset, limit);
    const { page, more } = pageWithBuiltin(all.slice(w.start, w.start + w.count), offset, limit, builtin, (a, b) => a < b);
    out.push(page);
    if (!more) return out;
  }
}

describe('pageWithBuiltin', () => {
  it('puts the built-in in its sorted place on every page size and position', () => {
    const stored = ['b', 'd', 'f', 'h', 'j'];
    for (const builtin of ['a', 'c', 'e', 'g', 'i', 'k']) {
      const whole = [...stored, builtin].sort();
      for (const limit of [1, 2, 3, 4, 10]) expect(pages(stored, builtin, limit).flat()).toEqual(whole);
    }
  });

  it('pages the stored items alone when the built-in does not match, and says when more follow', () => {
    expect(pages(['a', 'b', 'c'], null, 2)).toEqual([['a', 'b'], ['c']]);
    expect(pageWithBuiltin(['a'], 0, 1, 'b', (x, y) => x < y)).toEqual({ page: ['a'], more: true });
    expect(pageWithBuiltin([], 0, 10, 'b', (x, y) => x < y)).toEqual({ page: ['b'], more: false });
  });
});
