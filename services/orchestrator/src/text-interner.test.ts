import { describe, expect, it } from 'vitest';
import { TextInterner } from './text-interner.js';

describe('TextInterner', () => {
  it('hands out equal texts unchanged and stays within its capacity, the oldest text going first', () => {
    const interner = new TextInterner(2);
    const a = ['prompt', 'A'].join(' ');
    expect(interner.intern(a)).toBe('prompt A');
    expect(interner.intern(['prompt', 'A'].join(' '))).toBe('prompt A');
    expect(interner.size).toBe(1);
    interner.intern('prompt B');
    interner.intern('prompt C');
    expect(interner.size).toBe(2);
    // 'prompt A' was evicted: interning it again makes room by dropping 'prompt B'.
    expect(interner.intern('prompt A')).toBe('prompt A');
    expect(interner.size).toBe(2);
  });
});
