import { describe, expect, it } from 'vitest';
import { firstRequestDifference } from './compare.js';

const sys = (time: string) => ({ type: 'system', content: `You are helpful.\n<current_datetime>${time} UTC</current_datetime>`, id: null });
const human = (content: string, id = 'h1') => ({ type: 'human', content, id });
const ai = (args: Record<string, unknown>, id = 'a1') => ({
  type: 'ai',
  content: '',
  id,
  tool_calls: [{ id: 'c1', name: 'read_file', args }],
  response_metadata: { x: id },
});
const tool = (content: string, status = 'success') => ({ type: 'tool', content, tool_call_id: 'c1', status, id: 't1' });
const tools = [{ name: 'read_file', description: 'Read', parameters: '{"type":"object"}' }];

describe('firstRequestDifference', () => {
  it('ignores message ids, provider metadata and the system prompt time stamp', () => {
    const expected = { messages: [sys('2026-01-01 10:00:00'), human('hi'), ai({ file_path: 'a' }), tool('x')], tools };
    const actual = {
      messages: [sys('2026-11-24 04:00:00'), human('hi', 'other'), ai({ file_path: 'a' }, 'other'), { ...tool('x'), id: 'other' }],
      tools: [{ ...tools[0]!, description: 'Read (reworded)' }],
    };
    expect(firstRequestDifference(expected, actual)).toBeNull();
  });

  it('names the first message field that differs, with both values', () => {
    const expected = { messages: [sys('t'), human('hi'), ai({ file_path: 'a' }), tool('friday')], tools };
    const actual = { messages: [sys('t'), human('hi'), ai({ file_path: 'a' }), tool('monday')], tools };
    expect(firstRequestDifference(expected, actual)).toEqual({ path: 'messages[3].content', expected: 'friday', actual: 'monday' });
    const args = firstRequestDifference({ messages: [human('hi'), ai({ file_path: 'a' })], tools }, { messages: [human('hi'), ai({ file_path: 'b' })], tools });
    expect(args?.path).toBe('messages[1].tool_calls');
    const status = firstRequestDifference({ messages: [tool('x')], tools }, { messages: [tool('x', 'error')], tools });
    expect(status).toEqual({ path: 'messages[0].status', expected: 'success', actual: 'error' });
  });

  it('reports a different number of messages, then different tools offered', () => {
    expect(firstRequestDifference({ messages: [human('hi')], tools }, { messages: [human('hi'), human('again')], tools })).toEqual({
      path: 'messages',
      expected: '1 messages',
      actual: '2 messages',
    });
    expect(firstRequestDifference({ messages: [human('hi')], tools }, { messages: [human('hi')], tools: [] })).toEqual({
      path: 'tools',
      expected: ['read_file'],
      actual: [],
    });
  });
});
