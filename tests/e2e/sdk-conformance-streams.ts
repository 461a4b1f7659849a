/**
 * `client.runs.stream`, one stream mode at a time, with the payload LangGraph gives each mode
 * (issue 11, deliverable 3): values, updates, messages, messages-tuple, events, debug, tasks,
 * checkpoints, custom, several at once, and subgraph namespaces for delegated agents.
 */
import { expect, it } from 'vitest';
import type { Client, StreamMode } from '@langchain/langgraph-sdk';
import { scripted } from './helpers.js';
import { ask, collect, dataOf, type StreamEvent, type Target } from './sdk-harness.js';
import { TOOL_TURNS } from './sdk-conformance-threads.js';

type Msg = { type: string; content: string; id?: string; tool_calls?: Array<{ name: string }> };
type Values = { messages: Msg[] };
type Meta = Record<string, unknown>;
type Config = { configurable: { thread_id: string; checkpoint_id: string; checkpoint_ns: string } };

const ANSWER = 'The note is written and safe.';

async function streamTool(
  client: Client,
  streamMode: StreamMode | StreamMode[],
  extra: Record<string, unknown> = {},
): Promise<{ tid: string; events: StreamEvent[] }> {
  const { thread_id: tid } = await client.threads.create();
  const events = await collect(client.runs.stream(tid, 'agent', { input: ask('write a note'), config: scripted(TOOL_TURNS(ANSWER)), streamMode, ...extra }));
  // Never an error event, never the checkpointer's tenant-prefixed thread id.
  expect(events.filter((e) => e.event === 'error')).toEqual([]);
  expect(JSON.stringify(events)).not.toContain(`:${tid}`);
  expect(events[0]).toMatchObject({ event: 'metadata', data: { run_id: expect.any(String) } });
  return { tid, events };
}

/** The stream modes of the events (`end`, the SDK's end-of-run marker, left out). */
const modesSeen = (events: readonly StreamEvent[]) => new Set(events.filter((e) => e.event !== 'end').map((e) => e.event.split('|')[0]!.split('/')[0]!));

export function streamsTests(t: Target): void {
  it('runs.stream values: the input state first, then one full state per step, ending with the answer', async () => {
    const { events } = await streamTool(t.client, 'values');
    expect([...modesSeen(events)].sort()).toEqual(['metadata', 'values']);
    const values = dataOf<Values>(events, 'values');
    expect(values[0]!.messages.map((m) => m.type)).toEqual(['human']);
    expect(values.at(-1)!.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(values.at(-1)!.messages.at(-1)!.content).toBe(ANSWER);
  });

  it('runs.stream updates: one {node: update} per node run, agent → tools → agent', async () => {
    const { events } = await streamTool(t.client, 'updates');
    expect([...modesSeen(events)].sort()).toEqual(['metadata', 'updates']);
    const updates = dataOf<Record<string, Partial<Values>>>(events, 'updates');
    const nodes = updates.map((u) => Object.keys(u)[0]).filter((n) => n === 'agent' || n === 'tools');
    expect(nodes).toEqual(['agent', 'tools', 'agent']);
    expect(updates.find((u) => 'tools' in u)!.tools!.messages![0]).toMatchObject({ type: 'tool', name: 'write_file' });
    expect(
      updates
        .filter((u) => 'agent' in u)
        .at(-1)!
        .agent!.messages!.at(-1),
    ).toMatchObject({ type: 'ai', content: ANSWER });
    expect(updates.every((u) => Object.keys(u).length === 1)).toBe(true);
  });

  it('runs.stream messages-tuple: [message chunk, metadata] pairs that make up the answer, tool results whole', async () => {
    const { tid, events } = await streamTool(t.client, 'messages-tuple');
    const tuples = dataOf<[Msg, Meta]>(events, 'messages');
    expect(tuples.length).toBeGreaterThan(0);
    expect(events.some((e) => e.event === 'values' || e.event === 'updates')).toBe(false);
    const answer = tuples.filter(([m]) => m.type === 'AIMessageChunk' && typeof m.content === 'string' && m.content !== '');
    expect(answer.map(([m]) => m.content).join('')).toBe(ANSWER);
    expect(answer[0]![1]).toMatchObject({ langgraph_node: 'agent', thread_id: tid, run_id: expect.any(String), graph_id: 'agent' });
    expect(tuples.some(([m, meta]) => m.type === 'tool' && meta.langgraph_node === 'tools')).toBe(true);
  });

  it('runs.stream messages: messages/metadata, then messages/partial growing to the whole message; whole messages as messages/complete', async () => {
    const { events } = await streamTool(t.client, 'messages');
    const names = new Set(events.map((e) => e.event));
    expect(names.has('messages/metadata')).toBe(true);
    expect(names.has('messages/partial')).toBe(true);
    expect(names.has('messages/complete')).toBe(true);
    expect(names.has('messages')).toBe(false);
    const partials = dataOf<Msg[]>(events, 'messages/partial').map((p) => p[0]!);
    expect(partials.filter((m) => m.content !== '').at(-1)!.content).toBe(ANSWER);
    // Messages that arrive whole (the tool's result) come as messages/complete.
    const complete = dataOf<Msg[]>(events, 'messages/complete').flat();
    expect(complete.some((m) => m.type === 'tool')).toBe(true);
  });

  it('runs.stream events: LangChain callback events (chain, chat model) with name, run_id and data', async () => {
    const { events } = await streamTool(t.client, 'events');
    expect([...modesSeen(events)].sort()).toEqual(['events', 'metadata']);
    const evs = dataOf<{ event: string; name: string; run_id: string; data: Record<string, unknown>; metadata?: Meta }>(events, 'events');
    const kinds = new Set(evs.map((e) => e.event));
    for (const k of ['on_chain_start', 'on_chain_end', 'on_chat_model_start', 'on_chat_model_end']) expect(kinds.has(k)).toBe(true);
    expect(evs.every((e) => typeof e.name === 'string' && typeof e.run_id === 'string' && typeof e.data === 'object')).toBe(true);
    expect(evs.some((e) => e.event === 'on_chain_start' && e.name === 'agent')).toBe(true);
    expect(evs.some((e) => e.event === 'on_chain_start' && e.name === 'tools')).toBe(true);
    const modelEnd = evs.filter((e) => e.event === 'on_chat_model_end').at(-1)!;
    expect(JSON.stringify(modelEnd.data)).toContain(ANSWER);
  });

  it('runs.stream debug: checkpoint, task and task_result entries with step, timestamp and payload', async () => {
    const { tid, events } = await streamTool(t.client, 'debug');
    expect([...modesSeen(events)].sort()).toEqual(['debug', 'metadata']);
    const debug = dataOf<{ type: string; step: number; timestamp: string; payload: Record<string, unknown> }>(events, 'debug');
    expect(new Set(debug.map((d) => d.type))).toEqual(new Set(['checkpoint', 'task', 'task_result']));
    expect(debug.every((d) => typeof d.step === 'number' && !Number.isNaN(Date.parse(d.timestamp)))).toBe(true);
    expect(debug.find((d) => d.type === 'task' && d.payload.name === 'tools')!.payload).toMatchObject({
      id: expect.any(String),
      input: expect.any(Object),
      triggers: expect.any(Array),
    });
    expect(debug.find((d) => d.type === 'task_result' && d.payload.name === 'agent')!.payload).toMatchObject({
      id: expect.any(String),
      result: expect.anything(),
    });
    const cp = debug.filter((d) => d.type === 'checkpoint').at(-1)!.payload as { config: Config; values: Values; next: string[] };
    expect(cp.config.configurable.thread_id).toBe(tid);
    expect(cp.values.messages.at(-1)!.content).toBe(ANSWER);
  });

  it('runs.stream tasks: a start (id, name, input, triggers) and a result (id, name, result, interrupts) per node run', async () => {
    const { events } = await streamTool(t.client, 'tasks');
    expect([...modesSeen(events)].sort()).toEqual(['metadata', 'tasks']);
    const tasks = dataOf<{ id: string; name: string; input?: unknown; triggers?: string[]; result?: unknown; interrupts?: unknown[] }>(events, 'tasks');
    const starts = tasks.filter((x) => 'triggers' in x);
    const results = tasks.filter((x) => 'result' in x);
    expect(starts.map((x) => x.name).filter((n) => n === 'agent' || n === 'tools')).toEqual(['agent', 'tools', 'agent']);
    expect(results.map((x) => x.id).sort()).toEqual(starts.map((x) => x.id).sort());
    expect(results.every((x) => Array.isArray(x.interrupts))).toBe(true);
  });

  it('runs.stream checkpoints: one checkpoint per step with config, metadata, values, next and parent_config, as the history has them', async () => {
    const { tid, events } = await streamTool(t.client, 'checkpoints');
    expect([...modesSeen(events)].sort()).toEqual(['checkpoints', 'metadata']);
    const cps = dataOf<{ config: Config; parent_config?: Config; metadata: Meta; values: Values; next: string[]; tasks: unknown[] }>(events, 'checkpoints');
    expect(cps.length).toBeGreaterThanOrEqual(4);
    expect(cps.every((c) => c.config.configurable.thread_id === tid && Array.isArray(c.next) && Array.isArray(c.tasks))).toBe(true);
    for (let i = 1; i < cps.length; i++) expect(cps[i]!.parent_config?.configurable.checkpoint_id).toBe(cps[i - 1]!.config.configurable.checkpoint_id);
    expect(cps.at(-1)!.values.messages.at(-1)!.content).toBe(ANSWER);
    const history = await t.client.threads.getHistory(tid, { limit: 100 });
    expect(history.map((h) => h.checkpoint.checkpoint_id)).toEqual(expect.arrayContaining(cps.map((c) => c.config.configurable.checkpoint_id)));
  });

  it('runs.stream custom: accepted; only custom events (no values or updates) follow the metadata', async () => {
    const { events } = await streamTool(t.client, 'custom');
    expect(events.filter((e) => !['metadata', 'custom', 'end'].includes(e.event))).toEqual([]);
  });

  it('runs.stream with several modes yields each; an unknown mode is 422 naming stream_mode', async () => {
    const { events } = await streamTool(t.client, ['values', 'updates', 'tasks', 'checkpoints']);
    expect([...modesSeen(events)].sort()).toEqual(['checkpoints', 'metadata', 'tasks', 'updates', 'values']);
    const { thread_id: tid } = await t.client.threads.create();
    const bad = await fetch(`${t.url}/threads/${tid}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', input: ask('x'), stream_mode: ['values', 'telepathy'] }),
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('stream_mode');
  });

  it("runs.stream with streamSubgraphs: a delegated agent's events arrive under its namespace (mode|ns)", async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const events = await collect(
      t.client.runs.stream(tid, 'agent', {
        input: ask('@general write it'),
        streamMode: ['values', 'updates'],
        streamSubgraphs: true,
        config: {
          configurable: {
            model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'delegate_task', args: { task: 'say hi' } }] }, { content: 'The child said hi.' }] },
            delegates: { '*': [{ content: 'hi from the child' }] },
          },
        },
      }),
    );
    const namespaced = events.filter((e) => /^(values|updates)\|.+/.test(e.event));
    expect(namespaced.length).toBeGreaterThan(0);
    expect(JSON.stringify(namespaced.map((e) => e.data))).toContain('hi from the child');
    expect(dataOf<Values>(events, 'values').at(-1)!.messages.at(-1)!.content).toBe('The child said hi.');
    expect(JSON.stringify(events)).not.toContain(`:${tid}`);
  });
}
