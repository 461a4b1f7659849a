import { describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { HumanMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import { buildAgentGraph, type RunContext } from '../graph.js';
import { ScriptedChatModel, type ScriptedTurn } from '../models/scripted.js';
import { streamGraph, type StreamJob } from './stream.js';
import { graphInput } from './input.js';
import { fakeJob, log, recordingEvents } from './testing.js';
import { aloneInGraph } from '../graph/testing.js';

const INTERNAL = 't1:th1';
const spec = create(ToolSpecSchema, { name: 'echo', description: 'echo', parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });
const toolTurn: ScriptedTurn = { tool_calls: [{ name: 'echo', args: { x: 1 }, id: 'call1' }] };

/** The real agent graph over a scripted model and an echo tool, on one checkpointer; `stream` runs it as the executor does. */
function agent(turns: ScriptedTurn[]) {
  const executed: string[] = [];
  const tools = {
    async listTools() {
      return [spec];
    },
    async execute(call: { name: string; args: unknown }) {
      executed.push(call.name);
      return { content: `echo:${JSON.stringify(call.args)}`, isError: false };
    },
  };
  const ctx: RunContext = {
    runId: 'r1',
    tenantId: 't1',
    threadId: 'th1',
    model: { model: new ScriptedChatModel(turns), label: 'scripted', provider: 'scripted', modelId: 'scripted' },
    logger: silentLogger(),
    signal: new AbortController().signal,
  };
  const graph = buildAgentGraph({ tools: tools as never, checkpointer: new MemorySaver(), runContext: (id) => (id === ctx.runId ? ctx : undefined) });
  const cpConfig = { configurable: { thread_id: INTERNAL, run_id: 'r1' } };
  const stream = async (job: Partial<StreamJob>, input: unknown = { messages: [new HumanMessage('hi')], loops: 0, max_loops: 10, context_id: 'r1' }) => {
    const events = recordingEvents();
    const stopped = await streamGraph(
      graph,
      events,
      { runId: 'r1', threadId: 'th1', tenantId: 't1', ...job },
      input as never,
      { cpConfig, maxLoops: 10, signal: new AbortController().signal, durability: 'sync' },
      { values: null },
      log,
    );
    return { stopped, published: events.published, of: (e: string) => events.published.filter((p) => p.event === e).map((p) => p.data) };
  };
  return { graph, cpConfig, executed, stream };
}

/** Every payload published, as JSON: where a leak of the checkpoint thread id would show. */
const wire = (published: Array<{ event: string; data: unknown }>) => JSON.stringify(published);

describe('stream modes', () => {
  it('produces only values and updates when no other mode is asked for', async () => {
    const { published } = await agent([{ content: 'hello' }]).stream({ streamMode: ['values'] });
    expect(new Set(published.map((p) => p.event))).toEqual(new Set(['values', 'updates']));
  });

  it('checkpoints: LangGraph Platform checkpoint payloads with the public thread id and public values', async () => {
    const { of, published } = await agent([{ content: 'hello' }]).stream({ streamMode: ['checkpoints'] });
    const cps = of('checkpoints') as Array<Record<string, any>>;
    expect(cps.length).toBeGreaterThanOrEqual(3);
    const last = cps.at(-1)!;
    expect(last.config.configurable).toMatchObject({ thread_id: 'th1', checkpoint_ns: '' });
    expect(Object.keys(last.config.configurable).some((k) => k.startsWith('__'))).toBe(false);
    expect(last.checkpoint).toEqual({ thread_id: 'th1', checkpoint_ns: '', checkpoint_id: last.config.configurable.checkpoint_id, checkpoint_map: null });
    expect(last.parent_checkpoint).toMatchObject({ thread_id: 'th1', checkpoint_id: cps.at(-2)!.checkpoint.checkpoint_id });
    expect(last.parent_config.configurable.thread_id).toBe('th1');
    expect(last).not.toHaveProperty('parentConfig');
    expect(last.next).toEqual([]);
    expect(last.values.messages.map((m: { content: unknown }) => m.content)).toEqual(['hi', 'hello']);
    expect(last.values).not.toHaveProperty('context_id');
    expect(last.metadata).toMatchObject({ source: 'loop' });
    expect(wire(published)).not.toContain(INTERNAL);
  });

  it('tasks: a task (name, input with public keys, triggers) then its result', async () => {
    const { of } = await agent([{ content: 'hello' }]).stream({ streamMode: ['tasks'] });
    const tasks = of('tasks') as Array<Record<string, any>>;
    const start = tasks.find((t) => t.name === 'agent' && 'input' in t)!;
    expect(start).toMatchObject({ name: 'agent', interrupts: [] });
    expect(start.input.messages[0]).toMatchObject({ type: 'human', content: 'hi' });
    expect(start.input).not.toHaveProperty('context_id');
    const result = tasks.find((t) => t.id === start.id && 'result' in t)!;
    expect(result.result.messages[0]).toMatchObject({ type: 'ai', content: 'hello' });
    expect(result.result).not.toHaveProperty('run_usage');
  });

  it('debug: checkpoint, task and task_result events with step, timestamp and public payloads', async () => {
    const { of, published } = await agent([{ content: 'hello' }]).stream({ streamMode: ['debug'] });
    const debug = of('debug') as Array<Record<string, any>>;
    expect(new Set(debug.map((d) => d.type))).toEqual(new Set(['checkpoint', 'task', 'task_result']));
    for (const d of debug) expect(d).toMatchObject({ step: expect.any(Number), timestamp: expect.any(String), payload: expect.any(Object) });
    const cp = debug.find((d) => d.type === 'checkpoint')!;
    expect(cp.payload.checkpoint.thread_id).toBe('th1');
    expect(debug.find((d) => d.type === 'task_result' && d.payload.name === 'agent')!.payload.result.messages[0].content).toBe('hello');
    expect(wire(published)).not.toContain(INTERNAL);
  });

  it('events: LangChain stream events v2 of the run, with the stream modes still published', async () => {
    const { of, published } = await agent([toolTurn, { content: 'done' }]).stream({ streamMode: ['events', 'values'] });
    const events = of('events') as Array<Record<string, any>>;
    const kinds = new Set(events.map((e) => e.event));
    for (const k of ['on_chain_start', 'on_chain_end', 'on_chat_model_start', 'on_chat_model_end']) expect(kinds).toContain(k);
    const root = events.find((e) => e.event === 'on_chain_start' && e.parent_ids.length === 0)!;
    expect(root.data.input).not.toHaveProperty('context_id');
    expect(root.run_id).toBe('r1');
    const agentNode = events.find((e) => e.event === 'on_chain_start' && e.name === 'agent')!;
    expect(agentNode.metadata).toMatchObject({ langgraph_node: 'agent', thread_id: 'th1', run_id: 'r1' });
    const modelEnd = events.find((e) => e.event === 'on_chat_model_end')!;
    expect(modelEnd.data.output.tool_calls[0]).toMatchObject({ name: 'echo', id: 'call1' });
    // The root graph's on_chain_stream events are the stream-mode chunks, not events.
    expect(events.some((e) => e.event === 'on_chain_stream' && e.parent_ids.length === 0)).toBe(false);
    expect((of('values').at(-1) as { messages: Array<{ content: unknown }> }).messages.at(-1)!.content).toBe('done');
    expect(wire(published)).not.toContain(INTERNAL);
  });
});

describe('custom stream mode', () => {
  it('passes what a node writes with config.writer, only when asked for, with the checkpoint thread id made public', async () => {
    const { graph, config } = aloneInGraph(async (_state, cfg) => {
      cfg.writer?.({ progress: 'half', where: `${INTERNAL}/x` });
      return {};
    });
    const run = async (streamMode: string[]) => {
      const events = recordingEvents();
      await streamGraph(
        graph as never,
        events,
        { runId: 'r1', threadId: 'th1', tenantId: 't1', streamMode },
        { messages: [] } as never,
        { cpConfig: { configurable: { ...config.configurable, thread_id: INTERNAL } }, maxLoops: 10, signal: new AbortController().signal, durability: 'sync' },
        { values: null },
        log,
      );
      return events.published.filter((e) => e.event === 'custom').map((e) => e.data);
    };
    expect(await run(['custom'])).toEqual([{ progress: 'half', where: 'th1/x' }]);
    expect(await run(['values'])).toEqual([]);
  });
});

describe('interrupt_before / interrupt_after', () => {
  it('interrupt_before tools stops before the tool runs; a run without input continues from the checkpoint', async () => {
    const a = agent([toolTurn, { content: 'done' }]);
    const first = await a.stream({ interruptBefore: ['tools'] });
    expect(first.stopped).toMatchObject({ kind: 'waits_for_human', next: ['tools'] });
    expect(first.stopped.values).not.toHaveProperty('__interrupt__');
    expect(a.executed).toEqual([]);
    expect((await a.graph.getState(a.cpConfig)).next).toEqual(['tools']);
    // The next run has no input: graphInput continues from the checkpoint (null), and the tool runs.
    const input = await graphInput(a.graph, fakeJob({ runId: 'r2', inputJson: '' }), a.cpConfig, 10, 0);
    expect(input).toBeNull();
    const second = await a.stream({}, input);
    expect(second.stopped.kind).toBe('success');
    expect(a.executed).toEqual(['echo']);
    expect((second.stopped.values.messages as Array<{ content: unknown }>).at(-1)!.content).toBe('done');
  });

  it('interrupt_after agent ("*" too) stops after the node; a command.resume continues', async () => {
    const a = agent([toolTurn, { content: 'done' }]);
    const first = await a.stream({ interruptAfter: ['agent'] });
    expect(first.stopped).toMatchObject({ kind: 'waits_for_human', next: ['tools'] });
    // As LangGraph streams such a stop: the node's update, then an empty `__interrupt__` update.
    expect(first.of('updates')).toEqual([expect.objectContaining({ agent: expect.any(Object) }), { __interrupt__: [] }]);
    const resume = await graphInput(a.graph, fakeJob({ runId: 'r2', commandJson: '{"resume":"go"}' }), a.cpConfig, 10, 0);
    const second = await a.stream({ interruptAfter: ['*'] }, resume);
    // "*" stops after every node: the tool ran, the agent has not yet answered.
    expect(second.stopped).toMatchObject({ kind: 'waits_for_human', next: ['agent'] });
    expect(a.executed).toEqual(['echo']);
  });
});
