import { describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { HumanMessage, AIMessage, ToolMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolSpecSchema, ToolMetadataSchema } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import { buildAgentGraph, detectRepeatedToolCall, type RunContext } from './graph.js';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted.js';
import type { ToolCallInput, ToolCallResult } from './tool-client.js';

interface FakeTools {
  calls: ToolCallInput[];
  listTools(): Promise<ReturnType<typeof spec>[]>;
  execute(call: ToolCallInput): Promise<ToolCallResult>;
}

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

/** A tool peer that echoes, fails on "boom", and records what it was asked. */
function fakeTools(): FakeTools {
  const calls: ToolCallInput[] = [];
  return {
    calls,
    async listTools() {
      return [spec('echo'), spec('boom')];
    },
    async execute(call) {
      calls.push(call);
      if (call.name === 'boom') return { content: 'Error: Unexpected error: Error: kaboom', isError: true, errorCode: 'TOOL_FAILED' };
      return { content: `echo:${JSON.stringify(call.args)}`, isError: false };
    },
  };
}

async function run(turns: ScriptedTurn[], opts: { maxLoops?: number; capture?: BaseMessage[][] } = {}) {
  const tools = fakeTools();
  const model = new ScriptedChatModel(turns);
  if (opts.capture) {
    const orig = model._generate.bind(model);
    model._generate = async (msgs, o) => {
      opts.capture!.push(msgs);
      return orig(msgs, o);
    };
  }
  const ctx: RunContext = {
    runId: 'r1',
    tenantId: 't1',
    threadId: 'th1',
    model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
    logger: silentLogger(),
    signal: new AbortController().signal,
  };
  const graph = buildAgentGraph({ tools, checkpointer: new MemorySaver(), runContext: (id) => (id === 'r1' ? ctx : undefined) });
  const config = { configurable: { thread_id: 't1:th1', run_id: 'r1' }, recursionLimit: 1200 };
  const out = await graph.invoke({ messages: [new HumanMessage('hi')], loops: 0, max_loops: opts.maxLoops ?? 100 }, config);
  return { out, tools, graph, config };
}

describe('agent loop', () => {
  it('answers directly when the model calls no tool', async () => {
    const { out, tools } = await run([{ content: 'hello there' }]);
    const last = out.messages.at(-1)!;
    expect(AIMessage.isInstance(last) && last.content).toBe('hello there');
    expect(tools.calls).toHaveLength(0);
    expect(out.loops).toBe(1);
  });

  it('executes tool calls and feeds their results back to the model', async () => {
    const { out, tools } = await run([{ tool_calls: [{ name: 'echo', args: { a: 1 } }] }, { content: 'done' }]);
    expect(tools.calls.map((c) => c.name)).toEqual(['echo']);
    const tm = out.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(tm.content).toBe('echo:{"a":1}');
    expect(tm.tool_call_id).toBe('call_s1_1');
    expect(out.messages.at(-1)!.content).toBe('done');
  });

  it('turns a tool failure into an "Error:" tool message and keeps looping', async () => {
    const { out } = await run([{ tool_calls: [{ name: 'boom', args: {} }] }, { content: 'recovered' }]);
    const tm = out.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(String(tm.content).startsWith('Error:')).toBe(true);
    expect(out.messages.at(-1)!.content).toBe('recovered');
  });

  it('forces finalize with an explanation when max_loops is reached', async () => {
    const turns: ScriptedTurn[] = Array.from({ length: 10 }, (_, i) => ({ tool_calls: [{ name: 'echo', args: { i } }] }));
    const { out, tools } = await run(turns, { maxLoops: 3 });
    expect(out.loops).toBe(3);
    expect(tools.calls).toHaveLength(2); // the third turn's call is not executed
    const last = out.messages.at(-1)!;
    expect(String(last.content)).toContain('limit of 3 agent steps');
    expect(out.finalize_reason).toBe('loop_limit');
    // history stays valid: every tool call has a result
    const ids = out.messages.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []).map((t) => t.id) : []));
    const answered = out.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id);
    expect(answered.sort()).toEqual(ids.sort());
  });

  it('forces finalize when the same call with the same arguments repeats three times in a row', async () => {
    const same = { tool_calls: [{ name: 'echo', args: { q: 'x', n: 1 } }] };
    const { out, tools } = await run([same, same, same, same, { content: 'never' }]);
    expect(tools.calls).toHaveLength(2);
    expect(out.finalize_reason).toBe('repeated_tool_call');
    expect(String(out.messages.at(-1)!.content)).toContain('"echo" with the same arguments three times');
  });

  it('does not treat calls with different arguments as repeated', async () => {
    const { out, tools } = await run([
      { tool_calls: [{ name: 'echo', args: { n: 1 } }] },
      { tool_calls: [{ name: 'echo', args: { n: 2 } }] },
      { tool_calls: [{ name: 'echo', args: { n: 3 } }] },
      { content: 'ok' },
    ]);
    expect(tools.calls).toHaveLength(3);
    expect(out.finalize_reason).toBeNull();
  });

  it('builds the system prompt on every call with the current UTC time and never stores it', async () => {
    const capture: BaseMessage[][] = [];
    const { out } = await run([{ tool_calls: [{ name: 'echo', args: {} }] }, { content: 'ok' }], { capture });
    expect(capture).toHaveLength(2);
    for (const msgs of capture) {
      expect(SystemMessage.isInstance(msgs[0]!)).toBe(true);
      expect(String(msgs[0]!.content)).toMatch(/<current_datetime>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/current_datetime>/);
      expect(msgs.filter((m) => SystemMessage.isInstance(m))).toHaveLength(1);
    }
    expect(out.messages.some((m) => SystemMessage.isInstance(m))).toBe(false);
  });
});

describe('detectRepeatedToolCall', () => {
  it('treats argument key order as the same call', () => {
    const ai = (args: Record<string, unknown>) => new AIMessage({ content: '', tool_calls: [{ name: 't', args, id: String(Math.random()) }] });
    expect(detectRepeatedToolCall([ai({ a: 1, b: 2 }), ai({ b: 2, a: 1 }), ai({ a: 1, b: 2 })])).toBe('t');
    expect(detectRepeatedToolCall([ai({ a: 1 }), ai({ a: 1 })])).toBeNull();
  });
});
