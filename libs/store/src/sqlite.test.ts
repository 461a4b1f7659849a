import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { storeContract } from './testing/index.js';
import { createSqliteStore } from './sqlite.js';
import { createStore } from './create-store.js';
import { SqlStore } from './sql-store.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-store-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

storeContract({
  name: 'SQLite file',
  async newDatabase() {
    const file = path.join(dir, `db-${n++}.sqlite`);
    // A short busy timeout: the concurrent-migrate test runs its clients in one thread.
    return { open: () => createSqliteStore({ path: file, busyTimeoutMs: 50 }), drop: async () => rmSync(file, { force: true }) };
  },
});

describe('createStore', () => {
  it('uses SQLite when no MySQL URL is given, including :memory:', async () => {
    const store = createStore({ sqlitePath: ':memory:' });
    try {
      expect(store).toBeInstanceOf(SqlStore);
      expect((store as SqlStore).dialect).toBe('sqlite');
      await store.migrate();
      const t = await store.createThread({ tenantId: 't', threadId: 'x' });
      expect(await store.getThread('t', 'x')).toEqual(t);
    } finally {
      await store.close();
    }
  });

  it('uses MySQL when a URL is given', async () => {
    const store = createStore({ mysqlUrl: 'mysql://root@127.0.0.1:1/agentloop', sqlitePath: ':memory:' });
    expect((store as SqlStore).dialect).toBe('mysql');
    await store.close();
  });

  it('rejects a MySQL URL without a database', () => {
    expect(() => createStore({ mysqlUrl: 'mysql://root@127.0.0.1:3306', sqlitePath: ':memory:' })).toThrow(
      /expected mysql:\/\/user:password@host:port\/database/,
    );
  });
});

describe('SQLite file store', () => {
  it('persists across close and reopen', async () => {
    const file = path.join(dir, 'reopen.sqlite');
    const a = createSqliteStore({ path: file });
    await a.migrate();
    await a.createThread({ tenantId: 't', threadId: 'kept', metadata: { v: 1 } });
    await a.close();
    const b = createSqliteStore({ path: file });
    try {
      await b.migrate();
      expect((await b.getThread('t', 'kept'))?.metadata).toEqual({ v: 1 });
    } finally {
      await b.close();
    }
  });
});
