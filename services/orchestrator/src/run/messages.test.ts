import { describe, expect, it } from 'vitest';
import { AIMessage, AIMessageChunk, RemoveMessage, ToolMessage } from '@langchain/core/messages';
import { chunkToJson, MessageEvents, publicMetadata, wantsTokens } from './messages.js';
import { streamGraph } from './stream.js';
import { ScriptedChatModel, splitText } from '../models/scripted.js';
import { log, recordingEvents, stateWith } from './testing.js';

const run = { runId: 'r1', threadId: 'th1', tenantId: 't1', assistantId: 'a1' };
const meta = {
  langgraph_node: 'agent',
  langgraph_step: 1,
  langgraph_checkpoint_ns: 'agent:abc',
  thread_id: 't1:th1',
  run_id: 'r1',
  __pregel_task_id: 'x',
  nested: { path: 'checkpoint of t1:th1', __secret: 1 },
  store: new (class Store {})(),
};

describe('token events', () => {
  it('wantsTokens: only for messages or messages-tuple', () => {
    expect(wantsTokens(['values', 'messages-tuple'])).toBe(true);
    expect(wantsTokens(['messages'])).toBe(true);
    expect(wantsTokens(['values', 'updates', 'custom'])).toBe(false);
    expect(wantsTokens(undefined)).toBe(false);
  });

  it('publicMetadata: the public thread id, run and graph ids; no internal entries or tenant-prefixed ids', () => {
    const m = publicMetadata(meta, run);
    expect(m).toMatchObject({
      langgraph_node: 'agent',
      langgraph_step: 1,
      thread_id: 'th1',
      run_id: 'r1',
      graph_id: 'agent',
      assistant_id: 'a1',
      nested: { path: 'checkpoint of th1' },
    });
    expect(JSON.stringify(m)).not.toContain('t1:th1');
    expect(JSON.stringify(m)).not.toContain('__');
    expect(m.store).toBeUndefined();
  });

  it('chunkToJson: AIMessageChunk type with tool_call_chunks; whole messages keep their type', () => {
    const c = chunkToJson(
      new AIMessageChunk({ id: 'm1', content: '', tool_call_chunks: [{ type: 'tool_call_chunk', index: 0, id: 'c1', name: 'x', args: '{"a"' }] }),
    );
    expect(c).toMatchObject({ type: 'AIMessageChunk', id: 'm1', tool_call_chunks: [{ id: 'c1', name: 'x', args: '{"a"', index: 0 }] });
    expect(chunkToJson(new ToolMessage({ content: 'ok', tool_call_id: 'c1' }))).toMatchObject({ type: 'tool', tool_call_id: 'c1' });
  });

  it('messages-tuple gives [chunk, metadata]; messages gives metadata once, partials accumulated, complete for whole messages', () => {
    const both = new MessageEvents(['messages-tuple', 'messages'], run);
    const a = both.events([new AIMessageChunk({ id: 'm1', content: 'Hel' }), meta]);
    expect(a.map(([e]) => e)).toEqual(['messages', 'messages/metadata', 'messages/partial']);
    expect(a[0]![1]).toEqual([expect.objectContaining({ type: 'AIMessageChunk', content: 'Hel' }), expect.objectContaining({ thread_id: 'th1' })]);
    expect(a[1]![1]).toEqual({ m1: { metadata: expect.objectContaining({ langgraph_node: 'agent' }) } });
    const b = both.events([new AIMessageChunk({ id: 'm1', content: 'lo' }), meta]);
    expect(b.map(([e]) => e)).toEqual(['messages', 'messages/partial']);
    expect(b[1]![1]).toEqual([expect.objectContaining({ type: 'ai', id: 'm1', content: 'Hello' })]);

    const family = new MessageEvents(['messages'], run);
    const c = family.events([new AIMessage({ id: 'm2', content: 'whole' }), meta]);
    expect(c.map(([e]) => e)).toEqual(['messages/metadata', 'messages/complete']);
    expect(family.events([new RemoveMessage({ id: 'm2' }), meta])).toEqual([]);
    expect(new MessageEvents(['messages-tuple'], run).events([new AIMessageChunk({ id: 'm3', content: 'x' }), meta]).map(([e]) => e)).toEqual(['messages']);
  });

  it('streamGraph asks LangGraph for the messages mode only when the run wants tokens, and publishes them', async () => {
    const cp = { configurable: { thread_id: 't1:th1', run_id: 'r1' } };
    const make = () => {
      const g = {
        options: undefined as { streamMode?: string[] } | undefined,
        async stream(_input: unknown, options: { streamMode?: string[] }) {
          g.options = options;
          return (async function* () {
            yield ['messages', [new AIMessageChunk({ id: 'm1', content: 'Hi' }), meta]];
            yield ['values', { messages: [], loops: 1 }];
          })();
        },
        async getState() {
          return stateWith({ loops: 1 });
        },
      };
      return g as typeof g & Parameters<typeof streamGraph>[0];
    };
    const opts = { cpConfig: cp, maxLoops: 4, signal: new AbortController().signal, durability: 'sync' as const };
    const tokens = make();
    const events = recordingEvents();
    await streamGraph(tokens, events, { ...run, streamMode: ['values', 'messages-tuple'] }, null, opts, { values: null }, log);
    expect(tokens.options!.streamMode).toEqual(['values', 'updates', 'messages']);
    const published = events.published.map((p) => p.event);
    expect(published).toEqual(['messages', 'values']);

    const plain = make();
    await streamGraph(plain, recordingEvents(), { ...run, streamMode: ['values'] }, null, opts, { values: null }, log);
    expect(plain.options!.streamMode).toEqual(['values', 'updates']);
  });
});

describe('scripted model streaming', () => {
  it('splitText: a few pieces that join to the text', () => {
    expect(splitText('', 4)).toEqual([]);
    expect(splitText('abcdefghij', 4).join('')).toBe('abcdefghij');
    expect(splitText('abcdefghij', 4).length).toBeLessThanOrEqual(4);
  });

  it('streams the turn in chunks that concatenate to what _generate returns', async () => {
    const model = new ScriptedChatModel([{ content: 'Hello there, streaming world', tool_calls: [{ name: 'read_file', args: { file_path: 'a.txt' } }] }]);
    const chunks: AIMessageChunk[] = [];
    for await (const c of await model.stream([], { scripted_turn: 0 })) chunks.push(c);
    expect(chunks.length).toBeGreaterThanOrEqual(5);
    const whole = chunks.reduce((a, b) => a.concat(b));
    const direct = await model.invoke([], { scripted_turn: 0 });
    expect(whole.content).toBe(direct.content);
    expect(whole.tool_calls).toEqual([expect.objectContaining({ name: 'read_file', args: { file_path: 'a.txt' }, id: 'call_s1_1' })]);
    expect(whole.usage_metadata).toMatchObject(direct.usage_metadata!);
    expect(whole.response_metadata).toMatchObject({ model_provider: 'scripted', turn: 1 });
  });
});
