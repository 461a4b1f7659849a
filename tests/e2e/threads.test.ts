/**
 * The threads API in full through the official SDK against the real runtime (issue 11,
 * deliverable 2), embedded and as a cluster (MySQL checkpoints): GET /state is the latest
 * checkpoint (its id is the history's first), `updateState` edits the conversation and the next
 * run builds on the edit, `copy` keeps every checkpoint (the copy runs on its own), and the thread
 * stream delivers the events of two consecutive runs.
 */
import { describe, expect, it } from 'vitest';
import { Client, type ThreadState } from '@langchain/langgraph-sdk';
import { scripted, useCluster, useEmbeddedServer } from './helpers.js';

type Msg = { type: string; content: string; id?: string };
type Values = { messages: Msg[] };
type State = ThreadState<Values>;

const contents = (s: { values: unknown }): string[] => ((s.values as Values).messages ?? []).map((m) => m.content);
const user = (content: string) => ({ messages: [{ role: 'user', content }] });
/** updateState's answer as LangGraph Platform sends it (the SDK types it as a config). */
const cp = (r: unknown) => (r as { checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string } }).checkpoint;
const ids = (h: State[]) => h.map((s) => s.checkpoint.checkpoint_id);

async function threadsJourney(baseUrl: string): Promise<void> {
  const client = new Client({ apiUrl: baseUrl });
  const suite = `threads-e2e-${Date.now()}`;
  const tid = (await client.threads.create({ metadata: { suite } })).thread_id;
  await client.runs.wait(tid, 'agent', { input: user('first question'), config: scripted([{ content: 'First answer.' }]) });

  // 1. GET /state is the latest checkpoint, as the history's first entry.
  const history = (await client.threads.getHistory<Values>(tid, { limit: 100 })) as State[];
  const state = (await client.threads.getState<Values>(tid)) as State;
  expect(state.checkpoint).toEqual({ thread_id: tid, checkpoint_ns: '', checkpoint_id: history[0]!.checkpoint.checkpoint_id });
  expect(state.parent_checkpoint).toEqual(history[0]!.parent_checkpoint);
  expect(state.created_at).toBe(history[0]!.created_at);
  expect(state.metadata).toMatchObject({ source: 'loop', step: expect.any(Number) });
  expect(state.next).toEqual([]);
  expect(contents(state)).toEqual(['first question', 'First answer.']);

  // 2. updateState edits the answer in place (same message id), as the finalize node would.
  const answer = (state.values as Values).messages[1]!;
  const updated = await client.threads.updateState(tid, {
    values: { messages: [{ id: answer.id, type: 'ai', content: 'Edited answer.' }] },
    asNode: 'finalize',
  });
  expect(cp(updated)).toEqual({ thread_id: tid, checkpoint_ns: '', checkpoint_id: expect.any(String), checkpoint_map: null });
  const edited = (await client.threads.getState<Values>(tid)) as State;
  expect(edited.checkpoint.checkpoint_id).toBe(cp(updated).checkpoint_id);
  expect(edited.parent_checkpoint?.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
  expect(edited.metadata).toMatchObject({ source: 'update' });
  expect(contents(edited)).toEqual(['first question', 'Edited answer.']);
  expect(edited.next).toEqual([]);
  const record = await client.threads.get<Values>(tid);
  expect(record.status).toBe('idle');
  expect(contents(record as { values: unknown })).toEqual(['first question', 'Edited answer.']);
  expect(JSON.stringify([updated, edited, record])).not.toContain(`default:${tid}`);
  await expect(client.threads.updateState(tid, { values: user('x'), asNode: 'no_such_node' })).rejects.toThrow(/as_node/);
  await expect(client.threads.updateState(tid, { values: { messages: [{ role: 'robot' }] }, asNode: 'agent' })).rejects.toThrow(/values\.messages\[0\]/);

  // 3. The next run builds on the edit.
  const after = (await client.runs.wait(tid, 'agent', { input: user('second question'), config: scripted([{ content: 'Second answer.' }]) })) as Values;
  expect(contents({ values: after })).toEqual(['first question', 'Edited answer.', 'second question', 'Second answer.']);

  // 4. patchState tags the latest checkpoint.
  await client.threads.patchState(tid, { reviewed: 'yes' });
  expect((await client.threads.getState(tid)).metadata).toMatchObject({ reviewed: 'yes', source: 'loop' });

  // 5. copy: every checkpoint under the new id; the copy then runs on its own.
  const source = (await client.threads.getHistory<Values>(tid, { limit: 200 })) as State[];
  const copy = await client.threads.copy(tid);
  expect(copy.thread_id).not.toBe(tid);
  expect(copy.metadata).toMatchObject({ suite });
  const copied = (await client.threads.getHistory<Values>(copy.thread_id, { limit: 200 })) as State[];
  expect(ids(copied)).toEqual(ids(source));
  expect(copied.map(contents)).toEqual(source.map(contents));
  expect(copied.every((s) => s.checkpoint.thread_id === copy.thread_id)).toBe(true);
  expect(JSON.stringify(copied)).not.toContain(tid);
  expect((await client.threads.get(copy.thread_id)).status).toBe('idle');
  const onCopy = (await client.runs.wait(copy.thread_id, 'agent', {
    input: user('third question'),
    config: scripted([{ content: 'Third answer.' }]),
  })) as Values;
  expect(contents({ values: onCopy }).slice(-2)).toEqual(['third question', 'Third answer.']);
  expect(contents(await client.threads.getState(tid))).toEqual(['first question', 'Edited answer.', 'second question', 'Second answer.']);
  // A fork from a copied checkpoint works on the copy.
  const beforeSecond = copied.find((s) => s.next.includes('agent') && contents(s).at(-1) === 'second question')!;
  expect(beforeSecond).toBeDefined();
  const forked = (await client.runs.wait(copy.thread_id, 'agent', {
    input: null,
    checkpointId: beforeSecond.checkpoint.checkpoint_id!,
    config: scripted([{ content: 'Forked answer.' }]),
  })) as Values;
  expect(contents({ values: forked })).toEqual(['first question', 'Edited answer.', 'second question', 'Forked answer.']);

  // 6. count (in SQL, on either database), prune to the latest checkpoint, prune by deletion.
  await client.threads.create({ metadata: { suite, empty: true } });
  expect(await client.threads.count({ metadata: { suite } })).toBe(3);
  expect(await client.threads.count({ metadata: { suite, empty: true } })).toBe(1);
  expect(await client.threads.count({ metadata: { suite }, values: { finalize_reason: null, max_loops: 100 } })).toBe(2);
  expect(await client.threads.count({ metadata: { suite }, status: 'busy' })).toBe(0);
  expect(await client.threads.prune([copy.thread_id], { strategy: 'keep_latest' })).toEqual({ pruned_count: 1 });
  const kept = (await client.threads.getHistory<Values>(copy.thread_id, { limit: 100 })) as State[];
  expect(kept).toHaveLength(1);
  expect(contents(kept[0]!)).toEqual(['first question', 'Edited answer.', 'second question', 'Forked answer.']);
  expect(
    (await client.runs.wait(copy.thread_id, 'agent', { input: user('after prune'), config: scripted([{ content: 'Still here.' }]) })) as Values,
  ).toMatchObject({
    messages: expect.arrayContaining([expect.objectContaining({ content: 'Still here.' })]),
  });
  expect(await client.threads.prune([copy.thread_id], { strategy: 'delete' })).toEqual({ pruned_count: 1 });
  await expect(client.threads.get(copy.thread_id)).rejects.toThrow(/404/);
  expect(await client.threads.count({ metadata: { suite } })).toBe(2);

  // 7. The thread stream delivers two consecutive runs. Joined as a client reconnecting right
  // after the first run's metadata, so the first run is replayed whatever its progress.
  const first = await client.runs.create(tid, 'agent', { input: user('streamed one'), config: scripted([{ content: 'Streamed one.' }]) });
  const parts: Array<{ event: string; data: unknown; id?: string }> = [];
  let second: string | undefined;
  for await (const part of client.threads.joinStream(tid, { lastEventId: `${first.run_id}:0` })) {
    parts.push(part as never);
    if (part.event !== 'end') continue;
    if (second) break;
    second = (await client.runs.create(tid, 'agent', { input: user('streamed two'), config: scripted([{ content: 'Streamed two.' }]) })).run_id;
  }
  const ends = parts.flatMap((p, i) => (p.event === 'end' ? [i] : []));
  expect(ends).toHaveLength(2);
  const firstRun = parts.slice(0, ends[0]! + 1);
  const secondRun = parts.slice(ends[0]! + 1);
  expect(firstRun.every((p) => p.id?.startsWith(`${first.run_id}:`))).toBe(true);
  expect(contents({ values: firstRun.filter((p) => p.event === 'values').at(-1)!.data }).slice(-2)).toEqual(['streamed one', 'Streamed one.']);
  expect(secondRun[0]).toMatchObject({ event: 'metadata', data: { run_id: second, thread_id: tid } });
  expect(secondRun.slice(1).every((p) => p.id?.startsWith(`${second}:`))).toBe(true);
  expect(contents({ values: secondRun.filter((p) => p.event === 'values').at(-1)!.data }).slice(-4)).toEqual([
    'streamed one',
    'Streamed one.',
    'streamed two',
    'Streamed two.',
  ]);
}

describe('the threads API through the SDK (embedded)', () => {
  const server = useEmbeddedServer('agentloop-threads-');

  it('state is the latest checkpoint, updateState edits, copy keeps history, the thread stream spans runs', async () => {
    await threadsJourney(server.url);
  }, 60_000);
});

describe('the threads API through the SDK (cluster)', () => {
  const cluster = useCluster();

  it('state is the latest checkpoint, updateState edits, copy keeps history, the thread stream spans runs', async () => {
    await threadsJourney(cluster().url);
  }, 120_000);
});
