/**
 * `client.runs`, method by method, as LangGraph Platform defines it (issue 11, deliverable 3):
 * create/wait/list/get/join/joinStream, cancel (interrupt and rollback), cancelMany, delete, batch,
 * the multitask strategies, interrupt_before/after, after_seconds, on_disconnect, checkpoint forks
 * and command resumes.
 */
import { afterEach, expect, it } from 'vitest';
import type { Client } from '@langchain/langgraph-sdk';
import { poll, scripted } from './helpers.js';
import { ask, collect, dataOf, DEFAULT_ASSISTANT_ID, statusOf, waitRunStatus, waitThreadStatus, type Target } from './sdk-harness.js';
import { TOOL_TURNS } from './sdk-conformance-threads.js';

type Msg = { type: string; content: string };
type Values = { messages: Msg[]; __interrupt__?: Array<{ id?: string; value: Record<string, unknown> }> };

const answer = (content: string) => scripted([{ content }]);
/** A model turn that would take a minute: the run stays `running` until cancelled. */
const slow = (content = 'too late') => scripted([{ content, delay_ms: 60_000 }]);
const texts = (v: unknown) => ((v as Partial<Values>).messages ?? []).map((m) => m.content);

/** Slow runs still going when a check fails are cancelled after it, so they hold no worker slot. */
const slowRuns: Array<{ client: Client; threadId: string; runId: string }> = [];

async function startSlow(client: Client, threadId: string, question = 'take your time') {
  const run = await client.runs.create(threadId, 'agent', { input: ask(question), config: slow() });
  slowRuns.push({ client, threadId, runId: run.run_id });
  await waitRunStatus(client, threadId, run.run_id, 'running');
  return run;
}

export function runsTests(t: Target): void {
  afterEach(async () => {
    for (const { client, threadId, runId } of slowRuns.splice(0)) await client.runs.cancel(threadId, runId).catch(() => undefined);
  });

  it('runs.create returns a pending run (assistant, thread, metadata, multitask strategy) that runs to success', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const run = await t.client.runs.create(tid, 'agent', { input: ask('hi'), config: answer('hello'), metadata: { origin: 'create-check' } });
    expect(run).toMatchObject({
      run_id: expect.any(String),
      thread_id: tid,
      assistant_id: DEFAULT_ASSISTANT_ID,
      status: expect.stringMatching(/^(pending|running)$/),
      metadata: expect.objectContaining({ origin: 'create-check' }),
      // LangGraph's default strategy.
      multitask_strategy: 'reject',
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(texts(await t.client.runs.join(tid, run.run_id))).toEqual(['hi', 'hello']);
    expect((await t.client.runs.get(tid, run.run_id)).status).toBe('success');
  });

  it('runs.wait returns the final values', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const values = await t.client.runs.wait(tid, 'agent', { input: ask('write a note'), config: scripted(TOOL_TURNS('Done waiting.')) });
    expect((values as Values).messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(texts(values).at(-1)).toBe('Done waiting.');
  });

  it('runs.list lists the runs of a thread newest first, with limit, offset and status', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const ids = [];
    for (const c of ['one', 'two', 'three']) {
      const run = await t.client.runs.create(tid, 'agent', { input: ask(c), config: answer(c) });
      await t.client.runs.join(tid, run.run_id);
      ids.push(run.run_id);
    }
    expect((await t.client.runs.list(tid)).map((r) => r.run_id)).toEqual([...ids].reverse());
    expect((await t.client.runs.list(tid, { limit: 1, offset: 1 })).map((r) => r.run_id)).toEqual([ids[1]]);
    expect((await t.client.runs.list(tid, { status: 'success' })).length).toBe(3);
    expect(await t.client.runs.list(tid, { status: 'pending' })).toEqual([]);
  });

  it("runs.get reads a run; another thread's run or an unknown id is 404", async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const { thread_id: other } = await t.client.threads.create();
    const run = await t.client.runs.create(tid, 'agent', { input: ask('hi'), config: answer('hello') });
    await t.client.runs.join(tid, run.run_id);
    expect(await t.client.runs.get(tid, run.run_id)).toMatchObject({ run_id: run.run_id, thread_id: tid, status: 'success' });
    expect(await statusOf(t.client.runs.get(other, run.run_id))).toBe(404);
    expect(await statusOf(t.client.runs.get(tid, crypto.randomUUID()))).toBe(404);
  });

  it('runs.join waits for the run and returns the thread values', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const run = await t.client.runs.create(tid, 'agent', { input: ask('write a note'), config: scripted(TOOL_TURNS('Joined.')) });
    const values = await t.client.runs.join(tid, run.run_id);
    expect(texts(values).at(-1)).toBe('Joined.');
  });

  it("runs.joinStream replays a run's events in the asked modes", async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const run = await t.client.runs.create(tid, 'agent', {
      input: ask('write a note'),
      config: scripted(TOOL_TURNS('Replayed.')),
      streamMode: ['values', 'updates'],
      streamResumable: true,
    });
    await t.client.runs.join(tid, run.run_id);
    const events = await collect(t.client.runs.joinStream(tid, run.run_id, { streamMode: ['values', 'updates'] }));
    expect(texts(dataOf(events, 'values').at(-1)).at(-1)).toBe('Replayed.');
    expect(dataOf<Record<string, unknown>>(events, 'updates').some((u) => 'tools' in u)).toBe(true);
  });

  it('runs.cancel (interrupt) stops a running run: interrupted, thread idle, no answer', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const run = await startSlow(t.client, tid);
    // `running` is set when a worker takes the run; the input checkpoint follows as the graph starts.
    await poll(async () => (texts((await t.client.threads.getState(tid)).values).length > 0 ? true : undefined));
    await t.client.runs.cancel(tid, run.run_id, true);
    expect((await t.client.runs.get(tid, run.run_id)).status).toBe('interrupted');
    await waitThreadStatus(t.client, tid, 'idle');
    // The input was checkpointed before the model call (as in LangGraph); the answer never came.
    expect(texts((await t.client.threads.getState(tid)).values)).toEqual(['take your time']);
  });

  it('runs.cancel (rollback) stops the run, deletes it and restores the thread to before it', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    await t.client.runs.wait(tid, 'agent', { input: ask('first'), config: answer('first answer') });
    const before = await t.client.threads.getState(tid);
    const run = await startSlow(t.client, tid, 'roll me back');
    await t.client.runs.cancel(tid, run.run_id, true, 'rollback');
    expect(await statusOf(t.client.runs.get(tid, run.run_id))).toBe(404);
    await waitThreadStatus(t.client, tid, 'idle');
    const after = await t.client.threads.getState(tid);
    expect(texts(after.values)).toEqual(['first', 'first answer']);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
  });

  it('runs.cancelMany cancels the given runs, or the pending runs of a thread', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const running = await startSlow(t.client, tid);
    const queued = await t.client.runs.create(tid, 'agent', { input: ask('queued'), config: answer('queued answer'), multitaskStrategy: 'enqueue' });
    await t.client.runs.cancelMany({ threadId: tid, status: 'pending' });
    await waitRunStatus(t.client, tid, queued.run_id, 'interrupted');
    expect((await t.client.runs.get(tid, running.run_id)).status).toBe('running');
    await t.client.runs.cancelMany({ threadId: tid, runIds: [running.run_id] });
    await waitRunStatus(t.client, tid, running.run_id, 'interrupted');
    await waitThreadStatus(t.client, tid, 'idle');
  });

  it('runs.delete removes a finished run; get is then 404 and list omits it', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const run = await t.client.runs.create(tid, 'agent', { input: ask('hi'), config: answer('hello') });
    await t.client.runs.join(tid, run.run_id);
    await t.client.runs.delete(tid, run.run_id);
    expect(await statusOf(t.client.runs.get(tid, run.run_id))).toBe(404);
    expect((await t.client.runs.list(tid)).map((r) => r.run_id)).not.toContain(run.run_id);
    expect(await statusOf(t.client.runs.delete(tid, run.run_id))).toBe(404);
  });

  it('runs.createBatch creates one stateless run per payload', async () => {
    const runs = await t.client.runs.createBatch([
      { assistantId: 'agent', input: ask('batch one'), config: answer('batch answer one') },
      { assistantId: 'agent', input: ask('batch two'), config: answer('batch answer two') },
    ]);
    expect(runs).toHaveLength(2);
    expect(new Set(runs.map((r) => r.run_id)).size).toBe(2);
    for (const r of runs)
      expect(r).toMatchObject({
        run_id: expect.any(String),
        thread_id: expect.any(String),
        assistant_id: DEFAULT_ASSISTANT_ID,
        status: expect.stringMatching(/^(pending|running|success)$/),
      });
    const bad = await fetch(`${t.url}/runs/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ input: ask('x') }]),
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('assistant_id');
  });

  it('multitaskStrategy reject: a run on a busy thread is refused with 409', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const busy = await startSlow(t.client, tid);
    expect(await statusOf(t.client.runs.create(tid, 'agent', { input: ask('me too'), config: answer('no'), multitaskStrategy: 'reject' }))).toBe(409);
    await t.client.runs.cancel(tid, busy.run_id, true);
  });

  it('multitaskStrategy interrupt: the run in progress is interrupted, the new one runs', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const busy = await startSlow(t.client, tid);
    const values = await t.client.runs.wait(tid, 'agent', { input: ask('replace it'), config: answer('replaced'), multitaskStrategy: 'interrupt' });
    expect(texts(values).at(-1)).toBe('replaced');
    expect((await t.client.runs.get(tid, busy.run_id)).status).toBe('interrupted');
  });

  it('multitaskStrategy rollback: the run in progress is deleted with its input, the new one runs', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const busy = await startSlow(t.client, tid, 'forget me');
    const values = await t.client.runs.wait(tid, 'agent', { input: ask('instead'), config: answer('rolled back'), multitaskStrategy: 'rollback' });
    expect(texts(values)).toEqual(['instead', 'rolled back']);
    expect(await statusOf(t.client.runs.get(tid, busy.run_id))).toBe(404);
  });

  it('multitaskStrategy enqueue: the new run waits for the one in progress, then runs on its state', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const first = await t.client.runs.create(tid, 'agent', { input: ask('first'), config: scripted([{ content: 'first answer', delay_ms: 3_000 }]) });
    const second = await t.client.runs.create(tid, 'agent', { input: ask('second'), config: answer('second answer'), multitaskStrategy: 'enqueue' });
    expect(['pending']).toContain((await t.client.runs.get(tid, second.run_id)).status);
    expect(texts(await t.client.runs.join(tid, second.run_id))).toEqual(['first', 'first answer', 'second', 'second answer']);
    expect((await t.client.runs.get(tid, first.run_id)).status).toBe('success');
  });

  it('interruptBefore tools: the run stops before the tools node; a resume runs them', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const stopped = await t.client.runs.wait(tid, 'agent', {
      input: ask('write a note'),
      config: scripted(TOOL_TURNS('After the pause.')),
      interruptBefore: ['tools'],
    });
    expect((stopped as Values).messages.map((m) => m.type)).toEqual(['human', 'ai']);
    const state = await t.client.threads.getState(tid);
    expect(state.next).toEqual(['tools']);
    expect((await t.client.threads.get(tid)).status).toBe('interrupted');
    // A scripted model counts the turns of the current run: the continuation only has the answer left.
    const resumed = await t.client.runs.wait(tid, 'agent', { input: null, config: answer('After the pause.') });
    expect((resumed as Values).messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(texts(resumed).at(-1)).toBe('After the pause.');
  });

  it('interruptAfter agent: the run stops after the agent node, with the (already judged) tool calls next', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    await t.client.runs.wait(tid, 'agent', { input: ask('write a note'), config: scripted(TOOL_TURNS('unused')), interruptAfter: ['agent'] });
    const state = await t.client.threads.getState(tid);
    // The agent step judges its tool calls with the approval service in the same step (issue 9), so the tools node is next.
    expect(state.next).toEqual(['tools']);
    expect((state.values as Values).messages.map((m) => m.type)).toEqual(['human', 'ai']);
    expect((await t.client.threads.get(tid)).status).toBe('interrupted');
    const bad = await fetch(`${t.url}/threads/${tid}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', input: ask('x'), interrupt_after: ['no_such_node'] }),
    });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('interrupt_after');
  });

  it('afterSeconds: the run is created pending and starts later', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const run = await t.client.runs.create(tid, 'agent', { input: ask('later'), config: answer('later answer'), afterSeconds: 3 });
    expect((await t.client.runs.get(tid, run.run_id)).status).toBe('pending');
    expect(texts(await t.client.runs.join(tid, run.run_id)).at(-1)).toBe('later answer');
    expect((await t.client.runs.get(tid, run.run_id)).status).toBe('success');
  });

  it('onDisconnect cancel: closing the stream cancels the run; continue lets it finish', async () => {
    for (const onDisconnect of ['cancel', 'continue'] as const) {
      const { thread_id: tid } = await t.client.threads.create();
      const abort = new AbortController();
      let runId: string | undefined;
      try {
        for await (const e of t.client.runs.stream(tid, 'agent', {
          input: ask('stream then leave'),
          config: scripted([{ content: `left with ${onDisconnect}`, delay_ms: onDisconnect === 'cancel' ? 60_000 : 1_000 }]),
          onDisconnect,
          streamMode: ['values'],
          signal: abort.signal,
        })) {
          if (e.event === 'metadata') {
            runId = (e.data as { run_id: string }).run_id;
            abort.abort();
          }
        }
      } catch {
        // the abort ends the stream
      }
      expect(runId).toEqual(expect.any(String));
      if (onDisconnect === 'cancel') await waitRunStatus(t.client, tid, runId!, 'interrupted');
      else expect(texts(await t.client.runs.join(tid, runId!)).at(-1)).toBe('left with continue');
    }
  });

  it('checkpointId forks the thread from an earlier checkpoint', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    await t.client.runs.wait(tid, 'agent', { input: ask('first'), config: answer('first answer') });
    const afterFirst = await t.client.threads.getState(tid);
    await t.client.runs.wait(tid, 'agent', { input: ask('second'), config: answer('second answer') });
    const forked = await t.client.runs.wait(tid, 'agent', {
      input: ask('second, reworded'),
      config: answer('forked answer'),
      checkpointId: afterFirst.checkpoint.checkpoint_id!,
    });
    expect(texts(forked)).toEqual(['first', 'first answer', 'second, reworded', 'forked answer']);
    const history = await t.client.threads.getHistory(tid, { limit: 100 });
    // The old branch is still in the history.
    expect(history.some((h) => texts(h.values).includes('second answer'))).toBe(true);
    // Without input, from a checkpoint: the state of that checkpoint goes on (nothing to do at the end).
    const replay = await t.client.runs.wait(tid, 'agent', {
      input: null,
      checkpoint: { checkpoint_ns: '', checkpoint_id: afterFirst.checkpoint.checkpoint_id, checkpoint_map: null },
      config: answer('unused'),
    });
    expect(texts(replay)).toEqual(['first', 'first answer']);
  });

  it('command resume answers an approval interrupt and the run goes on', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const secret = { name: 'write_file', args: { file_path: 'outputs/prod.env', content: 'API_KEY=abc123' } };
    const stopped = (await t.client.runs.wait(tid, 'agent', { input: ask('save the key'), config: scripted([{ tool_calls: [secret] }]) })) as Values;
    expect(stopped.__interrupt__?.[0]?.value).toMatchObject({ action_requests: [{ name: 'write_file' }] });
    expect((await t.client.threads.getState(tid)).tasks.some((task) => task.interrupts.length > 0)).toBe(true);
    const resumed = (await t.client.runs.wait(tid, 'agent', {
      command: { resume: { decisions: [{ type: 'approve' }] } },
      config: answer('Saved it.'),
    })) as Values;
    expect(resumed.__interrupt__).toBeUndefined();
    expect(texts(resumed).at(-1)).toBe('Saved it.');
    expect((await t.client.threads.get(tid)).status).toBe('idle');
  });

  it('command update with goto writes the update as the graph state and continues at the node', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    await t.client.runs.wait(tid, 'agent', { input: ask('hi'), config: answer('hello') });
    const values = await t.client.runs.wait(tid, 'agent', {
      command: { update: { messages: [{ type: 'human', content: 'injected by command' }] }, goto: 'agent' },
      config: answer('answer to the injected message'),
    });
    expect(texts(values)).toEqual(['hi', 'hello', 'injected by command', 'answer to the injected message']);
  });
}
