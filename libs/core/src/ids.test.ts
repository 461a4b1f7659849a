import { describe, expect, it } from 'vitest';
import { isUuid, newOrderedId } from './ids.js';

describe('newOrderedId', () => {
  it('is a UUID that sorts in creation order, also within one millisecond', () => {
    const ids = Array.from({ length: 2_000 }, () => newOrderedId());
    expect(ids.every(isUuid)).toBe(true);
    expect(ids.every((id) => id[14] === '7')).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
