import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { messageToJson, toJsonValue } from './serialize.js';

describe('toJsonValue', () => {
  it('converts messages anywhere in plain objects and arrays, and leaves everything else as it is', () => {
    const ai = new AIMessage({ content: 'x', id: 'a1', tool_calls: [{ id: 'c1', name: 'now', args: {} }] });
    const tool = new ToolMessage({ content: 'r', tool_call_id: 'c1' });
    const when = new Date(0);
    class Thing {
      a = 1;
    }
    const thing = new Thing();
    const bare = Object.assign(Object.create(null) as object, { m: new HumanMessage('hi') });
    const out = toJsonValue({
      messages: [new HumanMessage({ content: 'hi', id: 'h1' }), ai, tool],
      nested: { list: [[ai], 1, 'two', null, true] },
      when,
      thing,
      bare,
      n: undefined,
    }) as Record<string, unknown>;
    expect(out).toEqual({
      messages: [messageToJson(new HumanMessage({ content: 'hi', id: 'h1' })), messageToJson(ai), messageToJson(tool)],
      nested: { list: [[messageToJson(ai)], 1, 'two', null, true] },
      when,
      thing,
      bare: { m: messageToJson(new HumanMessage('hi')) },
      n: undefined,
    });
    expect(Object.keys(out)).toEqual(['messages', 'nested', 'when', 'thing', 'bare', 'n']);
    expect(out.when).toBe(when);
    expect(out.thing).toBe(thing);
    expect(toJsonValue('s')).toBe('s');
    expect(toJsonValue(null)).toBe(null);
  });

  it('keeps a `__proto__` key as data, never as the prototype of the copy', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const out = toJsonValue(input) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect((out as { polluted?: unknown }).polluted).toBeUndefined();
    expect(Object.keys(out)).toEqual(['__proto__', 'a']);
    expect(JSON.stringify(out)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });
});
