import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { createConnection } from 'mysql2/promise';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

describe('preparedQuery on a SQLite store: the statement run on the connection itself (issue 9)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-prepared-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  async function fileStore(): Promise<{ store: SqlStore; reader: BetterSqlite3.Database }> {
    const file = path.join(dir, `db-${n++}.sqlite`);
    const store = createSqliteStore({ path: file }) as SqlStore;
    await store.migrate();
    return { store, reader: new BetterSqlite3(file, { readonly: true }) };
  }
  const count = (reader: BetterSqlite3.Database, threadId: string): number =>
    (reader.prepare('select count(*) as n from threads where thread_id = ?').get(threadId) as { n: number }).n;

  it('outside a transaction the statement is committed when the call returns, before any await', async () => {
    const { store, reader } = await fileStore();
    const written = insertThread.execute(store.db, { tenantId: 'tn', threadId: 'now', now: 1, metadata: '{}' });
    // Another connection already sees the row: no turn of Kysely's executor in between.
    expect(count(reader, 'now')).toBe(1);
    expect((await written).numAffectedRows).toBe(1n);
    reader.close();
    await store.close();
  });

  it('a failing statement rejects its promise rather than throwing at the call', async () => {
    const { store, reader } = await fileStore();
    await insertThread.execute(store.db, { tenantId: 'tn', threadId: 'dup', now: 1, metadata: '{}' });
    const again = insertThread.execute(store.db, { tenantId: 'tn', threadId: 'dup', now: 2, metadata: '{}' });
    await expect(again).rejects.toThrow(/UNIQUE/);
    reader.close();
    await store.close();
  });

  it('while another caller’s write transaction is open it waits for it, and that transaction’s rollback does not undo it', async () => {
    const { store, reader } = await fileStore();
    let inside!: () => void;
    const opened = new Promise<void>((r) => (inside = r));
    let proceed!: () => void;
    const gate = new Promise<void>((r) => (proceed = r));
    const tx = store.writeTransaction(async (db) => {
      await insertThread.execute(db, { tenantId: 'tn', threadId: 'in-tx', now: 1, metadata: '{}' });
      inside();
      await gate;
      throw new Error('rolled back');
    });
    await opened;
    // Issued while the transaction holds the connection: it must not join (and die with) it.
    const outside = insertThread.execute(store.db, { tenantId: 'tn', threadId: 'outside', now: 1, metadata: '{}' });
    expect(count(reader, 'outside')).toBe(0);
    proceed();
    await expect(tx).rejects.toThrow('rolled back');
    await outside;
    expect(count(reader, 'in-tx')).toBe(0);
    expect(count(reader, 'outside')).toBe(1);
    reader.close();
    await store.close();
  });

  it('never overtakes what was issued before it: a transaction begun but not yet open, a query built by Kysely', async () => {
    const { store, reader } = await fileStore();
    const tx = store.writeTransaction((db) => insertThread.execute(db, { tenantId: 'tn', threadId: 'tx', now: 1, metadata: '{}' }));
    expect((await getThread.first(store.db, { tenantId: 'tn', threadId: 'tx' }))?.thread_id).toBe('tx');
    await tx;
    const built = store.db
      .insertInto('threads')
      .values({ tenant_id: 'tn', thread_id: 'built', created_at: 1, updated_at: 1, status: 'idle', metadata: '{}', state_values: null })
      .execute();
    expect((await getThread.first(store.db, { tenantId: 'tn', threadId: 'built' }))?.thread_id).toBe('built');
    await built;
    reader.close();
    await store.close();
  });

  it('a write transaction’s own statements run on the connection too, and commit or roll back with it', async () => {
    const { store, reader } = await fileStore();
    await store.writeTransaction(async (db) => {
      const executor = vi.spyOn(db, 'executeQuery');
      await insertThread.execute(db, { tenantId: 'tn', threadId: 'a', now: 1, metadata: '{}' });
      expect((await getThread.first(db, { tenantId: 'tn', threadId: 'a' }))?.thread_id).toBe('a');
      expect(executor).not.toHaveBeenCalled();
      // Not committed yet: another connection does not see it.
      expect(count(reader, 'a')).toBe(0);
    });
    expect(count(reader, 'a')).toBe(1);
    await expect(
      store.writeTransaction(async (db) => {
        await insertThread.execute(db, { tenantId: 'tn', threadId: 'b', now: 1, metadata: '{}' });
        await insertThread.execute(db, { tenantId: 'tn', threadId: 'a', now: 1, metadata: '{}' });
      }),
    ).rejects.toThrow(/UNIQUE/);
    expect(count(reader, 'b')).toBe(0);
    reader.close();
    await store.close();
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
