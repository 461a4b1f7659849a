import { describe, expect, it } from 'vitest';
import type { Extraction } from '../extract/types.js';
import { DocumentIndex, SCORE, buildIndexFile, withinOneEdit } from './doc-index.js';
import { tokenize } from './tokenize.js';

function indexOf(pages: string[]): DocumentIndex {
  const ex: Extraction = { kind: 'pdf', total: pages.length, units: pages.map((text, i) => ({ n: i + 1, text })), complete: true, notes: [] };
  return new DocumentIndex(buildIndexFile(ex, 'f'.repeat(64)));
}

describe('DocumentIndex scoring', () => {
  it('scores a single exact keyword: phrase 10 + keyword 2 + full coverage 2', () => {
    const out = indexOf(['the budget is approved']).search('budget', 5);
    expect(out.matches[0]?.score).toBe(SCORE.phrase + SCORE.keyword + SCORE.coverageMax);
  });

  it('adds trigram and bigram points for a phrase', () => {
    // tokens: annual budget review -> 1 trigram, 2 bigrams, 3 keywords, phrase, coverage 2
    const out = indexOf(['the annual budget review starts']).search('annual budget review', 5);
    expect(out.matches[0]?.score).toBe(10 + 5 + 2 * 3 + 3 * 2 + 2);
  });

  it('ranks the page holding the phrase above a page holding the words apart', () => {
    const out = indexOf(['review of the budget, annual', 'the annual budget review is due']).search('annual budget review', 5);
    expect(out.matches.map((m) => m.page)).toEqual([2, 1]);
    expect(out.total).toBe(2);
  });

  it('gives one point for a fuzzy keyword and partial coverage', () => {
    // "budgets" is a prefix variant of "budget"; "missing" is absent: 1 fuzzy + coverage 2 * 1/2
    const out = indexOf(['several budgets were cut']).search('budget missing', 5);
    expect(out.matches[0]?.score).toBe(SCORE.fuzzy + 1);
  });

  it('matches keywords case-insensitively and marks them in the snippet', () => {
    const out = indexOf(['Quarterly REVENUE rose sharply']).search('revenue', 5);
    expect(out.matches[0]?.snippet).toBe('Quarterly **REVENUE** rose sharply');
  });

  it('returns no match for absent words and honours max_results', () => {
    const idx = indexOf(['alpha beta', 'alpha gamma', 'alpha delta']);
    expect(idx.search('omega', 5).matches).toEqual([]);
    const out = idx.search('alpha', 2);
    expect(out.matches).toHaveLength(2);
    expect(out.total).toBe(3);
  });

  it('finds Chinese words in text without spaces and marks them', () => {
    const idx = indexOf(['本报告讨论了市场营销策略。', '机器学习是人工智能的一个分支，深度学习模型需要大量数据。']);
    expect(tokenize('机器学习的应用')).toEqual(['机器', '学习', '的', '应用']);
    const out = idx.search('机器学习', 5);
    expect(out.matches).toHaveLength(1);
    expect(out.matches[0]?.page).toBe(2);
    expect(out.matches[0]?.snippet).toContain('**机器学习**');
    // phrase 10 + bigram 机器|学习 3 + keywords 2 × 2 + coverage 2
    expect(out.matches[0]?.score).toBe(10 + 3 + 4 + 2);
  });
});

describe('withinOneEdit', () => {
  it('accepts one substitution, insertion or deletion and nothing more', () => {
    expect([withinOneEdit('colour', 'color'), withinOneEdit('budget', 'budgot'), withinOneEdit('budget', 'bugdet')]).toEqual([true, true, false]);
  });
});
