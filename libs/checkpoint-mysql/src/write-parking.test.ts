import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool, type RowDataPacket } from 'mysql2/promise';
import { JsonPlusSerializer, emptyCheckpoint, uuid6, type Checkpoint, type CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { createTestSaver, type TestSaver } from './testing/index.js';
import { MySQLSaver } from './saver.js';
import { WriteParking } from './write-parking.js';
import type { Statement } from './put-statements.js';

let server: DevServer;
let db: TestSaver;

beforeAll(async () => {
  server = await startMariaDb();
  db = await createTestSaver(server.url);
});
afterAll(async () => {
  await db?.drop();
  await server?.stop();
});

/** A multi-statement pool on the test database whose round trips (query()/execute() calls) are counted. */
function countedPool(): { pool: Pool; calls: { query: number; execute: number }; queried: () => Promise<void> } {
  const pool = createPool({ uri: db.url, connectionLimit: 2, multipleStatements: true, charset: 'utf8mb4' });
  const calls = { query: 0, execute: 0 };
  const query = pool.query.bind(pool);
  const execute = pool.execute.bind(pool);
  let onQuery: (() => void) | undefined;
  pool.query = ((...args: Parameters<typeof query>) => {
    calls.query++;
    const sent = query(...args);
    onQuery?.();
    return sent;
  }) as typeof pool.query;
  pool.execute = ((...args: Parameters<typeof execute>) => (calls.execute++, execute(...args))) as typeof pool.execute;
  // Resolves once the next query() is sent (and not yet answered: that takes an I/O turn).
  const queried = () => new Promise<void>((resolve) => (onQuery = resolve));
  return { pool, calls, queried };
}

function checkpoint(values: Record<string, unknown>): Checkpoint {
  const version = Math.random() + 1;
  return { ...emptyCheckpoint(), id: uuid6(-1), channel_values: values, channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, version])) };
}
const meta: CheckpointMetadata = { source: 'loop', step: 1, parents: {} };

/** The row's `type` column holds 32 ASCII characters: a longer type fails the checkpoint row's INSERT. */
class FailingRowSerde extends JsonPlusSerializer {
  failRow = false;
  override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    const out = await super.dumpsTyped(value);
    const isCheckpoint = typeof value === 'object' && value !== null && 'channel_versions' in value;
    return this.failRow && isCheckpoint ? ['x'.repeat(40), out[1]] : out;
  }
}

async function writeRows(pool: Pool, threadId: string): Promise<number> {
  const [rows] = await pool.query<RowDataPacket[]>('SELECT COUNT(*) AS n FROM checkpoint_writes WHERE thread_id = ?', [threadId]);
  return Number(rows[0]?.n);
}

describe('MySQLSaver task writes parked until the next put', () => {
  it('sends a step’s putWrites and the put that follows in one round trip', async () => {
    const { pool, calls } = countedPool();
    const saver = new MySQLSaver(pool);
    try {
      const first = checkpoint({ messages: ['hi'] });
      const firstConfig = await saver.put({ configurable: { thread_id: 'step' } }, first, meta, first.channel_versions);
      calls.query = calls.execute = 0;
      // As LangGraph does: the task's writes, then (without awaiting them) the step's checkpoint.
      const written = saver.putWrites(firstConfig, [['messages', 'answer']], 'task-1');
      const second = checkpoint({ messages: ['hi', 'answer'] });
      const secondConfig = await saver.put(firstConfig, second, meta, second.channel_versions);
      await written;
      expect(calls).toEqual({ query: 1, execute: 0 });
      expect((await saver.getTuple(firstConfig))?.pendingWrites).toEqual([['task-1', 'messages', 'answer']]);
      expect((await saver.getTuple(secondConfig))?.checkpoint.channel_values).toEqual({ messages: ['hi', 'answer'] });
    } finally {
      await saver.end();
    }
  });

  it('keeps the writes made while the previous put is in flight for the put that follows it', async () => {
    const { pool, calls, queried } = countedPool();
    const saver = new MySQLSaver(pool);
    try {
      // As LangGraph's first step: the input's checkpoint is still being written when the
      // __start__ task's writes come, and the step's put waits for the input's put to be stored.
      const first = checkpoint({ messages: ['hi'] });
      const firstSent = queried();
      const firstPut = saver.put({ configurable: { thread_id: 'chained' } }, first, meta, first.channel_versions);
      await firstSent;
      const firstConfig = { configurable: { thread_id: 'chained', checkpoint_ns: '', checkpoint_id: first.id } };
      const written = saver.putWrites(firstConfig, [['messages', 'answer']], 'task-1');
      await firstPut;
      const second = checkpoint({ messages: ['hi', 'answer'] });
      await saver.put(firstConfig, second, meta, second.channel_versions);
      await written;
      expect(calls).toEqual({ query: 2, execute: 0 });
      expect((await saver.getTuple(firstConfig))?.pendingWrites).toEqual([['task-1', 'messages', 'answer']]);
    } finally {
      await saver.end();
    }
  });

  it('stores writes no put takes on their own, before their promise resolves', async () => {
    const { pool, calls } = countedPool();
    const saver = new MySQLSaver(pool);
    try {
      const cp = checkpoint({ messages: ['hi'] });
      const config = await saver.put({ configurable: { thread_id: 'alone' } }, cp, meta, cp.channel_versions);
      calls.query = calls.execute = 0;
      // Two tasks of one step and no put after them (e.g. an interrupt): one round trip for both.
      await Promise.all([saver.putWrites(config, [['a', 1]], 'task-a'), saver.putWrites(config, [['b', 2]], 'task-b')]);
      expect(calls).toEqual({ query: 1, execute: 0 });
      expect(await writeRows(pool, 'alone')).toBe(2);
    } finally {
      await saver.end();
    }
  });

  it('a round trip failing at the checkpoint row leaves the writes and values stored, the thread at its previous checkpoint', async () => {
    // What a crash between the packet's statements leaves: its committed prefix.
    const serde = new FailingRowSerde();
    const { pool } = countedPool();
    const saver = new MySQLSaver(pool, serde);
    try {
      const first = checkpoint({ messages: ['hi'] });
      const firstConfig = await saver.put({ configurable: { thread_id: 'failed-step' } }, first, meta, first.channel_versions);
      serde.failRow = true;
      const written = saver.putWrites(firstConfig, [['messages', 'answer']], 'task-1');
      const second = checkpoint({ messages: ['hi', 'answer'] });
      await expect(saver.put(firstConfig, second, meta, second.channel_versions)).rejects.toThrow(/too long/i);
      await expect(written).rejects.toThrow(/too long/i);
      serde.failRow = false;

      const latest = await saver.getTuple({ configurable: { thread_id: 'failed-step' } });
      expect(latest?.checkpoint.id).toBe(first.id);
      expect(latest?.pendingWrites).toEqual([['task-1', 'messages', 'answer']]);
      // The step made again (LangGraph resumes from the latest checkpoint): a regular write is kept once.
      await Promise.all([saver.putWrites(firstConfig, [['messages', 'answer']], 'task-1'), saver.put(firstConfig, second, meta, second.channel_versions)]);
      expect(await writeRows(pool, 'failed-step')).toBe(1);
      expect((await saver.getTuple({ configurable: { thread_id: 'failed-step' } }))?.checkpoint.id).toBe(second.id);
    } finally {
      await saver.end();
    }
  });
});

describe('WriteParking', () => {
  const st = (sql: string): Statement => ({ sql, values: [] });

  it('hands parked statements to the put that takes them, settling them with its outcome, and never sends them again', async () => {
    const sent: string[][] = [];
    const parking = new WriteParking(async (statements) => void sent.push(statements.map((s) => s.sql)));
    const a = parking.park('t1', st('a'));
    const b = parking.park('t2', st('b'));
    const taken = parking.take('t1');
    expect(taken.statements.map((s) => s.sql)).toEqual(['a']);
    await taken.sent(Promise.resolve());
    await a;
    await b; // t2 was not taken: sent on its own
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([['b']]);
    const failed = parking.park('t1', st('c'));
    const again = parking.take('t1');
    await expect(again.sent(Promise.reject(new Error('lost')))).rejects.toThrow('lost');
    await expect(failed).rejects.toThrow('lost');
  });

  it('while a put of their key is in flight, holds parked statements past the check phase; after it, sends them in the next check phase if no put took them', async () => {
    const sent: string[][] = [];
    const parking = new WriteParking(async (statements) => void sent.push(statements.map((s) => s.sql)));
    const turn = () => new Promise((r) => setImmediate(r));
    let storeFirst!: () => void;
    const first = parking.take('t1');
    const firstDone = first.sent(new Promise<void>((resolve) => (storeFirst = resolve)));
    const a = parking.park('t1', st('a'));
    await turn();
    await turn();
    expect(sent).toEqual([]);
    storeFirst();
    await firstDone;
    // The put that follows takes them.
    const next = parking.take('t1');
    expect(next.statements.map((s) => s.sql)).toEqual(['a']);
    await next.sent(Promise.resolve());
    await a;
    expect(sent).toEqual([]);

    // None follows: they go alone once the put in flight settled (failed, here), in the next check phase.
    let failThird!: (err: Error) => void;
    const third = parking.take('t1');
    const thirdDone = third.sent(new Promise<void>((_, reject) => (failThird = reject)));
    const b = parking.park('t1', st('b'));
    await turn();
    expect(sent).toEqual([]);
    failThird(new Error('lost'));
    await expect(thirdDone).rejects.toThrow('lost');
    await b;
    expect(sent).toEqual([['b']]);
  });

  it('flushAll sends everything still parked (the saver’s end())', async () => {
    const sent: string[] = [];
    const parking = new WriteParking(async (statements) => void sent.push(...statements.map((s) => s.sql)));
    const parked = [parking.park('t1', st('a')), parking.park('t1', st('b')), parking.park('t2', st('c'))];
    await parking.flushAll();
    await Promise.all(parked);
    expect(sent.sort()).toEqual(['a', 'b', 'c']);
    await new Promise((r) => setImmediate(r));
    expect(sent).toHaveLength(3);
  });
});
