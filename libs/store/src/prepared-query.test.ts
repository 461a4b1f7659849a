import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
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

describe('preparedQuery on a SQLite store, outside Kysely’s executor (issue 9)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'prepared-direct-'));
  const file = path.join(dir, 'store.sqlite');
  let store: SqlStore;
  let other: BetterSqlite3.Database;
  beforeAll(async () => {
    store = createSqliteStore({ path: file }) as SqlStore;
    await store.migrate();
    other = new BetterSqlite3(file, { readonly: true });
  });
  afterAll(async () => {
    other?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const threadsOf = (tenantId: string): string[] =>
    other.prepare('SELECT thread_id FROM threads WHERE tenant_id = ? ORDER BY rowid').pluck().all(tenantId) as string[];
  const newThread = (tenantId: string, threadId: string) => ({ tenantId, threadId, now: 1, metadata: '{}' });

  it('runs the statement before execute returns when nothing holds the connection, with Kysely’s result', async () => {
    const pending = insertThread.execute(store.db, newThread('direct', 'd-1'));
    // Before any await: another connection to the file sees the row committed.
    expect(threadsOf('direct')).toEqual(['d-1']);
    const result = await pending;
    expect(result.numAffectedRows).toBe(1n);
    expect(typeof result.insertId).toBe('bigint');
    expect(await touch.affected(store.db, { tenantId: 'direct', threadId: 'd-1', now: 2 })).toBe(1n);
    expect(Number((await getThread.first(store.db, { tenantId: 'direct', threadId: 'd-1' }))?.updated_at)).toBe(2);
  });

  it('keeps its place behind a statement issued before it that has not run yet', async () => {
    const first = store.db
      .insertInto('threads')
      .values({ tenant_id: 'order', thread_id: 'a', created_at: 1, updated_at: 1, status: 'idle', metadata: '{}', state_values: null })
      .execute();
    const second = insertThread.execute(store.db, newThread('order', 'b'));
    await Promise.all([first, second]);
    expect(threadsOf('order')).toEqual(['a', 'b']);
  });

  it('is neither inside nor ahead of a transaction that holds the connection', async () => {
    for (const when of ['requested', 'begun'] as const) {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const trx = store.db.transaction().execute(async (t) => {
        await insertThread.execute(t, newThread(when, 'in-trx'));
        await gate;
        throw new Error('roll back');
      });
      if (when === 'begun') await new Promise((r) => setImmediate(r));
      const outside = insertThread.execute(store.db, newThread(when, 'outside'));
      release();
      await expect(trx).rejects.toThrow('roll back');
      await outside;
      expect(threadsOf(when), when).toEqual(['outside']);
    }
  });

  it('rejects (never throws) a statement that fails', async () => {
    await insertThread.execute(store.db, newThread('dup', 'same'));
    let pending: Promise<unknown> | undefined;
    expect(() => (pending = insertThread.execute(store.db, newThread('dup', 'same')))).not.toThrow();
    await expect(pending).rejects.toThrow(/UNIQUE constraint failed/);
  });
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
