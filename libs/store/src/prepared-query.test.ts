import { createConnection } from 'mysql2/promise';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { createMysqlStore } from './mysql.js';
import { preparedQuery } from './prepared-query.js';
import { createSqliteStore } from './sqlite.js';
import type { SqlStore } from './sql-store.js';

// Module-level on purpose: one prepared query serves stores of both dialects (compiled per instance).
const insertThread = preparedQuery((db, p: { tenantId: string; threadId: string; now: number; metadata: string }) =>
  db.insertInto('threads').values({
    tenant_id: p.tenantId,
    thread_id: p.threadId,
    created_at: p.now,
    updated_at: p.now,
    status: 'idle',
    metadata: p.metadata,
    state_values: null,
  }),
);
const getThread = preparedQuery((db, p: { threadId: string; tenantId: string }) =>
  db.selectFrom('threads').selectAll().where('tenant_id', '=', p.tenantId).where('thread_id', '=', p.threadId),
);
const touch = preparedQuery((db, p: { tenantId: string; threadId: string; now: number }) =>
  db.updateTable('threads').set({ updated_at: p.now }).where('tenant_id', '=', p.tenantId).where('thread_id', '=', p.threadId),
);

function dialectSuite(name: string, open: () => Promise<{ store: SqlStore; done: () => Promise<void> }>): void {
  describe(`preparedQuery on ${name}`, () => {
    let store: SqlStore;
    let done: () => Promise<void>;
    beforeAll(async () => {
      ({ store, done } = await open());
      await store.migrate();
    });
    afterAll(() => done?.());

    it('binds values by name, whatever order the compiler emits them in, and keeps constants', async () => {
      await insertThread.execute(store.db, { metadata: '{"a":1}', now: 1000, threadId: 'th-1', tenantId: 'tn' });
      await insertThread.execute(store.db, { tenantId: 'tn', threadId: 'th-2', now: 2000, metadata: '{}' });
      const row = await getThread.first(store.db, { tenantId: 'tn', threadId: 'th-1' });
      expect(row).toMatchObject({ tenant_id: 'tn', thread_id: 'th-1', status: 'idle', metadata: '{"a":1}' });
      // `now` appears twice in the statement: both get the value.
      expect([Number(row?.created_at), Number(row?.updated_at)]).toEqual([1000, 1000]);
      expect((await getThread.first(store.db, { tenantId: 'tn', threadId: 'th-2' }))?.thread_id).toBe('th-2');
      expect(await getThread.first(store.db, { tenantId: 'other', threadId: 'th-1' })).toBeUndefined();
    });

    it('returns what the builder returns: rows matched by an update, rows read in a transaction', async () => {
      expect(await touch.affected(store.db, { tenantId: 'tn', threadId: 'th-2', now: 3000 })).toBe(1n);
      expect(await touch.affected(store.db, { tenantId: 'tn', threadId: 'missing', now: 3000 })).toBe(0n);
      const prepared = await store.db.transaction().execute(async (trx) => {
        const res = await getThread.execute(trx, { tenantId: 'tn', threadId: 'th-2' });
        return res.rows;
      });
      expect(prepared.map((r) => Number(r.updated_at))).toEqual([3000]);
    });

    it('refuses a parameter the compiler inlined into the SQL text', async () => {
      const inlined = preparedQuery((db, p: { status: string }) =>
        db
          .selectFrom('threads')
          .select('thread_id')
          .where(sql.raw<boolean>(`status = '${p.status}'`)),
      );
      await expect(inlined.rows(store.db, { status: 'idle' })).rejects.toThrow(/status did not compile to statement parameters/);
    });
  });
}

dialectSuite('SQLite', async () => {
  const store = createSqliteStore({ path: ':memory:' }) as SqlStore;
  return { store, done: () => store.close() };
});

let server: DevServer | undefined;
afterAll(async () => {
  await server?.stop();
});

dialectSuite('MariaDB', async () => {
  server = await startMariaDb();
  const name = `prepared_query_${process.pid}`;
  const admin = async (text: string): Promise<void> => {
    const conn = await createConnection(server!.url);
    await conn.query(text).finally(() => conn.end());
  };
  await admin(`CREATE DATABASE \`${name}\``);
  const store = createMysqlStore({ url: server.url.replace(/\/agentloop$/, `/${name}`) }) as SqlStore;
  return {
    store,
    done: async () => {
      await store.close();
      await admin(`DROP DATABASE \`${name}\``);
    },
  };
});
