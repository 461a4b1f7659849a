/**
 * Every LangGraph stream mode, interrupt_before / interrupt_after and subgraph namespaces through
 * the official SDK (issue 11, deliverable 3), embedded, with a scripted model: `debug`, `tasks`,
 * `checkpoints` and `events` carry LangGraph's payloads with the public thread id; a run with
 * `interruptBefore: ["tools"]` succeeds with the thread `interrupted` before the tool, and a run
 * without input continues it; with `streamSubgraphs`, a delegated agent's events reach the
 * parent's stream as `<mode>|delegate:<tool call id>`.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, useEmbeddedServer } from './helpers.js';

type Event = { event: string; data: unknown };
type Msg = { type: string; content: unknown; tool_call_id?: string };

const TOOL_TURN = { tool_calls: [{ name: 'todo_write', args: { todos: [{ content: 'draft', status: 'pending' }] }, id: 'call_todo' }] };
const ANSWER = 'The plan has one step: the draft.';
const TURNS = [TOOL_TURN, { content: ANSWER }];
// The scripted model plays turns by the run's own model calls: the continuing run's first call answers.
const CONTINUED = [{ content: ANSWER }];

async function collect(stream: AsyncIterable<{ event: string; data: unknown }>): Promise<Event[]> {
  const events: Event[] = [];
  for await (const e of stream) events.push({ event: e.event, data: e.data });
  return events;
}

const of = (events: Event[], name: string) => events.filter((e) => e.event === name).map((e) => e.data as Record<string, any>);

describe('stream modes, interrupt_before/after and subgraphs through the SDK (embedded)', () => {
  const server = useEmbeddedServer('agentloop-stream-modes-');
  const client = () => new Client({ apiUrl: server.url });

  it('interruptBefore tools: debug, tasks, checkpoints and events stream; the thread waits before the tool; a run without input continues', async () => {
    const c = client();
    const tid = (await c.threads.create()).thread_id;
    const events = await collect(
      c.runs.stream(tid, 'agent', {
        input: { messages: [{ role: 'user', content: 'plan it' }] },
        config: scripted(TURNS),
        streamMode: ['values', 'updates', 'debug', 'tasks', 'checkpoints', 'events'],
        interruptBefore: ['tools'],
      }),
    );
    const names = new Set(events.map((e) => e.event));
    for (const n of ['metadata', 'values', 'updates', 'debug', 'tasks', 'checkpoints', 'events']) expect(names).toContain(n);

    const checkpoints = of(events, 'checkpoints');
    const last = checkpoints.at(-1)!;
    expect(last.next).toEqual(['tools']);
    expect(last.checkpoint).toMatchObject({ thread_id: tid, checkpoint_ns: '', checkpoint_id: expect.any(String) });
    expect(last.config.configurable.thread_id).toBe(tid);
    expect(last.values).not.toHaveProperty('context_id');
    const debugTypes = new Set(of(events, 'debug').map((d) => d.type));
    expect(debugTypes).toEqual(new Set(['checkpoint', 'task', 'task_result']));
    expect(of(events, 'tasks').some((t) => t.name === 'agent' && t.result?.messages?.[0]?.tool_calls?.[0]?.name === 'todo_write')).toBe(true);
    const lcEvents = of(events, 'events');
    expect(lcEvents.some((e) => e.event === 'on_chat_model_end' && e.metadata.langgraph_node === 'agent')).toBe(true);
    expect(lcEvents.every((e) => e.metadata.thread_id === tid)).toBe(true);
    // The tool did not run: no tool message, and no tool events.
    expect(lcEvents.some((e) => e.event === 'on_chain_start' && e.name === 'tools')).toBe(false);
    // Never the checkpoint's tenant-prefixed thread id.
    expect(JSON.stringify(events)).not.toContain(`:${tid}`);

    const [run] = await c.runs.list(tid);
    expect(run!.status).toBe('success');
    expect((await c.threads.get(tid)).status).toBe('interrupted');
    // The thread's latest checkpoint waits before the tools node (GET /state reads the thread record,
    // whose `next` only lists human interrupts: the checkpoint history says where the graph stopped).
    const [head] = await c.threads.getHistory(tid, { limit: 1 });
    expect(head!.next).toEqual(['tools']);
    expect((head!.values as { messages: Msg[] }).messages.some((m) => m.type === 'tool')).toBe(false);

    // A run without input continues from the checkpoint: the tool runs, the model answers.
    const resumed = await collect(c.runs.stream(tid, 'agent', { input: null, config: scripted(CONTINUED), streamMode: ['values'] }));
    const messages = (of(resumed, 'values').at(-1)!.messages as Msg[]).map((m) => [m.type, m.content]);
    expect(messages.filter(([t]) => t === 'tool')).toHaveLength(1);
    expect(messages.at(-1)).toEqual(['ai', ANSWER]);
    expect((await c.threads.get(tid)).status).toBe('idle');
    expect((await c.threads.getHistory(tid, { limit: 1 }))[0]!.next).toEqual([]);
  });

  it('interruptAfter agent: the run stops after the model; a command.resume continues', async () => {
    const c = client();
    const tid = (await c.threads.create()).thread_id;
    const first = await c.runs.wait(tid, 'agent', {
      input: { messages: [{ role: 'user', content: 'plan it' }] },
      config: scripted(TURNS),
      interruptAfter: ['agent'],
    });
    expect((first as { messages: Msg[] }).messages.at(-1)!.type).toBe('ai');
    expect((await c.threads.get(tid)).status).toBe('interrupted');
    expect((await c.threads.getHistory(tid, { limit: 1 }))[0]!.next).toEqual(['tools']);
    const second = (await c.runs.wait(tid, 'agent', { command: { resume: 'go on' }, config: scripted(CONTINUED) })) as { messages: Msg[] };
    expect(second.messages.filter((m) => m.type === 'tool')).toHaveLength(1);
    expect(second.messages.at(-1)).toMatchObject({ type: 'ai', content: ANSWER });
    expect((await c.threads.get(tid)).status).toBe('idle');
  });

  it("streamSubgraphs: a delegated agent's events reach the parent's stream as mode|delegate:<tool call id>", async () => {
    const c = client();
    const tid = (await c.threads.create()).thread_id;
    const parentTurns = [{ tool_calls: [{ name: 'delegate_task', args: { task: 'Say hello' }, id: 'call_child' }] }, { content: 'The child said hello.' }];
    const events = await collect(
      c.runs.stream(tid, 'agent', {
        input: { messages: [{ role: 'user', content: '@general delegate a greeting' }] },
        config: { configurable: { model: { provider: 'scripted', turns: parentTurns }, delegates: { '*': [{ content: 'hello from the child' }] } } },
        streamMode: ['values', 'messages-tuple'],
        streamSubgraphs: true,
      }),
    );
    const childValues = of(events, 'values|delegate:call_child');
    expect(childValues.length).toBeGreaterThan(0);
    expect((childValues.at(-1)!.messages as Msg[]).at(-1)).toMatchObject({ type: 'ai', content: 'hello from the child' });
    // The child's tokens too, in the mode the parent's client asked for, with the child's own thread.
    const childTuples = events.filter((e) => e.event === 'messages|delegate:call_child').map((e) => e.data as [Msg, Record<string, unknown>]);
    expect(childTuples.map(([m]) => m.content).join('')).toContain('hello from the child');
    expect(childTuples.every(([, meta]) => meta.thread_id !== tid)).toBe(true);
    // The parent's own stream goes on to its answer, after the child's events.
    const parentValues = of(events, 'values');
    expect((parentValues.at(-1)!.messages as Msg[]).at(-1)).toMatchObject({ type: 'ai', content: 'The child said hello.' });
    const lastChild = events.findLastIndex((e) => e.event === 'values|delegate:call_child');
    expect(events.findIndex((e) => e.event === 'values' && JSON.stringify(e.data).includes('The child said hello.'))).toBeGreaterThan(lastChild);
  });

  it('without streamSubgraphs the parent stream carries no child events', async () => {
    const c = client();
    const tid = (await c.threads.create()).thread_id;
    const events = await collect(
      c.runs.stream(tid, 'agent', {
        input: { messages: [{ role: 'user', content: '@general delegate a greeting' }] },
        config: {
          configurable: {
            model: {
              provider: 'scripted',
              turns: [{ tool_calls: [{ name: 'delegate_task', args: { task: 'Say hello' }, id: 'call_x' }] }, { content: 'done' }],
            },
            delegates: { '*': [{ content: 'hello from the child' }] },
          },
        },
        streamMode: ['values'],
      }),
    );
    expect(events.some((e) => e.event.includes('|'))).toBe(false);
    expect((of(events, 'values').at(-1)!.messages as Msg[]).at(-1)).toMatchObject({ content: 'done' });
  });
});
