/**
 * `client.threads`, method by method, as LangGraph Platform defines it (issue 11, deliverable 2):
 * thread CRUD, count/copy/prune, state now and at a checkpoint, state updates as a node, metadata
 * patches, history with one entry per checkpoint, and the thread stream.
 */
import { expect, it } from 'vitest';
import type { Client, ThreadState } from '@langchain/langgraph-sdk';
import { scripted } from './helpers.js';
import { ask, dataOf, statusOf, type StreamEvent, type Target } from './sdk-harness.js';

type Msg = { type: string; content: string; id?: string };
type Values = { messages: Msg[] };
/** What `POST /threads/{id}/state` answers in LangGraph (the SDK's declared type says `configurable`). */
type Written = { checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string } };

/** A write_file call (auto-approved: no secret in it) then an answer: several checkpoints. */
export const TOOL_TURNS = (answer: string) => [
  { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/note.txt', content: 'a note' } }] },
  { content: answer },
];

async function threadWithRun(client: Client, question = 'write a note', answer = 'Wrote the note.'): Promise<string> {
  const { thread_id } = await client.threads.create();
  await client.runs.wait(thread_id, 'agent', { input: ask(question), config: scripted(TOOL_TURNS(answer)) });
  return thread_id;
}

const contents = (s: ThreadState) => (s.values as Values).messages.map((m) => m.content);

export function threadsTests(t: Target): void {
  it('threads.create makes an idle thread with its metadata; threads.get reads it; an unknown id is 404', async () => {
    const th = await t.client.threads.create({ metadata: { owner: 'alice' } });
    expect(th).toMatchObject({
      thread_id: expect.any(String),
      status: 'idle',
      metadata: { owner: 'alice' },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(await t.client.threads.get(th.thread_id)).toMatchObject({ thread_id: th.thread_id, status: 'idle', metadata: { owner: 'alice' } });
    expect(await statusOf(t.client.threads.get(crypto.randomUUID()))).toBe(404);
  });

  it('threads.create with a threadId: ifExists do_nothing returns the existing thread, raise is 409', async () => {
    const threadId = crypto.randomUUID();
    await t.client.threads.create({ threadId, metadata: { n: 1 } });
    expect(await t.client.threads.create({ threadId, metadata: { n: 2 }, ifExists: 'do_nothing' })).toMatchObject({ thread_id: threadId, metadata: { n: 1 } });
    expect(await statusOf(t.client.threads.create({ threadId, ifExists: 'raise' }))).toBe(409);
  });

  it('threads.create with supersteps seeds the state, one checkpoint per superstep', async () => {
    const th = await t.client.threads.create({
      graphId: 'agent',
      supersteps: [
        { updates: [{ values: {}, asNode: '__input__' }] },
        { updates: [{ values: { messages: [{ type: 'human', content: 'hello' }] }, asNode: '__start__' }] },
        { updates: [{ values: { messages: [{ type: 'ai', content: 'Hello! How can I help?' }] }, asNode: 'agent' }] },
      ],
    });
    const state = await t.client.threads.getState(th.thread_id);
    expect((state.values as Values).messages.map((m) => [m.type, m.content])).toEqual([
      ['human', 'hello'],
      ['ai', 'Hello! How can I help?'],
    ]);
    expect((await t.client.threads.getHistory(th.thread_id, { limit: 10 })).length).toBeGreaterThanOrEqual(3);
    // The seeded conversation goes on.
    const next = (await t.client.runs.wait(th.thread_id, 'agent', { input: ask('thanks'), config: scripted([{ content: 'You are welcome.' }]) })) as Values;
    expect(next.messages.map((m) => m.content)).toEqual(['hello', 'Hello! How can I help?', 'thanks', 'You are welcome.']);
  });

  it('threads.update merges metadata', async () => {
    const th = await t.client.threads.create({ metadata: { a: 1 } });
    const updated = await t.client.threads.update(th.thread_id, { metadata: { b: 2 } });
    expect(updated.metadata).toMatchObject({ a: 1, b: 2 });
    expect((await t.client.threads.get(th.thread_id)).metadata).toMatchObject({ a: 1, b: 2 });
    expect(await statusOf(t.client.threads.update(crypto.randomUUID(), { metadata: { b: 2 } }))).toBe(404);
  });

  it('threads.delete removes the thread: get is 404', async () => {
    const tid = await threadWithRun(t.client);
    await t.client.threads.delete(tid);
    expect(await statusOf(t.client.threads.get(tid))).toBe(404);
    expect(await statusOf(t.client.threads.getState(tid))).toBe(404);
    expect(await statusOf(t.client.threads.delete(tid))).toBe(404);
  });

  it('threads.search filters by metadata, ids and status with limit and offset', async () => {
    const tag = `search-${crypto.randomUUID()}`;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await t.client.threads.create({ metadata: { tag, i } })).thread_id);
    expect((await t.client.threads.search({ metadata: { tag }, limit: 10 })).map((x) => x.thread_id).sort()).toEqual([...ids].sort());
    expect(await t.client.threads.search({ metadata: { tag, i: 1 } })).toEqual([expect.objectContaining({ thread_id: ids[1] })]);
    expect((await t.client.threads.search({ metadata: { tag }, limit: 2 })).length).toBe(2);
    expect((await t.client.threads.search({ metadata: { tag }, limit: 2, offset: 2 })).length).toBe(1);
    expect((await t.client.threads.search({ ids: [ids[0]!, ids[2]!] })).map((x) => x.thread_id).sort()).toEqual([ids[0], ids[2]].sort());
    expect(await t.client.threads.search({ metadata: { tag }, status: 'busy' })).toEqual([]);
    const asc = await t.client.threads.search({ metadata: { tag }, sortBy: 'created_at', sortOrder: 'asc' });
    expect(asc.map((x) => x.thread_id)).toEqual(ids);
  });

  it('threads.count counts the threads matching metadata and status', async () => {
    const tag = `count-${crypto.randomUUID()}`;
    expect(await t.client.threads.count({ metadata: { tag } })).toBe(0);
    await t.client.threads.create({ metadata: { tag } });
    await t.client.threads.create({ metadata: { tag } });
    expect(await t.client.threads.count({ metadata: { tag } })).toBe(2);
    expect(await t.client.threads.count({ metadata: { tag }, status: 'idle' })).toBe(2);
    expect(await t.client.threads.count({ metadata: { tag }, status: 'busy' })).toBe(0);
  });

  it('threads.copy makes a new thread with the same state and history; the copy goes its own way', async () => {
    const tid = await threadWithRun(t.client, 'write a note', 'Original answer.');
    const copy = await t.client.threads.copy(tid);
    expect(copy.thread_id).not.toBe(tid);
    const [orig, copied] = [await t.client.threads.getState(tid), await t.client.threads.getState(copy.thread_id)];
    expect(contents(copied)).toEqual(contents(orig));
    expect(copied.checkpoint.thread_id).toBe(copy.thread_id);
    expect((await t.client.threads.getHistory(copy.thread_id, { limit: 50 })).length).toBe((await t.client.threads.getHistory(tid, { limit: 50 })).length);
    await t.client.runs.wait(copy.thread_id, 'agent', { input: ask('only in the copy'), config: scripted([{ content: 'copy answer' }]) });
    expect(contents(await t.client.threads.getState(tid))).not.toContain('only in the copy');
    expect(await statusOf(t.client.threads.copy(crypto.randomUUID()))).toBe(404);
  });

  it('threads.prune deletes the given threads and says how many', async () => {
    const a = await threadWithRun(t.client);
    const b = (await t.client.threads.create()).thread_id;
    const kept = (await t.client.threads.create()).thread_id;
    const res = (await t.client.threads.prune([a, b])) as { pruned_count: number };
    expect(res.pruned_count).toBe(2);
    expect(await statusOf(t.client.threads.get(a))).toBe(404);
    expect(await statusOf(t.client.threads.get(b))).toBe(404);
    expect((await t.client.threads.get(kept)).thread_id).toBe(kept);
  });

  it('threads.getState (latest) returns values, next, checkpoint, parent, metadata and tasks with the public thread id', async () => {
    const tid = await threadWithRun(t.client, 'write a note', 'Latest answer.');
    const s = await t.client.threads.getState(tid);
    expect(contents(s).at(-1)).toBe('Latest answer.');
    expect(s.next).toEqual([]);
    expect(s.tasks).toEqual([]);
    expect(s.checkpoint).toMatchObject({ thread_id: tid, checkpoint_ns: '', checkpoint_id: expect.any(String) });
    expect(s.parent_checkpoint).toMatchObject({ thread_id: tid, checkpoint_id: expect.any(String) });
    expect(s.metadata).toMatchObject({ step: expect.any(Number), source: 'loop' });
    expect(s.created_at).toEqual(expect.any(String));
    expect(JSON.stringify(s)).not.toContain(`:${tid}`);
  });

  it('threads.getState at a checkpoint id returns that checkpoint (time travel)', async () => {
    const tid = await threadWithRun(t.client);
    const history = await t.client.threads.getHistory(tid, { limit: 50 });
    const older = history.find((h) => (h.values as Values).messages?.length === 1)!;
    expect(older).toBeDefined();
    const s = await t.client.threads.getState(tid, older.checkpoint.checkpoint_id!);
    expect(s.checkpoint.checkpoint_id).toBe(older.checkpoint.checkpoint_id);
    expect(contents(s)).toEqual(['write a note']);
    expect(s.next).toEqual(older.next);
    expect(await statusOf(t.client.threads.getState(tid, crypto.randomUUID()))).toBe(404);
  });

  it('threads.getState at a checkpoint object (POST /state/checkpoint) returns that checkpoint', async () => {
    const tid = await threadWithRun(t.client);
    const history = await t.client.threads.getHistory(tid, { limit: 50 });
    const older = history[2]!;
    const s = await t.client.threads.getState(tid, { thread_id: tid, checkpoint_ns: '', checkpoint_id: older.checkpoint.checkpoint_id, checkpoint_map: null });
    expect(s.checkpoint.checkpoint_id).toBe(older.checkpoint.checkpoint_id);
    expect(s.values).toEqual(older.values);
  });

  it('threads.updateState as a node writes a new checkpoint that the next run starts from', async () => {
    const tid = await threadWithRun(t.client, 'write a note', 'Before the edit.');
    const before = await t.client.threads.getState(tid);
    const res = (await t.client.threads.updateState(tid, {
      values: { messages: [{ type: 'ai', content: 'Written by updateState.' }] },
      asNode: 'agent',
    })) as unknown as Written;
    expect(res.checkpoint).toMatchObject({ thread_id: tid, checkpoint_ns: '', checkpoint_id: expect.any(String) });
    const after = await t.client.threads.getState(tid);
    expect(after.checkpoint.checkpoint_id).toBe(res.checkpoint.checkpoint_id);
    expect(after.parent_checkpoint?.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(contents(after).at(-1)).toBe('Written by updateState.');
    expect(after.metadata).toMatchObject({ source: 'update' });
    // From an older checkpoint: a fork beside the current head.
    const forked = (await t.client.threads.updateState(tid, {
      values: { messages: [{ type: 'ai', content: 'A forked note.' }] },
      asNode: 'agent',
      checkpointId: before.parent_checkpoint!.checkpoint_id!,
    })) as unknown as Written;
    const forkState = await t.client.threads.getState(tid);
    expect(forkState.checkpoint.checkpoint_id).toBe(forked.checkpoint.checkpoint_id);
    expect(contents(forkState)).not.toContain('Written by updateState.');
    expect(contents(forkState).at(-1)).toBe('A forked note.');
    const bad = await fetch(`${t.url}/threads/${tid}/state`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ values: {}, as_node: 'no_such_node' }),
    });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
  });

  it("threads.patchState merges metadata into the latest checkpoint's metadata", async () => {
    const tid = await threadWithRun(t.client);
    const before = await t.client.threads.getState(tid);
    await t.client.threads.patchState(tid, { reviewed: true, reviewer: 'bob' });
    const after = await t.client.threads.getState(tid);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(after.metadata).toMatchObject({ reviewed: true, reviewer: 'bob', step: before.metadata!.step });
    expect(after.values).toEqual(before.values);
  });

  it('threads.getHistory lists every checkpoint newest first, chained by parent, with limit, before and metadata filters', async () => {
    const tid = await threadWithRun(t.client);
    const all = await t.client.threads.getHistory(tid, { limit: 100 });
    // input, agent (tool call), tools, agent (answer) and more: one entry per checkpoint.
    expect(all.length).toBeGreaterThanOrEqual(4);
    expect(new Set(all.map((h) => h.checkpoint.checkpoint_id)).size).toBe(all.length);
    expect(all.every((h) => h.checkpoint.thread_id === tid && h.checkpoint.checkpoint_id)).toBe(true);
    for (let i = 0; i + 1 < all.length; i++) expect(all[i]!.parent_checkpoint?.checkpoint_id).toBe(all[i + 1]!.checkpoint.checkpoint_id);
    const steps = all.map((h) => h.metadata!.step as number);
    expect([...steps].sort((a, b) => b - a)).toEqual(steps);
    expect(all.at(-1)!.metadata).toMatchObject({ source: 'input' });
    expect(all.some((h) => h.next.includes('tools') && h.tasks.some((task) => task.name === 'tools'))).toBe(true);

    expect((await t.client.threads.getHistory(tid, { limit: 2 })).map((h) => h.checkpoint.checkpoint_id)).toEqual(
      all.slice(0, 2).map((h) => h.checkpoint.checkpoint_id),
    );
    const before = await t.client.threads.getHistory(tid, { limit: 2, before: { configurable: { checkpoint_id: all[1]!.checkpoint.checkpoint_id } } });
    expect(before.map((h) => h.checkpoint.checkpoint_id)).toEqual(all.slice(2, 4).map((h) => h.checkpoint.checkpoint_id));
    const inputs = await t.client.threads.getHistory(tid, { limit: 100, metadata: { source: 'input' } });
    expect(inputs.length).toBeGreaterThanOrEqual(1);
    expect(inputs.every((h) => h.metadata!.source === 'input')).toBe(true);
    expect(JSON.stringify(all)).not.toContain(`:${tid}`);
  });

  it('threads.joinStream follows the thread: a run started while joined streams its events (run_modes)', async () => {
    const { thread_id: tid } = await t.client.threads.create();
    const abort = new AbortController();
    const seen: StreamEvent[] = [];
    const following = (async () => {
      for await (const e of t.client.threads.joinStream(tid, { signal: abort.signal })) {
        seen.push({ event: e.event, data: e.data });
        const v = e.data as Partial<Values>;
        if (e.event === 'values' && v.messages?.at(-1)?.content === 'Thread stream answer.') break;
      }
    })();
    // The first model turn waits, so the answer is produced after the thread stream is connected.
    await t.client.runs.create(tid, 'agent', { input: ask('stream me'), config: scripted([{ content: 'Thread stream answer.', delay_ms: 2_000 }]) });
    const timer = setTimeout(() => abort.abort(), 45_000);
    const failure = await following.then(
      () => undefined,
      (err: unknown) => err,
    );
    clearTimeout(timer);
    if (failure && !abort.signal.aborted) throw failure;
    const values = dataOf<Values>(seen, 'values');
    expect(values.at(-1)?.messages.at(-1)?.content).toBe('Thread stream answer.');
    expect(JSON.stringify(seen)).not.toContain(`:${tid}`);
  });
}
