import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { cleanMessages, parseHistoryOptions, repairToolPairs, selectHistory, truncateMessages, type HistoryStrategy } from './history.js';

/** Deterministic PRNG (mulberry32) so the generated history is the same on every run. */
function prng(seed: number) {
  let a = seed;
  return (n: number) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

let seq = 0;
const human = (t = 'q') => new HumanMessage({ content: t, id: `m${++seq}` });
const answer = (t = 'a') => new AIMessage({ content: t, id: `m${++seq}` });
/** An AI message with `n` tool calls followed by their results. */
const toolRound = (n: number): BaseMessage[] => {
  const calls = Array.from({ length: n }, () => ({ name: 'echo', args: { i: seq }, id: `c${++seq}`, type: 'tool_call' as const }));
  return [
    new AIMessage({ content: '', tool_calls: calls, id: `m${++seq}` }),
    ...calls.map((c) => new ToolMessage({ content: 'r', tool_call_id: c.id, name: 'echo', id: `m${++seq}` })),
  ];
};

/** Exactly 200 messages: complete turns with 0–3 tool rounds of 1–3 calls, then an unfinished current turn. */
function history200(seed: number): BaseMessage[] {
  const rnd = prng(seed);
  const out: BaseMessage[] = [];
  while (200 - out.length > 14) {
    out.push(human());
    for (let r = rnd(4); r > 0; r--) out.push(...toolRound(1 + rnd(3)));
    out.push(answer());
  }
  let left = 200 - out.length;
  out.push(human('current'));
  left--;
  if (left % 2 === 1) {
    out.push(...toolRound(2));
    left -= 3;
  }
  for (; left > 0; left -= 2) out.push(...toolRound(1));
  return out;
}

/** Independent check: every AI message with tool calls is followed by exactly its results; no other ToolMessage. */
function assertToolPairs(list: BaseMessage[]): void {
  for (let i = 0; i < list.length; i++) {
    const m = list[i]!;
    expect(ToolMessage.isInstance(m), `orphan ToolMessage at ${i}`).toBe(false);
    if (AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0) {
      const ids = m.tool_calls!.map((c) => c.id);
      const results = list.slice(i + 1, i + 1 + ids.length);
      expect(
        results.every((r) => ToolMessage.isInstance(r)),
        `AI tool calls without results at ${i}`,
      ).toBe(true);
      expect(results.map((r) => (r as ToolMessage).tool_call_id).sort()).toEqual([...ids].sort());
      i += ids.length;
    }
  }
}

const isSubsequence = (sub: BaseMessage[], full: BaseMessage[]) => {
  let j = 0;
  for (const m of full) if (j < sub.length && sub[j] === m) j++;
  return j === sub.length;
};

describe('history window', () => {
  const strategies: HistoryStrategy[] = ['clean', 'truncate'];
  for (const strategy of strategies) {
    it(`${strategy}: keeps tool calls with their results on a 200-message history, for every limit from 10 to 100`, () => {
      for (const seed of [1, 2, 3]) {
        const full = history200(seed);
        expect(full).toHaveLength(200);
        assertToolPairs(full);
        for (let max = 10; max <= 100; max++) {
          const out = selectHistory(full, { maxMessages: max, strategy });
          expect(out.length).toBeLessThanOrEqual(max);
          assertToolPairs(out);
          expect(isSubsequence(out, full)).toBe(true);
          expect(out[0]).toBe(full[0]);
          expect(out.at(-1)).toBe(full.at(-1));
        }
      }
    });
  }

  it('never sends system messages', () => {
    const msgs = [new SystemMessage('sys'), human(), answer(), new SystemMessage('summary'), human()];
    for (const strategy of strategies) expect(selectHistory(msgs, { maxMessages: 10, strategy }).some((m) => SystemMessage.isInstance(m))).toBe(false);
  });

  it('truncate keeps the first message and the last max-1, dropping tool results cut from their call', () => {
    const first = human('task');
    const msgs = [first, ...toolRound(1), answer(), human(), ...toolRound(3), answer(), human('now')];
    // 1 + 2 + 1 + 1 + 4 + 1 + 1 = 11 messages; the last 4 are: two results of the 3-call round, answer, human
    const out = truncateMessages(msgs, 5);
    expect(out).toEqual([first, msgs[msgs.length - 2], msgs[msgs.length - 1]]);
  });

  it('clean keeps recent turns whole and condenses older ones to the question and the answer', () => {
    const first = human('task');
    const older = [human('old q'), ...toolRound(2), answer('old a')];
    const recent = [human('recent q'), ...toolRound(1), answer('recent a')];
    const current = [human('now'), ...toolRound(1)];
    const msgs = [first, ...toolRound(1), answer('first a'), ...older, ...recent, ...current];
    const out = cleanMessages(msgs, 10);
    // budget 9 after the first message: current (3) + recent whole (4) + older condensed (2); the first turn no longer fits
    expect(out).toEqual([first, older[0], older.at(-1), ...recent, ...current]);
    assertToolPairs(out);
  });

  it('returns the history unchanged when it fits, except tool calls left without results', () => {
    const dangling = new AIMessage({ content: '', tool_calls: [{ name: 'x', args: {}, id: 'lost', type: 'tool_call' }] });
    const msgs = [human(), dangling, human('again')];
    expect(selectHistory(msgs, { maxMessages: 40, strategy: 'clean' })).toEqual([msgs[0], msgs[2]]);
    expect(repairToolPairs([new ToolMessage({ content: 'x', tool_call_id: 'nobody' }), human()])).toHaveLength(1);
  });
});

describe('parseHistoryOptions', () => {
  it('defaults to 40 messages and the clean strategy', () => {
    expect(parseHistoryOptions()).toEqual({ maxMessages: 40, strategy: 'clean' });
  });

  it('accepts the bounds 10 and 100 and rejects values outside them', () => {
    expect(parseHistoryOptions({ maxMessages: 10 }).maxMessages).toBe(10);
    expect(parseHistoryOptions({ maxMessages: 100 }).maxMessages).toBe(100);
    expect(() => parseHistoryOptions({ maxMessages: 9 })).toThrow(/maxMessages/);
    expect(() => parseHistoryOptions({ maxMessages: 101 })).toThrow(/maxMessages/);
  });

  it('rejects an unknown strategy', () => {
    expect(() => parseHistoryOptions({ strategy: 'drop' as HistoryStrategy })).toThrow(/strategy/);
  });
});
