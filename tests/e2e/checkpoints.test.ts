/**
 * Thread checkpoints through the official SDK (issue 11, deliverables 2 and 3), embedded and as a
 * cluster: `threads.getHistory` lists one state per checkpoint, newest first, with ids, parents,
 * metadata, `next`; `limit`, `before` and the metadata filter work; `threads.getState` at a
 * checkpoint (GET by id, POST with a checkpoint) matches the history's entry; a run created with
 * `checkpointId` forks the thread there — an edit of the second user message replaces it (the old
 * branch stays in the history), a regenerate from the checkpoint before the last answer gives a new
 * answer — and the internal (tenant-prefixed) thread id never shows.
 */
import { describe, expect, it } from 'vitest';
import { Client, type ThreadState } from '@langchain/langgraph-sdk';
import { scripted, useCluster, useEmbeddedServer } from './helpers.js';

type Msg = { type: string; content: string };
type Values = { messages: Msg[] };
type State = ThreadState<Values>;

const contents = (s: { values: Values }): string[] => s.values.messages.map((m) => m.content);
const idOf = (s: State): string => s.checkpoint.checkpoint_id!;

async function checkpointJourney(baseUrl: string): Promise<void> {
  const client = new Client({ apiUrl: baseUrl });
  const tid = (await client.threads.create()).thread_id;
  await client.runs.wait(tid, 'agent', {
    input: { messages: [{ role: 'user', content: 'first question' }] },
    config: scripted([{ content: 'First answer.' }]),
  });
  await client.runs.wait(tid, 'agent', {
    input: { messages: [{ role: 'user', content: 'second question' }] },
    config: scripted([{ content: 'Second answer.' }]),
  });

  // 1. Every checkpoint, newest first, each with its id and its parent's.
  const history = (await client.threads.getHistory<Values>(tid, { limit: 100 })) as State[];
  expect(history.length).toBeGreaterThanOrEqual(6);
  expect(JSON.stringify(history)).not.toContain(`default:${tid}`);
  for (const [i, s] of history.entries()) {
    expect(s.checkpoint).toEqual({ thread_id: tid, checkpoint_ns: '', checkpoint_id: expect.any(String) });
    expect(s.metadata).toMatchObject({ step: expect.any(Number), source: expect.stringMatching(/^(input|loop)$/) });
    expect(s.created_at).toEqual(expect.any(String));
    const older = history[i + 1];
    if (older) {
      expect(s.parent_checkpoint).toEqual({ thread_id: tid, checkpoint_ns: '', checkpoint_id: idOf(older) });
      expect(Date.parse(s.created_at!)).toBeGreaterThanOrEqual(Date.parse(older.created_at!));
    } else {
      expect(s.parent_checkpoint).toBeNull();
    }
  }
  expect(contents(history[0]!)).toEqual(['first question', 'First answer.', 'second question', 'Second answer.']);
  expect(history[0]!.next).toEqual([]);
  expect(contents(history[0]!)).toEqual(contents((await client.threads.getState<Values>(tid)) as State));
  // The oldest is the first run's input: nothing yet, the start node next.
  expect(history.at(-1)!.next).toEqual(['__start__']);
  expect(history.at(-1)!.metadata).toMatchObject({ source: 'input', step: -1 });

  // 2. limit, before, metadata filter.
  expect(((await client.threads.getHistory(tid, { limit: 2 })) as State[]).map(idOf)).toEqual(history.slice(0, 2).map(idOf));
  const before = (await client.threads.getHistory(tid, { limit: 2, before: { configurable: { checkpoint_id: idOf(history[1]!) } } })) as State[];
  expect(before.map(idOf)).toEqual(history.slice(2, 4).map(idOf));
  const inputs = (await client.threads.getHistory(tid, { limit: 100, metadata: { source: 'input' } })) as State[];
  expect(inputs.map(idOf)).toEqual(history.filter((s) => s.metadata?.source === 'input').map(idOf));
  expect(inputs).toHaveLength(2);

  // 3. The state at a checkpoint, by id (GET) and by checkpoint (POST), is the history's entry.
  const beforeSecondAnswer = history.find((s) => s.next.includes('agent') && contents(s).at(-1) === 'second question')!;
  expect(beforeSecondAnswer).toBeDefined();
  const byId = (await client.threads.getState<Values>(tid, idOf(beforeSecondAnswer))) as State;
  expect(byId).toMatchObject({ checkpoint: beforeSecondAnswer.checkpoint, parent_checkpoint: beforeSecondAnswer.parent_checkpoint, next: ['agent'] });
  expect(contents(byId)).toEqual(contents(beforeSecondAnswer));
  const byCheckpoint = (await client.threads.getState<Values>(tid, {
    thread_id: tid,
    checkpoint_id: idOf(beforeSecondAnswer),
    checkpoint_ns: '',
    checkpoint_map: null,
  })) as State;
  expect(byCheckpoint.checkpoint).toEqual(beforeSecondAnswer.checkpoint);
  expect(contents(byCheckpoint)).toEqual(contents(beforeSecondAnswer));
  await expect(client.threads.getState(tid, '1f0c0000-0000-6000-8000-000000000000')).rejects.toThrow(/404|not found/i);

  // 4. Edit: fork from the checkpoint before the second user message with the edited message.
  const endOfFirstRun = history.find((s) => s.next.length === 0 && contents(s).length === 2)!;
  expect(contents(endOfFirstRun)).toEqual(['first question', 'First answer.']);
  const edited = (await client.runs.wait(tid, 'agent', {
    input: { messages: [{ role: 'user', content: 'edited question' }] },
    checkpointId: idOf(endOfFirstRun),
    config: scripted([{ content: 'Edited answer.' }]),
  })) as Values;
  expect(contents({ values: edited })).toEqual(['first question', 'First answer.', 'edited question', 'Edited answer.']);
  expect(contents((await client.threads.getState<Values>(tid)) as State)).toEqual(['first question', 'First answer.', 'edited question', 'Edited answer.']);
  const afterEdit = (await client.threads.getHistory<Values>(tid, { limit: 100 })) as State[];
  expect(contents(afterEdit[0]!)).toEqual(['first question', 'First answer.', 'edited question', 'Edited answer.']);
  // Both branches are in the history; the new branch's input hangs off the fork point.
  expect(afterEdit.some((s) => contents(s).includes('second question'))).toBe(true);
  const editInput = afterEdit.find((s) => s.metadata?.source === 'input' && s.parent_checkpoint?.checkpoint_id === idOf(endOfFirstRun));
  expect(editInput).toBeDefined();

  // 5. Regenerate: rerun from the checkpoint before the last answer, no input.
  const beforeEditedAnswer = afterEdit.find((s) => s.next.includes('agent') && contents(s).at(-1) === 'edited question')!;
  expect(beforeEditedAnswer).toBeDefined();
  const regenerated = (await client.runs.wait(tid, 'agent', {
    input: null,
    checkpointId: idOf(beforeEditedAnswer),
    config: scripted([{ content: 'Regenerated answer.' }]),
  })) as Values;
  expect(contents({ values: regenerated })).toEqual(['first question', 'First answer.', 'edited question', 'Regenerated answer.']);
  const now = (await client.threads.getState<Values>(tid)) as State;
  expect(contents(now)).toEqual(['first question', 'First answer.', 'edited question', 'Regenerated answer.']);
  const afterRegenerate = (await client.threads.getHistory<Values>(tid, { limit: 200 })) as State[];
  expect(contents(afterRegenerate[0]!).at(-1)).toBe('Regenerated answer.');
  expect(afterRegenerate.some((s) => contents(s).at(-1) === 'Edited answer.')).toBe(true);
  expect(afterRegenerate.some((s) => contents(s).at(-1) === 'Second answer.')).toBe(true);

  // A checkpoint that does not exist fails the run instead of starting an empty thread.
  const bad = await client.runs.create(tid, 'agent', {
    input: { messages: [{ role: 'user', content: 'x' }] },
    checkpointId: '1f0c0000-0000-6000-8000-000000000000',
    config: scripted([{ content: 'no' }]),
  });
  await client.runs.join(tid, bad.run_id);
  expect((await client.runs.get(tid, bad.run_id)).status).toBe('error');
  expect(contents((await client.threads.getState<Values>(tid)) as State).at(-1)).toBe('Regenerated answer.');
}

describe('thread checkpoints through the SDK (embedded)', () => {
  const server = useEmbeddedServer('agentloop-checkpoints-');

  it('history per checkpoint (limit, before, metadata), state at a checkpoint, edit and regenerate fork', async () => {
    await checkpointJourney(server.url);
  }, 60_000);
});

describe('thread checkpoints through the SDK (cluster)', () => {
  const cluster = useCluster();

  it('history per checkpoint (limit, before, metadata), state at a checkpoint, edit and regenerate fork', async () => {
    await checkpointJourney(cluster().url);
  }, 120_000);
});
