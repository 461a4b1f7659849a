import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnection } from 'mysql2/promise';
import { startMariaDb, type DevServer } from '@agentloop/devservers';
import { storeContract } from './testing/index.js';
import { createMysqlStore } from './mysql.js';
import { RunLifecycle } from './run-lifecycle.js';

let server: DevServer;
beforeAll(async () => {
  server = await startMariaDb();
});
afterAll(async () => {
  await server?.stop();
});

async function admin(sqlText: string): Promise<void> {
  const conn = await createConnection(server.url);
  try {
    await conn.query(sqlText);
  } finally {
    await conn.end();
  }
}

let n = 0;
storeContract({
  name: 'MariaDB',
  async newDatabase() {
    const name = `store_test_${process.pid}_${n++}`;
    await admin(`CREATE DATABASE \`${name}\``);
    const url = server.url.replace(/\/agentloop$/, `/${name}`);
    return { open: () => createMysqlStore({ url }), drop: () => admin(`DROP DATABASE \`${name}\``) };
  },
});

describe('RunLifecycle on MariaDB: round trips', () => {
  it("a run's admission on a free thread, its start and its end are one round trip each, with or without a deferred run to hand the thread to (issue 9)", async () => {
    const name = `store_trips_${process.pid}`;
    await admin(`CREATE DATABASE \`${name}\``);
    const sent: string[] = [];
    const store = createMysqlStore({ url: server.url.replace(/\/agentloop$/, `/${name}`), onQuery: (q) => void sent.push(q) });
    try {
      await store.migrate();
      const l = new RunLifecycle(store);
      const tenantId = 'tenant';
      const { threadId } = await store.createThread({ tenantId, threadId: 'thread' });
      const run = (runId: string) => ({ run: { runId, threadId, tenantId, assistantId: 'agent' }, whenBusy: 'defer' as const });
      const trips = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
        sent.length = 0;
        const out = await fn();
        return [out, sent.length];
      };
      // On a free thread without uploads waiting, the admission is one round trip; behind a holder
      // it is the packet that took nothing, then the transaction (BEGIN, take, read, INSERT, COMMIT).
      expect(await trips(() => l.admit({ ...run('first'), claimUploads: true, job: () => ({ payload: new Uint8Array([1]) }) }))).toEqual([
        expect.objectContaining({ kind: 'admitted' }),
        1,
      ]);
      expect(await trips(() => l.admit(run('second')))).toEqual([expect.objectContaining({ kind: 'deferred' }), 6]);
      expect(await trips(() => l.take(tenantId, 'first'))).toEqual([expect.objectContaining({ kind: 'started' }), 1]);
      expect(await trips(() => l.take(tenantId, 'second'))).toEqual([expect.objectContaining({ kind: 'deferred' }), 1]);
      expect(await trips(() => l.end({ tenantId, runId: 'first', status: 'success', values: { n: 1, s: 'naïve 😀' }, cause: 'finished' }))).toEqual([
        expect.objectContaining({ kind: 'ended', threadStatus: 'busy', promoted: expect.objectContaining({ runId: 'second' }) }),
        1,
      ]);
      expect(await trips(() => l.take(tenantId, 'second'))).toEqual([expect.objectContaining({ kind: 'started' }), 1]);
      expect(await trips(() => l.end({ tenantId, runId: 'second', status: 'success', waitsForHuman: true, cause: 'finished' }))).toEqual([
        expect.objectContaining({ kind: 'ended', threadStatus: 'interrupted', promoted: undefined }),
        1,
      ]);
      expect(await trips(() => l.cancel(tenantId, 'second'))).toEqual([expect.objectContaining({ kind: 'already_ended' }), 1]);
      expect(await store.getThread(tenantId, threadId)).toMatchObject({ status: 'interrupted', activeRunId: null, values: { n: 1, s: 'naïve 😀' } });
    } finally {
      await store.close();
      await admin(`DROP DATABASE \`${name}\``);
    }
  });
});

describe('MySQL store under a server sql_mode with NO_BACKSLASH_ESCAPES', () => {
  it('keeps quotes and backslashes in values as they are, so no value can end its string and start another statement of a packet', async () => {
    const name = `store_escapes_${process.pid}`;
    await admin(`CREATE DATABASE \`${name}\``);
    await admin("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',NO_BACKSLASH_ESCAPES')");
    const store = createMysqlStore({ url: server.url.replace(/\/agentloop$/, `/${name}`) });
    try {
      await store.migrate();
      const l = new RunLifecycle(store);
      const tenantId = 'tenant';
      const hostile = `it's \\'; update runs set status = 'success'; -- "x"`;
      const { threadId } = await store.createThread({ tenantId, threadId: 'thread', metadata: { note: hostile } });
      await l.admit({ run: { runId: 'r', threadId, tenantId, assistantId: 'agent' }, whenBusy: 'reject' });
      await l.take(tenantId, 'r');
      // The end is one multi-statement packet: a broken escape there would be a statement of its own.
      await l.end({ tenantId, runId: 'r', status: 'error', error: { error: 'E', message: hostile }, values: { s: hostile }, cause: 'finished' });
      const run = await store.getRun(tenantId, 'r');
      expect(run?.status).toBe('error');
      expect(run?.error).toContain(hostile);
      expect(await store.getThread(tenantId, threadId)).toMatchObject({ metadata: { note: hostile }, values: { s: hostile } });
    } finally {
      await admin("SET GLOBAL sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@GLOBAL.sql_mode, ','), ',NO_BACKSLASH_ESCAPES,', ','))");
      await store.close();
      await admin(`DROP DATABASE \`${name}\``);
    }
  });
});
