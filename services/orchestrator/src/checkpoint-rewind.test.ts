import { describe, expect, it } from 'vitest';
import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
import { uuid6 } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { checkpointIdFloor, sqliteCheckpointRewinder } from './checkpoint-rewind.js';

const State = Annotation.Root({ items: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }) });

describe('checkpointIdFloor', () => {
  it('sorts at or before every uuid6 of its millisecond and after those of the one before', () => {
    const before = Date.now();
    const id = uuid6(-1);
    const after = Date.now();
    expect(checkpointIdFloor(before) <= id).toBe(true);
    expect(checkpointIdFloor(after + 1) > id).toBe(true);
    expect(checkpointIdFloor(before)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-6[0-9a-f]{3}-0000-000000000000$/);
  });
});

describe('sqliteCheckpointRewinder', () => {
  it('deletes the checkpoints and writes made since a time on one thread, so it reads as before', async () => {
    const saver = SqliteSaver.fromConnString(':memory:');
    const graph = new StateGraph(State)
      .addNode('add', (s: typeof State.State) => ({ items: [`item-${s.items.length}`] }))
      .addEdge(START, 'add')
      .addEdge('add', END)
      .compile({ checkpointer: saver });
    const mine = { configurable: { thread_id: 'tenant-a:thread-1' } };
    const other = { configurable: { thread_id: 'tenant-a:thread-2' } };
    await graph.invoke({ items: ['first'] }, mine);
    const before = await graph.getState(mine);
    await new Promise((r) => setTimeout(r, 2));
    const since = new Date();
    await graph.invoke({ items: ['second'] }, mine);
    await graph.invoke({ items: ['elsewhere'] }, other);

    const deleted = await sqliteCheckpointRewinder(saver).rewind('tenant-a', 'thread-1', since);
    expect(deleted).toBe(3);
    const after = await graph.getState(mine);
    expect(after.values).toEqual({ items: ['first', 'item-1'] });
    expect(after.config.configurable?.checkpoint_id).toBe(before.config.configurable?.checkpoint_id);
    expect((await graph.getState(other)).values).toEqual({ items: ['elsewhere', 'item-1'] });
    const orphanWrites = saver.db
      .prepare(
        'SELECT count(*) AS n FROM writes w WHERE NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_id = w.checkpoint_id)',
      )
      .get() as { n: number };
    expect(orphanWrites.n).toBe(0);
    expect((await graph.invoke({ items: ['third'] }, mine)).items).toEqual(['first', 'item-1', 'third', 'item-3']);
  });
});
