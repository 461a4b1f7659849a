import { describe, expect, it } from 'vitest';
import { advance, finishTag, MAX_PRIORITY, needsRebase, priorityOf, PRIORITY_SCALE, REBASE_AFTER, startTag, weightOf } from './fair-tags.js';

/** Tags `n` jobs of each group in `order` as the queues do, from virtual time `v`. */
function tagAll(order: string[], weights: Record<string, number>, v = 0): Array<[string, number]> {
  const finish = new Map<string, number>();
  return order.map((g) => {
    const s = startTag(v, finish.get(g));
    finish.set(g, finishTag(s, weights[g] ?? 1));
    return [g, s];
  });
}

describe('start-time fair queueing tags', () => {
  it("tags a tenant's backlog 0, 1, 2… and a tenant arriving later at the virtual time, ahead of that backlog", () => {
    const a = tagAll(Array<string>(2000).fill('a'), {});
    expect(a.slice(0, 3).map(([, s]) => s)).toEqual([0, 1, 2]);
    expect(a.at(-1)![1]).toBe(1999);
    // 10 of A's jobs started: V is the 10th tag. B, never seen, starts there.
    const v = a.slice(0, 10).reduce((t, [, s]) => advance(t, s), 0);
    expect(startTag(v, undefined)).toBe(9);
    expect(priorityOf(startTag(v, undefined), 0)).toBeLessThan(priorityOf(a[10]![1], 0));
  });

  it('spaces a heavier tenant’s tags by 1/weight, so it gets weight times the turns', () => {
    const tags = tagAll([...Array<string>(6).fill('h'), ...Array<string>(2).fill('l')], { h: 3 });
    const heavy = tags.filter(([g]) => g === 'h').map(([, s]) => s);
    [0, 1 / 3, 2 / 3, 1, 4 / 3, 5 / 3].forEach((want, i) => expect(heavy[i]).toBeCloseTo(want, 9));
    expect(tags.filter(([g]) => g === 'l').map(([, s]) => s)).toEqual([0, 1]);
  });

  it('never moves the virtual time back (a retried old job starts after newer ones)', () => {
    expect(advance(50, 12)).toBe(50);
    expect(advance(50, 51)).toBe(51);
  });

  it('rejects a weight that is not positive', () => {
    expect(() => finishTag(0, 0)).toThrow(/weight must be > 0/);
  });

  it('maps tags to BullMQ priorities 1..2^21-1 relative to the base, one step per 1/MAX_WEIGHT, clamped at both ends', () => {
    expect(priorityOf(100, 100)).toBe(1);
    expect(priorityOf(101, 100)).toBe(1 + PRIORITY_SCALE);
    expect(priorityOf(100 + 1 / 100, 100)).toBe(2);
    expect(priorityOf(99, 100)).toBe(1);
    expect(priorityOf(100 + 10 * REBASE_AFTER, 100)).toBe(MAX_PRIORITY);
    // Every tag up to REBASE_AFTER past V gets an exact priority as long as V is within REBASE_AFTER of the base.
    expect(priorityOf(2 * REBASE_AFTER, 0)).toBeLessThan(MAX_PRIORITY);
  });

  it('asks for a rebase once the virtual time is more than REBASE_AFTER past the base', () => {
    expect(needsRebase(REBASE_AFTER, 0)).toBe(false);
    expect(needsRebase(REBASE_AFTER + 1, 0)).toBe(true);
    expect(needsRebase(REBASE_AFTER + 1, 1)).toBe(false);
  });

  it('weighs a group by its configured weight, else the default, else 1', () => {
    const weights = new Map([['acme', 4]]);
    expect(weightOf({ weights }, 'acme')).toBe(4);
    expect(weightOf({ weights }, 'globex')).toBe(1);
    expect(weightOf({ weights, defaultWeight: 2 }, 'globex')).toBe(2);
  });
});
