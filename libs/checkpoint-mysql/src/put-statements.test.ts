import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from 'mysql2/promise';
import { JsonPlusSerializer, emptyCheckpoint, uuid6, type Checkpoint, type CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { createTestSaver, type TestSaver } from './testing/index.js';
import { MySQLSaver } from './saver.js';
import { ONE_PACKET_MAX_BYTES } from './put-statements.js';

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

/** A pool on the test database whose query()/execute() calls are counted (each one is a round trip). */
function countedPool(multipleStatements: boolean): { pool: Pool; calls: { query: number; execute: number } } {
  const pool = createPool({ uri: db.url, connectionLimit: 2, multipleStatements, charset: 'utf8mb4' });
  const calls = { query: 0, execute: 0 };
  const query = pool.query.bind(pool);
  const execute = pool.execute.bind(pool);
  pool.query = ((...args: Parameters<typeof query>) => (calls.query++, query(...args))) as typeof pool.query;
  pool.execute = ((...args: Parameters<typeof execute>) => (calls.execute++, execute(...args))) as typeof pool.execute;
  return { pool, calls };
}

function checkpoint(values: Record<string, unknown>): Checkpoint {
  const version = Math.random() + 1;
  return {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: values,
    channel_versions: Object.fromEntries(Object.keys(values).map((k) => [k, version])),
  };
}
const meta: CheckpointMetadata = { source: 'loop', step: 1, parents: {} };

describe('MySQLSaver.put round trips', () => {
  it('sends a checkpoint with small values as one query when the pool allows several statements', async () => {
    const { pool, calls } = countedPool(true);
    const saver = new MySQLSaver(pool);
    try {
      const cp = checkpoint({ messages: [{ role: 'user', content: 'héllo 😀' }], bytes: new Uint8Array([0, 1, 255]), branch: 'agent' });
      const saved = await saver.put({ configurable: { thread_id: 'one-packet' } }, cp, meta, cp.channel_versions);
      expect(calls).toEqual({ query: 1, execute: 0 });
      const tuple = await saver.getTuple(saved);
      expect(tuple?.checkpoint.channel_values).toEqual(cp.channel_values);
      expect(tuple?.metadata).toEqual(meta);
    } finally {
      await saver.end();
    }
  });

  it('sends large values, or any values on a pool without multipleStatements, as two prepared statements', async () => {
    const big = checkpoint({ messages: 'x'.repeat(ONE_PACKET_MAX_BYTES + 1) });
    const small = checkpoint({ branch: 'agent' });
    for (const [multipleStatements, cp] of [
      [true, big],
      [false, small],
    ] as const) {
      const { pool, calls } = countedPool(multipleStatements);
      const saver = new MySQLSaver(pool);
      try {
        const saved = await saver.put({ configurable: { thread_id: `two-statements-${String(multipleStatements)}` } }, cp, meta, cp.channel_versions);
        expect(calls).toEqual({ query: 0, execute: 2 });
        expect((await saver.getTuple(saved))?.checkpoint.channel_values).toEqual(cp.channel_values);
      } finally {
        await saver.end();
      }
    }
  });

  it('a put whose checkpoint row fails after its values were stored leaves the thread at its previous checkpoint', async () => {
    // The row's `type` column holds 32 ASCII characters: a longer type fails the packet's second
    // INSERT after its first (the blobs) committed — what a crash between the two leaves behind.
    class FailingRowSerde extends JsonPlusSerializer {
      failRow = false;
      override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
        const out = await super.dumpsTyped(value);
        const isCheckpoint = typeof value === 'object' && value !== null && 'channel_versions' in value;
        return this.failRow && isCheckpoint ? ['x'.repeat(40), out[1]] : out;
      }
    }
    const serde = new FailingRowSerde();
    const { pool, calls } = countedPool(true);
    const saver = new MySQLSaver(pool, serde);
    try {
      const first = checkpoint({ messages: ['first'] });
      const firstConfig = await saver.put({ configurable: { thread_id: 'half-put' } }, first, meta, first.channel_versions);
      serde.failRow = true;
      const second = checkpoint({ messages: ['first', 'second'] });
      await expect(saver.put(firstConfig, second, meta, second.channel_versions)).rejects.toThrow(/too long/i);
      expect(calls.query).toBe(2);
      serde.failRow = false;

      const [stored] = await pool.query<Array<{ n: number } & import('mysql2').RowDataPacket>>(
        'SELECT COUNT(*) AS n FROM checkpoint_blobs WHERE thread_id = ? AND version = ?',
        ['half-put', String(second.channel_versions.messages)],
      );
      expect(Number(stored[0]?.n)).toBe(1);
      const latest = await saver.getTuple({ configurable: { thread_id: 'half-put' } });
      expect(latest?.checkpoint.id).toBe(first.id);
      expect(latest?.checkpoint.channel_values).toEqual({ messages: ['first'] });

      // The pool's connection is still usable, and the put can be made again.
      const again = await saver.put(firstConfig, second, meta, second.channel_versions);
      expect((await saver.getTuple(again))?.checkpoint.channel_values).toEqual({ messages: ['first', 'second'] });
    } finally {
      await saver.end();
    }
  });
});
