/**
 * The run's final state read from the checkpoint it saved last (run/latest-checkpoint.ts): the
 * same tuple the saver returns, served once and only when nothing was written against it, and
 * the same end of run — result and thread values — as a read from the database, over the real
 * agent graph: ran to its end, stopped on an approval and resumed, stopped by interrupt_before,
 * failed.
 */
import { describe, expect, it, vi } from 'vitest';
import { Command, MemorySaver } from '@langchain/langgraph';
import { emptyCheckpoint, type BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { HumanMessage } from '@langchain/core/messages';
import { CheckpointSerializer } from '@agentloop/checkpoint-mysql';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { buildAgentGraph, type AgentGraphDeps } from '../graph.js';
import { ScriptedChatModel, type ScriptedTurn } from '../models/scripted.js';
import { fakeApprovals, fakeCtx } from '../graph/testing.js';
import { DrainingSaver } from './draining-saver.js';
import { streamGraph, type StoppedGraph, type StreamJob, type StreamOptions } from './stream.js';
import type { GraphInput } from './input.js';
import { log, recordingEvents } from './testing.js';

const config = { configurable: { thread_id: 't1:th1', checkpoint_ns: '' } };
const metadata = { source: 'loop' as const, step: 0, parents: {} };

describe('the latest checkpoint kept by the saver', () => {
  it('serves, once and only when armed, the tuple the saver returns for the latest checkpoint', async () => {
    const inner = new MemorySaver(new CheckpointSerializer());
    const saver = new DrainingSaver(inner, () => false);
    const watch = saver.watch('t1:th1');
    const first = await saver.put(config, { ...emptyCheckpoint(), id: 'c1' }, metadata, {});
    await saver.put(first, { ...emptyCheckpoint(), id: 'c2' }, { ...metadata, step: 1 }, {});
    const read = vi.spyOn(inner, 'getTuple');

    expect((await saver.getTuple(config))?.checkpoint.id).toBe('c2');
    expect(read).toHaveBeenCalledTimes(1);
    watch.arm();
    const kept = await saver.getTuple(config);
    expect(read).toHaveBeenCalledTimes(1);
    expect(kept).toStrictEqual(await inner.getTuple(config));
    await saver.getTuple(config);
    expect(read).toHaveBeenCalledTimes(3);
    watch.close();
  });

  it('leaves to the saver a checkpoint with writes against it, one whose put failed, another thread and a read of a given checkpoint', async () => {
    const inner = new MemorySaver(new CheckpointSerializer());
    const saver = new DrainingSaver(inner, () => false);
    const read = vi.spyOn(inner, 'getTuple');
    const watch = saver.watch('t1:th1');

    const saved = await saver.put(config, { ...emptyCheckpoint(), id: 'c1' }, metadata, {});
    await saver.putWrites(saved, [['__interrupt__', [{ value: 'approve?' }]]], 'task1');
    watch.arm();
    expect((await saver.getTuple(config))?.pendingWrites).toHaveLength(1);

    await saver.put(saved, { ...emptyCheckpoint(), id: 'c2' }, metadata, {});
    watch.arm();
    await saver.getTuple({ configurable: { thread_id: 't1:other', checkpoint_ns: '' } });
    await saver.getTuple({ configurable: { ...config.configurable, checkpoint_id: 'c2' } });
    vi.spyOn(inner, 'put').mockRejectedValueOnce(new Error('disk full'));
    await expect(saver.put(saved, { ...emptyCheckpoint(), id: 'c3' }, metadata, {})).rejects.toThrow('disk full');
    expect((await saver.getTuple(config))?.checkpoint.id).toBe('c2');
    expect(read).toHaveBeenCalledTimes(4);
    watch.close();
  });

  it('leaves to the saver a checkpoint whose writes were started before its put (durability "async", a put resolved at a group commit)', async () => {
    const inner = new MemorySaver(new CheckpointSerializer());
    const saver = new DrainingSaver(inner, () => false);
    const watch = saver.watch('t1:th1');
    const first = await saver.put(config, { ...emptyCheckpoint(), id: 'c1' }, metadata, {});
    const c2 = { configurable: { ...config.configurable, checkpoint_id: 'c2' } };
    await saver.putWrites(c2, [['__interrupt__', [{ value: 'delegate' }]]], 'task1');
    await saver.put(first, { ...emptyCheckpoint(), id: 'c2' }, { ...metadata, step: 1 }, {});
    watch.arm();
    const read = await saver.getTuple(config);
    expect(read?.checkpoint.id).toBe('c2');
    expect(read?.pendingWrites).toHaveLength(1);
    watch.close();
  });

  it('serves the checkpoint a suspended stream saved last to the first read of the resumed stream, once, without its put config', async () => {
    const inner = new MemorySaver(new CheckpointSerializer());
    const saver = new DrainingSaver(inner, () => false);
    const read = vi.spyOn(inner, 'getTuple');
    const suspended = saver.watch('t1:th1');
    const first = await saver.put(config, { ...emptyCheckpoint(), id: 'c1' }, metadata, {});
    // The put's config as LangGraph passes it carries the invocation's own objects.
    const invocation = { tags: ['the ended invocation'] };
    await saver.put({ ...first, ...invocation }, { ...emptyCheckpoint(), id: 'c2' }, { ...metadata, step: 1 }, {});
    const point = suspended.suspend();

    const resumed = saver.watch('t1:th1', point);
    const kept = await saver.getTuple(config);
    expect(read).not.toHaveBeenCalled();
    expect(kept).toStrictEqual(await inner.getTuple(config));
    expect(JSON.stringify(kept)).not.toContain('the ended invocation');
    // Once: the next read is the saver's, and the resumed watch keeps working as any other.
    await saver.getTuple(config);
    expect(read).toHaveBeenCalledTimes(2);
    resumed.close();
  });

  it('leaves the resumed read to the saver when writes were made against the checkpoint, its put failed, or the point was closed', async () => {
    const inner = new MemorySaver(new CheckpointSerializer());
    const saver = new DrainingSaver(inner, () => false);
    const read = vi.spyOn(inner, 'getTuple');

    const a = saver.watch('t1:th1');
    const saved = await saver.put(config, { ...emptyCheckpoint(), id: 'c1' }, metadata, {});
    const pointA = a.suspend();
    // A write the ended invocation started against it settles after the suspension.
    await saver.putWrites(saved, [['messages', ['late']]], 'task1');
    saver.watch('t1:th1', pointA);
    expect((await saver.getTuple(config))?.pendingWrites).toHaveLength(1);
    expect(read).toHaveBeenCalledTimes(1);

    const b = saver.watch('t1:th1');
    vi.spyOn(inner, 'put').mockRejectedValueOnce(new Error('disk full'));
    await expect(saver.put(saved, { ...emptyCheckpoint(), id: 'c2' }, metadata, {})).rejects.toThrow('disk full');
    saver.watch('t1:th1', b.suspend());
    expect((await saver.getTuple(config))?.checkpoint.id).toBe('c1');
    expect(read).toHaveBeenCalledTimes(2);

    const c = saver.watch('t1:th1');
    await saver.put(saved, { ...emptyCheckpoint(), id: 'c3' }, metadata, {});
    const pointC = c.suspend();
    pointC.close();
    expect(pointC.tuple()).toBeUndefined();
    // Closed: the suspended watch no longer holds the thread.
    expect(saver.getTuple(config)).toBeInstanceOf(Promise);
    expect(read).toHaveBeenCalledTimes(3);
  });

  it("serves the thread's newest checkpoint, not an older one a cancelled run's executor put late", async () => {
    const inner = new MemorySaver(new CheckpointSerializer());
    const saver = new DrainingSaver(inner, () => false);
    const read = vi.spyOn(inner, 'getTuple');
    const watch = saver.watch('t1:th1');
    const first = await saver.put(config, { ...emptyCheckpoint(), id: 'c1' }, metadata, {});
    await saver.put(first, { ...emptyCheckpoint(), id: 'c3' }, { ...metadata, step: 1 }, {});
    // The earlier run's last put settles after this run's own.
    await saver.put(config, { ...emptyCheckpoint(), id: 'c2' }, metadata, {});
    watch.arm();
    const kept = await saver.getTuple(config);
    expect(read).not.toHaveBeenCalled();
    expect(kept?.checkpoint.id).toBe('c3');
    expect(kept).toStrictEqual(await inner.getTuple(config));
    watch.close();
  });
});

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

/** Streams the agent graph through `inputs` in turn, the final state read with or without the kept checkpoint. */
async function runThrough(keep: boolean, turns: ScriptedTurn[], inputs: GraphInput[], job: Partial<StreamJob> = {}, approvals = fakeApprovals({})) {
  const inner = new MemorySaver(new CheckpointSerializer());
  const reads = vi.spyOn(inner, 'getTuple');
  const saver = new DrainingSaver(inner, () => false);
  const tools: AgentGraphDeps['tools'] = {
    listTools: async () => [spec('now'), spec('rm')],
    execute: async (call) => ({ content: `ran ${call.name}`, isError: false }),
  };
  const ctx = fakeCtx({}, new ScriptedChatModel(turns));
  const graph = buildAgentGraph({ tools, checkpointer: saver as BaseCheckpointSaver, approvals, runContext: () => ctx });
  const cpConfig = { configurable: { thread_id: 't1:th1', run_id: 'r1' } };
  const ends: Array<{ stopped: StoppedGraph; seen: unknown } | { error: string }> = [];
  for (const input of inputs) {
    const seen = { values: null };
    const opts: StreamOptions = { cpConfig, maxLoops: 5, signal: new AbortController().signal, durability: 'async', ...(keep ? { latest: saver } : {}) };
    try {
      const stopped = await streamGraph(graph, recordingEvents(), { runId: 'r1', threadId: 'th1', tenantId: 't1', ...job }, input, opts, seen, log);
      ends.push({ stopped, seen: seen.values });
    } catch (err) {
      ends.push({ error: String(err) });
    }
  }
  // Message and interrupt ids are random (a UUID, a hash of the task): each is named by its order of appearance.
  const ids = new Map<string, string>();
  const json = JSON.stringify(ends).replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[0-9a-f]{32}\b/g, (id) => {
    if (!ids.has(id)) ids.set(id, `id${ids.size}`);
    return ids.get(id)!;
  });
  return { ends: JSON.parse(json) as unknown, reads: reads.mock.calls.length };
}

const ask = (): GraphInput => ({ messages: [new HumanMessage('what time is it?')], loops: 0, max_loops: 5 }) as GraphInput;
const twoCalls: ScriptedTurn[] = [
  { tool_calls: [{ name: 'now', args: {} }] },
  { tool_calls: [{ name: 'now', args: { again: [1, { x: null }] } }] },
  { content: 'It is now.' },
];

describe('the end of a run read from its last checkpoint', () => {
  it('ends a run that ran to its end as the database read did, with one read fewer', async () => {
    const [kept, queried] = [await runThrough(true, twoCalls, [ask()]), await runThrough(false, twoCalls, [ask()])];
    expect(kept.ends).toStrictEqual(queried.ends);
    expect(kept.ends).toMatchObject([{ stopped: { kind: 'success', values: { messages: [{}, {}, {}, {}, {}, { content: 'It is now.' }] } } }]);
    expect(kept.reads).toBe(queried.reads - 1);
  });

  it('ends a run stopped on an approval, then resumed, as the database read did', async () => {
    const turns: ScriptedTurn[] = [{ tool_calls: [{ name: 'rm', args: { path: 'a' } }] }, { content: 'done' }];
    const inputs = [ask(), new Command({ resume: { decision: 'approve', by: 'alice' } }) as unknown as GraphInput];
    const approvals = () => fakeApprovals({ rm: 'require_approval' });
    const [kept, queried] = [await runThrough(true, turns, inputs, {}, approvals()), await runThrough(false, turns, inputs, {}, approvals())];
    expect(kept.ends).toStrictEqual(queried.ends);
    expect(kept.ends).toMatchObject([{ stopped: { kind: 'waits_for_human' } }, { stopped: { kind: 'success' } }]);
  });

  it('ends a run stopped by interrupt_before, then continued, as the database read did, nodes still to run included', async () => {
    const inputs = [ask(), null];
    const job = { interruptBefore: ['tools'] };
    const [kept, queried] = [await runThrough(true, twoCalls, inputs, job), await runThrough(false, twoCalls, inputs, job)];
    expect(kept.ends).toStrictEqual(queried.ends);
    expect(kept.ends).toMatchObject([{ stopped: { kind: 'waits_for_human', next: ['tools'] } }, { stopped: { kind: 'waits_for_human', next: ['tools'] } }]);
    expect(kept.reads).toBe(queried.reads - 2);
  });

  it('fails a run whose model fails as before, reading nothing at its end', async () => {
    const failing: ScriptedTurn[] = [{ tool_calls: [{ name: 'now', args: {} }] }];
    const [kept, queried] = [await runThrough(true, failing, [ask()]), await runThrough(false, failing, [ask()])];
    expect(kept.ends).toStrictEqual(queried.ends);
    expect(kept.ends).toMatchObject([{ error: expect.stringMatching(/script/i) as unknown }]);
    expect(kept.reads).toBe(queried.reads);
  });
});
