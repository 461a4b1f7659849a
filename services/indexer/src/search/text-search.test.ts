import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedLines, searchTextFile } from './text-search.js';

let dir: string;
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'indexer-text-'));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function search(content: string, query: string, max = 5) {
  const file = path.join(dir, `f-${Math.random().toString(36).slice(2)}.txt`);
  await fs.writeFile(file, content);
  const fh = await fs.open(file, 'r');
  try {
    return await searchTextFile(fh, query, max);
  } finally {
    await fh.close();
  }
}

describe('searchTextFile', () => {
  it('finds a line case-insensitively with one line of context and the match marked', async () => {
    const out = await search('first\nthe Error happened\nlast\n', 'error');
    expect(out.total).toBe(1);
    expect(out.matches[0]).toEqual({ line: 2, score: 10, before: 'first', text: 'the **Error** happened', after: 'last' });
  });

  it('ranks lines with the whole phrase above lines with one of its words', async () => {
    const out = await search('disk full\nnothing\nthe disk is full now\ndisk full again\n', 'disk full');
    expect(out.matches.map((m) => m.line)).toEqual([1, 4, 3]);
    expect(out.total).toBe(3);
  });

  it('keeps only max_results lines but counts every match', async () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i} match`).join('\n');
    const out = await search(lines, 'match', 3);
    expect(out.matches.map((m) => m.line)).toEqual([1, 2, 3]);
    expect(out.total).toBe(1000);
  });

  it('finds Chinese text', async () => {
    const out = await search('第一行\n我们使用机器学习方法\n第三行', '机器学习');
    expect(out.matches[0]).toMatchObject({ line: 2, text: '我们使用**机器学习**方法' });
  });
});

describe('boundedLines', () => {
  async function* chunks(...parts: string[]): AsyncGenerator<string> {
    for (const p of parts) yield p;
  }
  const collect = async (max: number, ...parts: string[]) => {
    const out: [string, boolean][] = [];
    for await (const l of boundedLines(chunks(...parts), max)) out.push(l);
    return out;
  };

  it('splits at \\n, \\r\\n and \\r, also when a break straddles two chunks', async () => {
    expect(await collect(100, 'a\nb\r', '\nc\rd', 'e\n', 'f')).toEqual([
      ['a', false],
      ['b', false],
      ['c', false],
      ['de', false],
      ['f', false],
    ]);
  });

  it('cuts a long line into pieces, the later ones marked as continuing it, without holding it whole', async () => {
    expect(await collect(4, 'abcdefghij', 'kl\nmn')).toEqual([
      ['abcd', false],
      ['efgh', true],
      ['ijkl', true],
      ['mn', false],
    ]);
  });
});
