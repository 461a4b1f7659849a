/**
 * The checkpoint serializer both savers use (CheckpointSerializer, @agentloop/checkpoint-mysql)
 * writes what LangGraph's JsonPlusSerializer writes, byte for byte, for everything the agent graph
 * checkpoints — so checkpoints stay readable by the stock serializer and the official savers, and
 * older ones by this one. The corpus is real: runs of the graph, one of them suspended on an
 * approval and resumed with a Command.
 */
import { describe, expect, it } from 'vitest';
import { Command, MemorySaver, Send } from '@langchain/langgraph';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { CheckpointSerializer } from '@agentloop/checkpoint-mysql';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { buildAgentGraph, type AgentGraphDeps } from './graph.js';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted.js';
import { fakeApprovals, fakeCtx } from './graph/testing.js';
import { humanInterrupts } from './run-executor.js';

const stock = new JsonPlusSerializer();

/** Serializes with CheckpointSerializer and keeps every value it was given with both encodings. */
class ComparingSerializer extends CheckpointSerializer {
  readonly seen: Array<{ fast: Uint8Array; stock: Uint8Array; type: string }> = [];
  override async dumpsTyped(obj: unknown): Promise<[string, Uint8Array]> {
    const [type, fast] = await super.dumpsTyped(obj);
    const [stockType, stockBytes] = await stock.dumpsTyped(obj);
    expect(type).toBe(stockType);
    this.seen.push({ fast, stock: stockBytes, type });
    return [type, fast];
  }
}

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

function graphOver(serde: CheckpointSerializer, turns: ScriptedTurn[], approvals = fakeApprovals({})) {
  const tools: AgentGraphDeps['tools'] = {
    listTools: async () => [spec('now'), spec('rm')],
    execute: async (call) => ({ content: `ran ${call.name}`, isError: false }),
  };
  const ctx = fakeCtx({}, new ScriptedChatModel(turns));
  const checkpointer = new MemorySaver(serde);
  const graph = buildAgentGraph({ tools, checkpointer, approvals, runContext: () => ctx });
  return { graph, config: { configurable: { thread_id: 'th1', run_id: 'r1' } } };
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

describe('CheckpointSerializer on what the agent graph checkpoints', () => {
  it('writes the stock bytes for every checkpoint and write of a run, and each reads back as the stock reader reads it', async () => {
    const serde = new ComparingSerializer();
    const { graph, config } = graphOver(serde, [
      { tool_calls: [{ name: 'now', args: {} }] },
      { tool_calls: [{ name: 'now', args: { again: true, nested: [1, 'two', { three: null }] } }] },
      { content: 'It is now.' },
    ]);
    await graph.invoke({ messages: [new HumanMessage('what time is it?')], loops: 0, max_loops: 20 }, { ...config, durability: 'sync' });
    expect((await graph.getState(config)).values.messages.at(-1).content).toBe('It is now.');

    expect(serde.seen.length).toBeGreaterThan(20);
    for (const { fast, stock: stockBytes, type } of serde.seen) {
      expect(text(fast)).toBe(text(stockBytes));
      expect(await serde.loadsTyped(type, fast)).toStrictEqual(await stock.loadsTyped(type, fast));
    }
  });

  it('does the same for a run suspended on an approval (an interrupt) and resumed with a Command', async () => {
    const serde = new ComparingSerializer();
    const { graph, config } = graphOver(
      serde,
      [{ tool_calls: [{ name: 'rm', args: { path: 'a' } }] }, { content: 'done' }],
      fakeApprovals({ rm: 'require_approval' }),
    );
    await graph.invoke({ messages: [new HumanMessage('remove a')], loops: 0, max_loops: 20 }, { ...config, durability: 'sync' });
    expect(humanInterrupts(await graph.getState(config))).toHaveLength(1);
    await graph.invoke(new Command({ resume: { decision: 'approve', by: 'alice' } }), { ...config, durability: 'sync' });
    expect(((await graph.getState(config)).values.messages as BaseMessage[]).at(-1)!.content).toBe('done');

    const interrupts = serde.seen.filter(({ stock: s }) => text(s).includes('"__interrupt__"') || text(s).includes('"interrupts"'));
    expect(interrupts.length).toBeGreaterThan(0);
    for (const { fast, stock: stockBytes, type } of serde.seen) {
      expect(text(fast)).toBe(text(stockBytes));
      expect(await serde.loadsTyped(type, fast)).toStrictEqual(await stock.loadsTyped(type, fast));
    }
  });

  it("writes the stock bytes for LangGraph's own objects: Commands with Sends, Sends, interrupts", async () => {
    const values: unknown[] = [
      new Command({ resume: { decision: 'approve', by: 'alice' } }),
      new Command({ goto: [new Send('tools', { call: { id: 'c1', args: {} } })], update: { loops: 1, messages: [new AIMessage('x')] } }),
      [new Send('agent', { messages: [new HumanMessage('hi')] }), new Send('tools', undefined)],
      [{ value: { type: 'tool_approval', tool: 'rm', args: { path: undefined } }, id: 'i1' }],
      { messages: [new ToolMessage({ content: 'ran', tool_call_id: 'c1', status: 'error' })], at: new Date(0), seen: new Set(['c1']) },
    ];
    for (const value of values) {
      const [type, bytes] = await new CheckpointSerializer().dumpsTyped(value);
      const [stockType, stockBytes] = await stock.dumpsTyped(value);
      expect(type).toBe(stockType);
      expect(text(bytes)).toBe(text(stockBytes));
      expect(await new CheckpointSerializer().loadsTyped(type, bytes)).toStrictEqual(await stock.loadsTyped(type, bytes));
    }
  });
});
