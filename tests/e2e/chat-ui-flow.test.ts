/**
 * Issue 11's agent-chat-ui acceptance test: the SDK driven exactly as LangChain's chat UI drives it
 * (`useStream`: `runs.stream` with `streamMode ["values","updates","messages-tuple","custom"]`,
 * `streamResumable`, `onDisconnect: "continue"`, a `checkpoint` without thread_id to branch;
 * the thread list by `threads.search({metadata: {graph_id}})`; `fetchStateHistory` through
 * `threads.getHistory`; approve/reject with `command.resume.decisions`; reload with `getState` and
 * `runs.joinStream` from event -1), against a streaming fake OpenAI-compatible model (no
 * `configurable.model`: the real provider path), embedded and as a cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client, Checkpoint, ThreadState } from '@langchain/langgraph-sdk';
import { startFakeOpenAi, type FakeOpenAi, type FakeTurn } from './fake-openai.js';
import { collect, MODES, useTarget, type StreamEvent, type Target } from './sdk-harness.js';

type Msg = { type: string; content: string; id?: string; name?: string; status?: string; tool_calls?: Array<{ name: string; args: Record<string, unknown> }> };
type Values = { messages: Msg[]; __interrupt__?: Array<{ id?: string; value: Record<string, unknown> }> };
type Chunk = { type: string; id: string; content: string; tool_call_chunks?: Array<{ name?: string; args?: string }> };

/** What useStream sends: values and updates always, plus the modes agent-chat-ui asks for. */
const UI_STREAM_MODES = ['values', 'updates', 'messages-tuple', 'custom'] as const;
/** agent-chat-ui's useStream has fetchStateHistory: true (the default page of 10). */
const HISTORY_LIMIT = 10;

let answers = 0;
/**
 * The model: a secret write (needs approval) when asked to save a key, a todo_write call for any
 * other question, and after a tool result a numbered answer (each regenerate differs).
 */
function respond(messages: ReadonlyArray<{ role: string; content?: unknown }>): FakeTurn {
  const last = messages.at(-1)!;
  if (last.role !== 'user') return { answer: `Answer number ${++answers}: the plan is draft, review, then release.` };
  const text = String(last.content);
  const key = /save the (\w+) key/.exec(text)?.[1];
  if (key) return { tool: { name: 'write_file', args: { file_path: `outputs/${key}.env`, content: `API_KEY=${key}-secret` } } };
  return { tool: { name: 'todo_write', args: { todos: [{ content: text, status: 'pending' }] } } };
}

/** `useStream().submit(values, options)` as agent-chat-ui calls it. */
async function submit(
  client: Client,
  threadId: string,
  input: unknown,
  options: { command?: unknown; checkpoint?: Checkpoint | null } = {},
): Promise<StreamEvent[]> {
  const checkpoint = options.checkpoint ? (({ thread_id: _drop, ...rest }) => rest)(options.checkpoint) : undefined;
  return collect(
    client.runs.stream(threadId, 'agent', {
      input: input as Record<string, unknown> | undefined,
      command: options.command as never,
      checkpoint,
      streamMode: [...UI_STREAM_MODES],
      streamResumable: true,
      onDisconnect: 'continue',
    }),
  );
}

const valuesOf = (events: readonly StreamEvent[]) => events.filter((e) => e.event === 'values').map((e) => e.data as Values);
const human = (content: string) => ({ messages: [{ type: 'human', content }] });

/** agent-chat-ui's branch metadata: the oldest history state that holds the message, and its parent. */
function firstSeen(history: ThreadState[], messageId: string): ThreadState {
  const state = [...history].reverse().find((s) => (s.values as Values).messages?.some((m) => m.id === messageId));
  if (!state) throw new Error(`message ${messageId} is in no state of the history`);
  return state;
}

function chatUiTests(t: Target, fake: () => FakeOpenAi): void {
  let tid = '';
  let firstAnswer: Msg | undefined;

  it('a new thread is listed after its first run, and the answer streams as messages-tuple chunks before the final values', async () => {
    const before = fake().requests.length;
    tid = (await t.client.threads.create()).thread_id;
    const events = await submit(t.client, tid, human('plan the release'));
    expect(events.filter((e) => e.event === 'error')).toEqual([]);
    // The real provider path, streaming.
    expect(
      fake()
        .requests.slice(before)
        .every((r) => r.stream === true && r.model === 'fake-model'),
    ).toBe(true);
    // Thread list (agent-chat-ui's history panel).
    const listed = await t.client.threads.search({ metadata: { graph_id: 'agent' }, limit: 100 });
    expect(listed.map((x) => x.thread_id)).toContain(tid);

    const final = valuesOf(events).at(-1)!;
    firstAnswer = final.messages.at(-1)!;
    expect(firstAnswer).toMatchObject({ type: 'ai', content: expect.stringMatching(/^Answer number \d+: the plan/) });
    const chunkIdx = events.flatMap((e, i) => (e.event === 'messages' && (e.data as [Chunk])[0].id === firstAnswer!.id ? [i] : []));
    expect(chunkIdx.length).toBeGreaterThanOrEqual(3);
    expect(chunkIdx.map((i) => (events[i]!.data as [Chunk])[0].content).join('')).toBe(firstAnswer.content);
    const lastValues = events.map((e) => e.event).lastIndexOf('values');
    expect(chunkIdx[0]!).toBeLessThan(lastValues);
    // The tool call shows: streamed as tool_call_chunks, then as the AI message's tool_calls, then its result.
    expect(events.some((e) => e.event === 'messages' && ((e.data as [Chunk])[0].tool_call_chunks ?? []).some((c) => c.name === 'todo_write'))).toBe(true);
    expect(final.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(final.messages[1]!.tool_calls).toEqual([expect.objectContaining({ name: 'todo_write' })]);
    expect(final.messages[2]).toMatchObject({ type: 'tool', name: 'todo_write' });
    expect(JSON.stringify(events)).not.toContain(`:${tid}`);
  }, 90_000);

  it('edit of the first human message forks from its checkpoint: the history shows the branch, the old answer is gone', async () => {
    const history = await t.client.threads.getHistory(tid, { limit: HISTORY_LIMIT });
    const firstHuman = (history[0]!.values as Values).messages[0]!;
    const parent = firstSeen(history, firstHuman.id!).parent_checkpoint;
    expect(parent?.checkpoint_id).toEqual(expect.any(String));
    const events = await submit(t.client, tid, human('plan the launch instead'), { checkpoint: parent });
    const final = valuesOf(events).at(-1)!;
    expect(final.messages.map((m) => m.content)[0]).toBe('plan the launch instead');
    expect(final.messages.map((m) => m.content)).not.toContain('plan the release');
    expect(final.messages.map((m) => m.id)).not.toContain(firstAnswer!.id);
    const state = await t.client.threads.getState(tid);
    expect((state.values as Values).messages).toEqual(final.messages);
    // Both branches hang off the same parent in the history.
    const after = await t.client.threads.getHistory(tid, { limit: 100 });
    const children = after.filter((s) => s.parent_checkpoint?.checkpoint_id === parent!.checkpoint_id);
    expect(children.length).toBe(2);
    expect(after.some((s) => (s.values as Values).messages?.some((m) => m.id === firstAnswer!.id))).toBe(true);
  }, 90_000);

  it('regenerate of the last answer forks from its parent checkpoint; reload (getState, joinStream from -1) restores that branch', async () => {
    const history = await t.client.threads.getHistory(tid, { limit: HISTORY_LIMIT });
    const head = history[0]!.values as Values;
    const last = head.messages.at(-1)!;
    const parent = firstSeen(history, last.id!).parent_checkpoint;
    const events = await submit(t.client, tid, undefined, { checkpoint: parent });
    const runId = (events.find((e) => e.event === 'metadata')!.data as { run_id: string }).run_id;
    const final = valuesOf(events).at(-1)!;
    const regenerated = final.messages.at(-1)!;
    expect(regenerated.type).toBe('ai');
    expect(regenerated.content).not.toBe(last.content);
    expect(final.messages.slice(0, -1).map((m) => m.id)).toEqual(head.messages.slice(0, -1).map((m) => m.id));
    expect(final.messages.map((m) => m.id)).not.toContain(last.id);

    // Reload: the state is the regenerated branch, and the run replays from the first event.
    const state = await t.client.threads.getState(tid);
    expect((state.values as Values).messages.at(-1)!.id).toBe(regenerated.id);
    const replay = await collect(t.client.runs.joinStream(tid, runId, { lastEventId: '-1' }));
    expect(valuesOf(replay).at(-1)!.messages).toEqual(final.messages);
    expect(replay.some((e) => e.event === 'messages')).toBe(true);
  }, 90_000);

  it('an approval interrupt arrives as a values event holding only __interrupt__; approve continues the run', async () => {
    const events = await submit(t.client, tid, human('now save the staging key'));
    const values = valuesOf(events) as unknown as Array<Record<string, unknown>>;
    const interruptOnly = values.filter((v) => Object.keys(v).length === 1 && '__interrupt__' in v);
    expect(interruptOnly).toHaveLength(1);
    expect(values.every((v) => !Array.isArray(v.messages) || v.messages.length > 0)).toBe(true);
    const [interrupt] = interruptOnly[0]!.__interrupt__ as Values['__interrupt__'] & object;
    expect(interrupt!.value).toMatchObject({
      action_requests: [{ name: 'write_file', args: { file_path: 'outputs/staging.env', content: 'API_KEY=staging-secret' }, description: expect.any(String) }],
      review_configs: [{ action_name: 'write_file', allowed_decisions: expect.arrayContaining(['approve', 'reject']) }],
    });
    expect((await t.client.threads.get(tid)).status).toBe('interrupted');
    // A reload while interrupted shows the interrupt in the state's tasks.
    expect((await t.client.threads.getState(tid)).tasks.some((task) => task.interrupts.length > 0)).toBe(true);

    const approved = await submit(t.client, tid, undefined, { command: { resume: { decisions: [{ type: 'approve' }] } } });
    const final = valuesOf(approved).at(-1)!;
    expect(final.__interrupt__).toBeUndefined();
    expect(final.messages.at(-2)).toMatchObject({ type: 'tool', name: 'write_file' });
    expect(final.messages.at(-1)).toMatchObject({ type: 'ai', content: expect.stringMatching(/^Answer number/) });
    expect(readFileSync(path.join(t.workspaceRoot, 'default', tid, 'outputs', 'staging.env'), 'utf8')).toBe('API_KEY=staging-secret');
    expect((await t.client.threads.get(tid)).status).toBe('idle');
  }, 90_000);

  it('reject from the interrupt ends with the rejection message and writes nothing', async () => {
    const events = await submit(t.client, tid, human('and save the prod key'));
    expect(valuesOf(events).some((v) => Object.keys(v).length === 1 && '__interrupt__' in v)).toBe(true);
    const rejected = await submit(t.client, tid, undefined, { command: { resume: { decisions: [{ type: 'reject', message: 'never write prod keys' }] } } });
    const final = valuesOf(rejected).at(-1)!;
    expect(final.__interrupt__).toBeUndefined();
    const tool = final.messages.filter((m) => m.type === 'tool').at(-1)!;
    expect(tool).toMatchObject({ name: 'write_file', status: 'error' });
    expect(tool.content).toContain('never write prod keys');
    expect(existsSync(path.join(t.workspaceRoot, 'default', tid, 'outputs', 'prod.env'))).toBe(false);
    expect((await t.client.threads.get(tid)).status).toBe('idle');
  }, 90_000);
}

describe.each(MODES)('agent-chat-ui flow through the SDK (%s)', (mode) => {
  let fake: FakeOpenAi | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAi({ respond, pieceSize: 6 });
    // The target's env is read when its beforeAll runs, after this one.
    modelEnv.MODEL_BASE_BASE_URL = fake.baseUrl;
  });
  afterAll(async () => {
    await fake?.close();
  });
  const modelEnv: NodeJS.ProcessEnv = { MODEL_BASE_API_KEY: 'sk-fake', MODEL_BASE_ID: 'fake-model' };
  const target = useTarget(mode, 'agentloop-chat-ui-', modelEnv);
  chatUiTests(target, () => fake!);
});
