import { describe, expect, it } from 'vitest';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { COMPLEX_TASK_CHARS, parseModelPref, resolveModelSlot } from './routing.js';
import type { ModelSlot } from './models/registry.js';

const ALL = new Set<ModelSlot>(['base', 'reasoning', 'vision', 'code', 'chat']);
const route = (messages: BaseMessage[], opts: { configured?: Set<ModelSlot>; preference?: ModelSlot; node?: 'agent' | 'finalize' | 'compact' } = {}) =>
  resolveModelSlot({ node: opts.node ?? 'agent', messages, configured: opts.configured ?? ALL, preference: opts.preference ?? null });
const image = () =>
  new HumanMessage({
    content: [
      { type: 'text', text: 'what is this? analyze it' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
    ],
  });

describe('resolveModelSlot', () => {
  it('uses the preference before any other rule', () => {
    expect(route([image()], { preference: 'chat' })).toEqual({ slot: 'chat', reason: 'preference' });
  });

  it('routes images in the last human message to vision', () => {
    expect(route([image()])).toEqual({ slot: 'vision', reason: 'images' });
  });

  it('skips the vision rule when no vision slot is configured', () => {
    expect(route([image()], { configured: new Set<ModelSlot>(['base', 'reasoning']) })).toEqual({ slot: 'reasoning', reason: 'complex' });
  });

  it('routes code fences and code file names in recent messages to code', () => {
    expect(route([new HumanMessage('fix this:\n```\nx = 1\n```')]).slot).toBe('code');
    expect(route([new HumanMessage('look at src/main.py please')]).slot).toBe('code');
    const call = new AIMessage({ content: '', tool_calls: [{ name: 'write_file', args: { path: 'outputs/app.ts' }, id: 'c1', type: 'tool_call' }] });
    expect(route([new HumanMessage('go'), call]).reason).toBe('code');
  });

  it('does not mistake prose abbreviations for code files', () => {
    expect(route([new HumanMessage('see you at 9 a.m. tomorrow, e.g. at the office')])).toEqual({ slot: 'base', reason: 'default' });
  });

  it('only looks at recent messages for code context', () => {
    const old = new HumanMessage('```py\nprint(1)\n```');
    const filler = Array.from({ length: 6 }, (_, i) => (i % 2 ? new AIMessage('ok') : new HumanMessage('hello')));
    expect(route([old, ...filler]).slot).toBe('base');
  });

  it('routes complex tasks to reasoning: keywords in English or Chinese, or a long message', () => {
    expect(route([new HumanMessage('Compare these two approaches and explain the trade-offs')])).toEqual({ slot: 'reasoning', reason: 'complex' });
    expect(route([new HumanMessage('请深入分析这个问题')]).slot).toBe('reasoning');
    expect(route([new HumanMessage('x'.repeat(COMPLEX_TASK_CHARS))]).slot).toBe('reasoning');
  });

  it('uses base for a plain request', () => {
    expect(route([new HumanMessage('hello there')])).toEqual({ slot: 'base', reason: 'default' });
  });

  it('uses chat for finalize, or base when chat is not configured', () => {
    expect(route([], { node: 'finalize' })).toEqual({ slot: 'chat', reason: 'finalize' });
    expect(route([], { node: 'finalize', configured: new Set<ModelSlot>(['base']) }).slot).toBe('base');
  });

  it('falls through to base when the matching slot is not configured', () => {
    expect(route([new HumanMessage('analyze main.py')], { configured: new Set<ModelSlot>(['base']) })).toEqual({ slot: 'base', reason: 'default' });
  });
});

describe('parseModelPref', () => {
  it('accepts slot names and null, and names the field of a bad value', () => {
    expect(parseModelPref('code', 'x')).toBe('code');
    expect(parseModelPref(null, 'x')).toBeNull();
    expect(() => parseModelPref('gpt-5', 'config.configurable.model_pref')).toThrow(/config\.configurable\.model_pref must be one of base, reasoning/);
  });
});
