/**
 * The threads API in full through the official SDK (issue 11, deliverable 2): count, copy, prune,
 * updateState, patchState, supersteps, GET /state as the latest checkpoint, and the thread stream.
 * The gateway gets a checkpoint store over a MemorySaver (the agent graph compiled on it, no node
 * runs); runs go to the fake orchestrator.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, type ThreadState } from '@langchain/langgraph-sdk';
import { MemorySaver } from '@langchain/langgraph';
import { createThreadCheckpoints } from '@agentloop/orchestrator';
import { latch, startTestGateway, type TestGateway } from './testing/index.js';

type Msg = { type: string; content: string; id?: string };
type Values = { messages: Msg[]; max_loops?: number };

let gw: TestGateway;
let acme: Client;
let other: Client;
let hold = latch();

beforeAll(async () => {
  gw = await startTestGateway({
    env: { AGENTLOOP_API_KEYS: 'acme-key:acme,other-key:other' },
    checkpoints: createThreadCheckpoints(new MemorySaver()),
    orchestrator: { gate: () => hold.wait() },
  });
  hold.open();
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const apiUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
  acme = new Client({ apiUrl, apiKey: 'acme-key' });
  other = new Client({ apiUrl, apiKey: 'other-key' });
});
afterAll(async () => gw.close());

const contents = (v: { values: unknown }): string[] => ((v.values as Values).messages ?? []).map((m) => m.content);
/** updateState's answer as LangGraph Platform sends it (the SDK types it as a config). */
const cp = (r: unknown) => (r as { checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string } }).checkpoint;
const user = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('threads.count', () => {
  it('counts the tenant threads matching metadata, values and status', async () => {
    const tag = `count-${Date.now()}`;
    const a = await acme.threads.create({ metadata: { tag, team: 'red' } });
    await acme.threads.create({ metadata: { tag, team: 'blue' } });
    await acme.threads.create({ metadata: { tag, team: 'red', n: 2 } });
    await other.threads.create({ metadata: { tag, team: 'red' } });
    expect(await acme.threads.count({ metadata: { tag } })).toBe(3);
    expect(await acme.threads.count({ metadata: { tag, team: 'red' } })).toBe(2);
    expect(await acme.threads.count({ metadata: { tag, n: 2 } })).toBe(1);
    expect(await acme.threads.count({ metadata: { tag, n: '2' } })).toBe(0);
    expect(await other.threads.count({ metadata: { tag } })).toBe(1);
    // As the tools node: the agent runs next, so the thread is no longer idle (an update as the agent
    // without tool calls leaves nothing to run: a final answer goes to END).
    await acme.threads.updateState(a.thread_id, { values: { max_loops: 7 }, asNode: 'tools' });
    expect(await acme.threads.count({ metadata: { tag }, values: { max_loops: 7 } })).toBe(1);
    expect(await acme.threads.count({ metadata: { tag }, status: 'idle' })).toBe(2);
  });

  it('refuses a filter it cannot express (422 naming the field)', async () => {
    await expect(acme.threads.count({ status: 'sleeping' as never })).rejects.toThrow(/422.*body\.status|body\.status/s);
  });
});

describe('threads.updateState / getState / patchState', () => {
  it('writes a checkpoint as the node would, and the thread record follows it', async () => {
    const { thread_id } = await acme.threads.create();
    const first = await acme.threads.updateState(thread_id, { values: user('hello'), asNode: 'agent' });
    expect(cp(first)).toEqual({ thread_id, checkpoint_ns: '', checkpoint_id: expect.any(String), checkpoint_map: null });
    const second = await acme.threads.updateState(thread_id, {
      values: { messages: [{ type: 'ai', content: 'hi there' }] },
      asNode: 'agent',
    });
    const state = (await acme.threads.getState<Values>(thread_id)) as ThreadState<Values>;
    expect(state.checkpoint.checkpoint_id).toBe(cp(second).checkpoint_id);
    expect(state.parent_checkpoint?.checkpoint_id).toBe(cp(first).checkpoint_id);
    expect(contents(state)).toEqual(['hello', 'hi there']);
    expect(state.metadata).toMatchObject({ source: 'update' });
    const history = await acme.threads.getHistory<Values>(thread_id, { limit: 10 });
    expect(history.map((s) => s.checkpoint.checkpoint_id)).toEqual([cp(second).checkpoint_id, cp(first).checkpoint_id]);
    const record = await acme.threads.get<Values>(thread_id);
    expect(contents(record as { values: unknown })).toEqual(['hello', 'hi there']);
    expect(record.status).toBe(state.next.length > 0 ? 'interrupted' : 'idle');
    expect(JSON.stringify(state)).not.toContain(`acme:${thread_id}`);
  });

  it('edits a message by id and forks from an older checkpoint', async () => {
    const { thread_id } = await acme.threads.create();
    const first = await acme.threads.updateState(thread_id, { values: user('draft'), asNode: 'agent' });
    const [draft] = ((await acme.threads.getState<Values>(thread_id)).values as Values).messages;
    await acme.threads.updateState(thread_id, { values: { messages: [{ id: draft!.id, role: 'user', content: 'final' }] }, asNode: 'agent' });
    expect(contents(await acme.threads.getState(thread_id))).toEqual(['final']);
    await acme.threads.updateState(thread_id, { values: user('branch'), asNode: 'agent', checkpointId: cp(first).checkpoint_id! });
    expect(contents(await acme.threads.getState(thread_id))).toEqual(['draft', 'branch']);
  });

  it('refuses an unknown node, unknown or private keys and malformed messages (422)', async () => {
    const { thread_id } = await acme.threads.create();
    await expect(acme.threads.updateState(thread_id, { values: user('x'), asNode: 'nope' })).rejects.toThrow(/body\.as_node/);
    await expect(acme.threads.updateState(thread_id, { values: { bogus: 1 }, asNode: 'agent' })).rejects.toThrow(/body\.values\.bogus/);
    await expect(acme.threads.updateState(thread_id, { values: { approvals: {} }, asNode: 'agent' })).rejects.toThrow(/body\.values\.approvals/);
    await expect(acme.threads.updateState(thread_id, { values: { messages: [42] }, asNode: 'agent' })).rejects.toThrow(/body\.values\.messages\[0\]/);
    expect(await acme.threads.getHistory(thread_id)).toEqual([]);
  });

  it("another tenant's thread is not found", async () => {
    const { thread_id } = await acme.threads.create();
    await expect(other.threads.updateState(thread_id, { values: user('x'), asNode: 'agent' })).rejects.toThrow(/404/);
    await expect(other.threads.patchState(thread_id, { x: 1 })).rejects.toThrow(/404/);
    await expect(other.threads.copy(thread_id)).rejects.toThrow(/404/);
  });

  it('patchState merges metadata into the latest checkpoint', async () => {
    const { thread_id } = await acme.threads.create();
    const checkpoint = cp(await acme.threads.updateState(thread_id, { values: user('m'), asNode: 'agent' }));
    await acme.threads.patchState(thread_id, { reviewed: true });
    const state = await acme.threads.getState(thread_id);
    expect(state.checkpoint.checkpoint_id).toBe(checkpoint.checkpoint_id);
    expect(state.metadata).toMatchObject({ reviewed: true, source: 'update' });
    const empty = await acme.threads.create();
    await expect(acme.threads.patchState(empty.thread_id, { reviewed: true })).rejects.toThrow(/404/);
  });

  it('threads.create applies supersteps in order', async () => {
    const thread = await acme.threads.create({
      supersteps: [{ updates: [{ values: user('one'), asNode: 'agent' }] }, { updates: [{ values: user('two'), asNode: 'agent' }] }],
    });
    expect(contents(await acme.threads.getState(thread.thread_id))).toEqual(['one', 'two']);
    expect(await acme.threads.getHistory(thread.thread_id)).toHaveLength(2);
    expect(contents(thread as { values: unknown })).toEqual(['one', 'two']);
  });
});

describe('threads.copy and threads.prune', () => {
  it('copies every checkpoint under a new id; the copy diverges on its own', async () => {
    const source = await acme.threads.create({ metadata: { origin: 'src' } });
    await acme.threads.updateState(source.thread_id, { values: user('a'), asNode: 'agent' });
    await acme.threads.updateState(source.thread_id, { values: user('b'), asNode: 'agent' });
    const copy = await acme.threads.copy(source.thread_id);
    expect(copy.thread_id).not.toBe(source.thread_id);
    expect(copy.metadata).toMatchObject({ origin: 'src' });
    const srcHistory = await acme.threads.getHistory(source.thread_id);
    const copyHistory = await acme.threads.getHistory(copy.thread_id);
    expect(copyHistory.map((s) => s.checkpoint.checkpoint_id)).toEqual(srcHistory.map((s) => s.checkpoint.checkpoint_id));
    expect(copyHistory.map(contents)).toEqual(srcHistory.map(contents));
    expect(copyHistory.every((s) => s.checkpoint.thread_id === copy.thread_id)).toBe(true);
    expect(contents((await acme.threads.get(copy.thread_id)) as { values: unknown })).toEqual(['a', 'b']);
    await acme.threads.updateState(copy.thread_id, { values: user('c'), asNode: 'agent' });
    expect(contents(await acme.threads.getState(copy.thread_id))).toEqual(['a', 'b', 'c']);
    expect(contents(await acme.threads.getState(source.thread_id))).toEqual(['a', 'b']);
  });

  it('prune delete removes the tenant threads named, skipping unknown and foreign ids', async () => {
    const a = await acme.threads.create();
    const b = await acme.threads.create();
    const foreign = await other.threads.create();
    await acme.runs.wait(a.thread_id, 'agent', { input: user('bye') });
    const res = await acme.threads.prune([a.thread_id, b.thread_id, foreign.thread_id, '00000000-0000-4000-8000-000000000000']);
    expect(res).toEqual({ pruned_count: 2 });
    await expect(acme.threads.get(a.thread_id)).rejects.toThrow(/404/);
    await expect(acme.threads.get(b.thread_id)).rejects.toThrow(/404/);
    expect((await other.threads.get(foreign.thread_id)).thread_id).toBe(foreign.thread_id);
  });

  it('prune keep_latest keeps only the latest checkpoint', async () => {
    const t = await acme.threads.create();
    for (const text of ['x', 'y', 'z']) await acme.threads.updateState(t.thread_id, { values: user(text), asNode: 'agent' });
    const before = await acme.threads.getState(t.thread_id);
    expect(await acme.threads.prune([t.thread_id], { strategy: 'keep_latest' })).toEqual({ pruned_count: 1 });
    const history = await acme.threads.getHistory(t.thread_id);
    expect(history).toHaveLength(1);
    expect(history[0]!.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(history[0]!.parent_checkpoint).toBeNull();
    expect(contents(history[0]!)).toEqual(['x', 'y', 'z']);
  });

  it('refuses an unknown strategy (422 naming it)', async () => {
    await expect(acme.threads.prune([], { strategy: 'shred' as never })).rejects.toThrow(/body\.strategy/);
  });
});

describe('threads.joinStream', () => {
  it('delivers the events of consecutive runs, each after its metadata, filtered by stream mode', async () => {
    const { thread_id } = await acme.threads.create();
    hold = latch();
    const first = await acme.runs.create(thread_id, 'agent', { input: user('one') });
    const seen: Array<{ event: string; data: unknown; id?: string }> = [];
    let second: string | undefined;
    for await (const part of acme.threads.joinStream(thread_id, { streamMode: ['values' as never] })) {
      seen.push(part as never);
      if (seen.length === 1) hold.open();
      if (part.event === 'end' && !second) second = (await acme.runs.create(thread_id, 'agent', { input: user('two') })).run_id;
      else if (part.event === 'end') break;
    }
    const events = seen.map((p) => p.event);
    expect(events).toEqual(['metadata', 'values', 'values', 'end', 'metadata', 'values', 'values', 'end']);
    expect(seen[0]!.data).toEqual({ run_id: first.run_id, thread_id });
    expect(seen[4]!.data).toEqual({ run_id: second, thread_id });
    expect(((seen[6]!.data as Values).messages ?? []).map((m) => m.content)).toEqual(['one', 'echo: one', 'two', 'echo: two']);
    expect(seen[1]!.id).toMatch(new RegExp(`^${first.run_id}:\\d+$`));
  });

  it('resumes after Last-Event-ID with the rest of that run', async () => {
    const { thread_id } = await acme.threads.create();
    const run = await acme.runs.create(thread_id, 'agent', { input: user('again') });
    await acme.runs.join(thread_id, run.run_id);
    const all: Array<{ event: string; id?: string }> = [];
    for await (const part of acme.threads.joinStream(thread_id, { lastEventId: `${run.run_id}:0` })) {
      all.push(part as never);
      if (part.event === 'end') break;
    }
    expect(all.map((p) => p.event)).toEqual(['values', 'values', 'end']);
    const afterFirst: string[] = [];
    for await (const part of acme.threads.joinStream(thread_id, { lastEventId: all[0]!.id! })) {
      afterFirst.push(part.event);
      if (part.event === 'end') break;
    }
    expect(afterFirst).toEqual(['values', 'end']);
  });

  it("run_modes (the default) gives each run's own modes; lifecycle only its start and end", async () => {
    const { thread_id } = await acme.threads.create();
    const run = await acme.runs.create(thread_id, 'agent', { input: user('modes'), streamMode: ['updates'] });
    await acme.runs.join(thread_id, run.run_id);
    const collect = async (streamMode?: 'lifecycle') => {
      const events: string[] = [];
      const opts = { lastEventId: `${run.run_id}:0`, ...(streamMode ? { streamMode } : {}) };
      for await (const part of acme.threads.joinStream(thread_id, opts)) {
        events.push(part.event);
        if (part.event === 'end') break;
      }
      return events;
    };
    expect(await collect()).toEqual(['updates', 'end']);
    expect(await collect('lifecycle')).toEqual(['end']);
  });

  it('refuses a Last-Event-ID it did not send', async () => {
    const { thread_id } = await acme.threads.create();
    const res = await gw.app.inject({ method: 'GET', url: `/threads/${thread_id}/stream`, headers: { 'x-api-key': 'acme-key', 'last-event-id': 'bogus' } });
    expect(res.statusCode).toBe(422);
    expect(res.body).toContain('headers.last-event-id');
  });
});
