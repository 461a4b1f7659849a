import { describe, expect, it } from 'vitest';
import { sharedToolCallIds, withUniqueToolCallIds } from './tool-call-ids.js';

describe('withUniqueToolCallIds', () => {
  it('leaves distinct ids alone', () => {
    const calls = [{ id: 'a' }, { id: 'b' }];
    const r = withUniqueToolCallIds(calls);
    expect(r.changed).toBe(false);
    expect(r.calls).toEqual(calls);
  });

  it('gives a repeated id to the first call only and fresh ids to the others', () => {
    const r = withUniqueToolCallIds([
      { id: 'x', name: 'write_file' },
      { id: 'x', name: 'now' },
      { id: 'x', name: 'now' },
    ]);
    expect(r.changed).toBe(true);
    const ids = r.calls.map((c) => c.id);
    expect(ids[0]).toBe('x');
    expect(new Set(ids).size).toBe(3);
    expect(r.calls.map((c) => c.name)).toEqual(['write_file', 'now', 'now']);
  });

  it('never collides with an id another call already has', () => {
    const r = withUniqueToolCallIds([{ id: 'x' }, { id: 'x' }, { id: 'x_dup2' }]);
    expect(new Set(r.calls.map((c) => c.id)).size).toBe(3);
    expect(r.calls[2]!.id).toBe('x_dup2');
  });

  it('fills missing and empty ids', () => {
    const r = withUniqueToolCallIds([{}, { id: '' }, { id: 'call_1' }]);
    expect(r.calls.every((c) => typeof c.id === 'string' && c.id !== '')).toBe(true);
    expect(new Set(r.calls.map((c) => c.id)).size).toBe(3);
  });

  it('is deterministic (a step re-executed after a crash gets the same ids)', () => {
    const calls = [{ id: 'x' }, { id: 'x' }, {}];
    expect(withUniqueToolCallIds(calls).calls).toEqual(withUniqueToolCallIds(calls).calls);
  });
});

describe('sharedToolCallIds', () => {
  it('names every id used more than once, the empty id included', () => {
    expect([...sharedToolCallIds([{ id: 'a' }, { id: 'b' }, { id: 'a' }, {}, { id: '' }])].sort()).toEqual(['', 'a']);
    expect(sharedToolCallIds([{ id: 'a' }, { id: 'b' }]).size).toBe(0);
  });
});
