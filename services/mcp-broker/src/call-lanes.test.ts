import { describe, expect, it } from 'vitest';
import { CallLanes } from './call-lanes.js';

/** A call that stays open until released, recording when it started. */
function gate(log: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { release, fn: async () => (log.push(`start ${name}`), await done, log.push(`end ${name}`), name) };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('CallLanes', () => {
  it('runs the calls to one server one at a time, in order', async () => {
    const lanes = new CallLanes(() => 1);
    const log: string[] = [];
    const a = gate(log, 'a');
    const b = gate(log, 'b');
    const pa = lanes.run('s', false, a.fn);
    const pb = lanes.run('s', false, b.fn);
    await tick();
    expect(log).toEqual(['start a']);
    expect(lanes.waiting('s')).toBe(1);
    a.release();
    await pa;
    await tick();
    expect(log).toEqual(['start a', 'end a', 'start b']);
    b.release();
    expect(await pb).toBe('b');
  });

  it('lets read-only calls and other servers through at once, and honours a larger limit', async () => {
    const lanes = new CallLanes((s) => (s === 'wide' ? 2 : 1));
    const log: string[] = [];
    const held = gate(log, 'held');
    void lanes.run('s', false, held.fn);
    const reader = gate(log, 'reader');
    const other = gate(log, 'other');
    const w1 = gate(log, 'w1');
    const w2 = gate(log, 'w2');
    void lanes.run('s', true, reader.fn);
    void lanes.run('t', false, other.fn);
    void lanes.run('wide', false, w1.fn);
    void lanes.run('wide', false, w2.fn);
    await tick();
    expect(log.sort()).toEqual(['start held', 'start other', 'start reader', 'start w1', 'start w2']);
    for (const g of [held, reader, other, w1, w2]) g.release();
  });

  it('a call aborted while waiting leaves the lane without running', async () => {
    const lanes = new CallLanes(() => 1);
    const log: string[] = [];
    const a = gate(log, 'a');
    const pa = lanes.run('s', false, a.fn);
    const ac = new AbortController();
    const pb = lanes.run('s', false, async () => log.push('b ran'), ac.signal);
    ac.abort(new Error('caller gave up'));
    await expect(pb).rejects.toThrow('caller gave up');
    expect(lanes.waiting('s')).toBe(0);
    a.release();
    await pa;
    expect(log).toEqual(['start a', 'end a']);
    // The lane is free again.
    expect(await lanes.run('s', false, async () => 'c')).toBe('c');
  });
});
