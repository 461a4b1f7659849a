import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotation, StateGraph, START, END } from '@langchain/langgraph';
import { uuid6, type CheckpointTuple } from '@langchain/langgraph-checkpoint';
import { createConnection } from 'mysql2/promise';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { createTestSaver } from './testing/index.js';

let server: DevServer;

beforeAll(async () => {
  server = await startMariaDb();
});
afterAll(async () => {
  await server?.stop();
});

const State = Annotation.Root({
  items: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

async function all(gen: AsyncGenerator<CheckpointTuple>): Promise<CheckpointTuple[]> {
  const out: CheckpointTuple[] = [];
  for await (const t of gen) out.push(t);
  return out;
}

/** Rows of a table in the test saver's database. */
async function rows(url: string, sqlText: string): Promise<unknown[]> {
  const conn = await createConnection(url);
  try {
    return (await conn.query(sqlText))[0] as unknown[];
  } finally {
    await conn.end();
  }
}

describe('MySQLSaver.deleteCheckpointsFrom', () => {
  it('removes what one run wrote, so the thread reads as before it and the next run builds on that state', async () => {
    const { saver, url, drop } = await createTestSaver(server.url);
    try {
      const graph = new StateGraph(State)
        .addNode('add', (s: typeof State.State) => ({ items: [`item-${s.items.length}`] }))
        .addEdge(START, 'add')
        .addEdge('add', END)
        .compile({ checkpointer: saver });
      const on = { configurable: { thread_id: 'rollback-thread' } };
      await graph.invoke({ items: ['first'] }, on);
      const before = await graph.getState({ configurable: { thread_id: 'rollback-thread' } });
      const historyBefore = await all(saver.list({ configurable: { thread_id: 'rollback-thread' } }));
      // Checkpoint ids are uuid6: one made now sorts after every checkpoint so far and before the next run's.
      const blobsBefore = await rows(url, 'SELECT channel, version FROM checkpoint_blobs ORDER BY channel, version');
      const from = uuid6(-1);
      await graph.invoke({ items: ['second'] }, on);
      expect((await rows(url, 'SELECT * FROM checkpoint_writes')).length).toBeGreaterThan(0);

      const deleted = await saver.deleteCheckpointsFrom('rollback-thread', from);
      expect(deleted).toBeGreaterThan(0);
      const after = await graph.getState({ configurable: { thread_id: 'rollback-thread' } });
      expect(after.values).toEqual({ items: ['first', 'item-1'] });
      expect(after.config.configurable?.checkpoint_id).toBe(before.config.configurable?.checkpoint_id);
      const historyAfter = await all(saver.list({ configurable: { thread_id: 'rollback-thread' } }));
      expect(historyAfter.map((t) => t.checkpoint.id)).toEqual(historyBefore.map((t) => t.checkpoint.id));
      expect(await saver.deleteCheckpointsFrom('rollback-thread', from)).toBe(0);
      // The rolled-back run's values and writes are gone, not only unreachable.
      expect(await rows(url, 'SELECT channel, version FROM checkpoint_blobs ORDER BY channel, version')).toEqual(blobsBefore);
      const ids = new Set(historyAfter.map((t) => t.checkpoint.id));
      const writes = (await rows(url, 'SELECT checkpoint_id FROM checkpoint_writes')) as Array<{ checkpoint_id: Buffer }>;
      expect(writes.every((w) => ids.has(w.checkpoint_id.toString('utf8')))).toBe(true);

      // The next run writes the same channel versions the deleted one did: it must read its own values.
      const third = await graph.invoke({ items: ['third'] }, on);
      expect(third.items).toEqual(['first', 'item-1', 'third', 'item-3']);
      const reread = await graph.getState({ configurable: { thread_id: 'rollback-thread' } });
      expect(reread.values).toEqual({ items: ['first', 'item-1', 'third', 'item-3'] });
    } finally {
      await drop();
    }
  });

  it('leaves other threads alone', async () => {
    const { saver, drop } = await createTestSaver(server.url);
    try {
      const graph = new StateGraph(State)
        .addNode('add', () => ({ items: ['x'] }))
        .addEdge(START, 'add')
        .addEdge('add', END)
        .compile({ checkpointer: saver });
      const from = uuid6(-1);
      await graph.invoke({ items: ['a'] }, { configurable: { thread_id: 'one' } });
      await graph.invoke({ items: ['b'] }, { configurable: { thread_id: 'two' } });
      expect(await saver.deleteCheckpointsFrom('one', from)).toBe(3);
      expect((await graph.getState({ configurable: { thread_id: 'one' } })).values).toEqual({});
      expect((await graph.getState({ configurable: { thread_id: 'two' } })).values).toEqual({ items: ['b', 'x'] });
    } finally {
      await drop();
    }
  });
});
