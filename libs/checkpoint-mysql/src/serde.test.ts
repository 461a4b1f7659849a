/**
 * CheckpointSerializer writes LangGraph's JsonPlusSerializer bytes for every kind of value, and
 * reads any of them back as JsonPlusSerializer does (services/orchestrator's checkpoint-serde test
 * does the same on what the agent graph really checkpoints).
 */
import { describe, expect, it, vi } from 'vitest';
import { DeltaSnapshot, JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { CheckpointSerializer } from './serde.js';

const stock = new JsonPlusSerializer();
const ours = new CheckpointSerializer();
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

const circular = () => {
  const a: Record<string, unknown> = { name: 'a', list: [1, 2] };
  a.self = a;
  (a.list as unknown[]).push(a);
  return { a, shared: { x: 1 } };
};

const messages = () => [
  new HumanMessage({ content: 'hi', id: 'h1' }),
  new AIMessage({ content: '', tool_calls: [{ name: 'now', args: { tz: undefined, at: new Date(0) }, id: 'c1', type: 'tool_call' }] }),
  new ToolMessage({ content: 'ran', tool_call_id: 'c1', artifact: new Uint8Array([1, 2]) }),
];

const CASES: Record<string, () => unknown> = {
  'plain values': () => ({ s: 'é"\\\n\u2028', n: 1.5, neg: -0, big: 1e21, nan: NaN, inf: -Infinity, t: true, nil: null, arr: [1, 'two', [3]] }),
  'undefined at the top': () => undefined,
  'undefined in objects and arrays': () => ({ a: undefined, list: [undefined, 1], nested: { b: undefined } }),
  Dates: () => ({ at: new Date(Date.UTC(2026, 10, 24)), list: [new Date(1)] }),
  'Maps and Sets': () => ({
    m: new Map<unknown, unknown>([
      ['k', new Set([1, 'x'])],
      [2, { v: undefined }],
    ]),
    s: new Set([new Map()]),
  }),
  'Uint8Array, nested and at the top': () => ({ bytes: new Uint8Array([0, 255, 7]), list: [new Uint8Array(0)] }),
  'RegExp and Error': () => ({ re: /a+b/giu, err: new TypeError('bad'), errs: [new Error('x')] }),
  'a Send-shaped value and a DeltaSnapshot': () => ({
    send: { lg_name: 'Send', node: 'tools', args: { x: 1 }, other: 'dropped' },
    timed: { lg_name: 'Send', node: 'n', args: [], timeout: 5 },
    snap: new DeltaSnapshot([1, { a: undefined }]),
  }),
  messages: () => ({ messages: messages(), nested: new Map([['m', messages()[0]]]) }),
  'functions and symbols': () => ({ f: () => 1, sym: Symbol('s'), list: [() => 2, Symbol('t')], [Symbol('key')]: 1 }),
  'a value with toJSON': () => ({ custom: { toJSON: () => ({ replaced: undefined, when: new Date(5) }) } }),
  cycles: circular,
  'a message holding a cycle, or itself': () => {
    const loop: Record<string, unknown> = { name: 'loop' };
    loop.self = loop;
    const msg = new AIMessage({ content: 'x', additional_kwargs: { loop } });
    msg.response_metadata = { msg };
    return { messages: [msg] };
  },
  'a BigInt': () => ({ n: 10n }),
  'a throwing toJSON': () => ({
    bad: {
      toJSON() {
        throw new Error('no');
      },
    },
  }),
};

describe('CheckpointSerializer', () => {
  for (const [name, make] of Object.entries(CASES)) {
    it(`writes the stock bytes for ${name}`, async () => {
      const [stockType, stockBytes] = await stock.dumpsTyped(make());
      const [type, bytes] = await ours.dumpsTyped(make());
      expect(type).toBe(stockType);
      expect(text(bytes)).toBe(text(stockBytes));
    });
  }

  it('serializes a message once across the checkpoints that hold it unchanged', async () => {
    const [human, ai] = messages();
    const toJSON = vi.spyOn(human!, 'toJSON');
    for (let step = 0; step < 3; step++) {
      const value = { channel_values: { messages: [human, ai].slice(0, step + 1) } };
      expect(text((await ours.dumpsTyped(value))[1])).toBe(text((await stock.dumpsTyped(value))[1]));
    }
    // Three by the stock serializer, one by ours.
    expect(toJSON).toHaveBeenCalledTimes(4);
  });

  it('writes a message again once a field of it is reassigned (the id the messages reducer gives it, its content)', async () => {
    const ai = new AIMessage({ content: 'first' });
    const write = { messages: [ai] };
    await ours.dumpsTyped(write);
    // What messagesStateReducer does to a message without an id.
    ai.id = 'assigned';
    ai.lc_kwargs.id = ai.id;
    expect(text((await ours.dumpsTyped(write))[1])).toBe(text((await stock.dumpsTyped(write))[1]));
    expect(text((await ours.dumpsTyped(write))[1])).toContain('"assigned"');
    ai.content = 'second';
    expect(text((await ours.dumpsTyped(write))[1])).toBe(text((await stock.dumpsTyped(write))[1]));
  });

  it('writes the stock bytes for a value holding the text that stands for a message', async () => {
    const marker = '\u0000agentloop:message\u0000';
    const value = { messages: messages(), note: marker, [marker]: [marker, messages()[0]] };
    expect(text((await ours.dumpsTyped(value))[1])).toBe(text((await stock.dumpsTyped(value))[1]));
  });

  it('leaves a circular value as it found it', async () => {
    const value = circular();
    await ours.dumpsTyped(value);
    expect(value.a.self).toBe(value.a);
    expect((value.a.list as unknown[])[2]).toBe(value.a);
  });

  for (const [name, make] of Object.entries(CASES)) {
    it(`reads ${name} back as the stock reader does`, async () => {
      const [type, bytes] = await stock.dumpsTyped(make());
      expect(await ours.loadsTyped(type, bytes)).toStrictEqual(await stock.loadsTyped(type, bytes));
    });
  }

  it('reads back a message holding messages, and LangChain objects inside records it hands to the stock reader', async () => {
    const inner = new AIMessage({ content: 'inner' });
    const values = [
      { outer: new AIMessage({ content: 'outer', additional_kwargs: { quoted: inner } }) },
      { set: new Set([inner]), snap: new DeltaSnapshot([inner]) },
      JSON.parse(
        '{"__proto__": {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"], "kwargs": {"content": "p"}}}',
      ) as unknown,
    ];
    for (const value of values) {
      const [type, bytes] = await stock.dumpsTyped(value);
      const read = (await ours.loadsTyped(type, bytes)) as unknown;
      expect(read).toStrictEqual(await stock.loadsTyped(type, bytes));
    }
    const [type, bytes] = await ours.dumpsTyped(values[0]);
    const read = (await ours.loadsTyped(type, bytes)) as { outer: AIMessage };
    expect(read.outer).toBeInstanceOf(AIMessage);
    expect((read.outer.additional_kwargs.quoted as AIMessage).content).toBe('inner');
  });

  it('keeps unknown or malformed constructor records inert, as the stock reader does', async () => {
    const records = [
      { lc: 2, type: 'constructor', id: ['Function'], method: null, args: ['return 1'], kwargs: {} },
      { lc: 2, type: 'constructor', id: ['Set'], method: 'constructor', args: [[1]], kwargs: {} },
      { lc: 2, type: 'constructor', id: ['Map'], method: null, args: [[[1]]], kwargs: {} },
      { lc: 2, type: 'constructor', id: ['Uint8Array'], method: 'from', args: [[256]], kwargs: {} },
      { lc: 2, type: 'constructor', id: ['RegExp'], method: null, args: ['(', ''], kwargs: {} },
      { lc: 2, type: 'delta_snapshot' },
    ];
    for (const record of records) {
      const json = JSON.stringify({ record });
      expect(await ours.loadsTyped('json', json)).toStrictEqual(await stock.loadsTyped('json', json));
    }
  });
});
