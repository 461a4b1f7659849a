import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from './sqlite.js';
import type { Store } from './types.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-busy-wait-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

async function twoStores(busyTimeoutMs = 10_000): Promise<[Store, Store]> {
  const file = path.join(dir, `db-${n++}.sqlite`);
  const a = createSqliteStore({ path: file, busyTimeoutMs });
  await a.migrate();
  const b = createSqliteStore({ path: file, busyTimeoutMs });
  await b.migrate();
  return [a, b];
}

/**
 * Holds `holder`'s write lock until `until` resolves; resolves once the lock is held (a store's
 * autocommitted statement can run at its call, before a transaction begun earlier has its lock).
 */
async function holdingLock(holder: Store, until: Promise<void>): Promise<{ done: Promise<void> }> {
  let locked!: () => void;
  const held = new Promise<void>((r) => (locked = r));
  const done = holder.writeTransaction(async (db) => {
    await sql`update threads set updated_at = updated_at`.execute(db);
    locked();
    await until;
  });
  await held;
  return { done };
}

describe('SQLite store: waiting for another connection’s write lock', () => {
  it('runs with busy_timeout 0: SQLite never sleeps on the event loop', async () => {
    const [a, b] = await twoStores();
    const rows = await a.writeStatement((db) => sql<{ timeout: number }>`pragma busy_timeout`.execute(db));
    expect(rows.rows[0]?.timeout).toBe(0);
    await a.close();
    await b.close();
  });

  it('an autocommitted write waits asynchronously for the lock and then succeeds', async () => {
    const [a, b] = await twoStores();
    let release!: () => void;
    const { done: held } = await holdingLock(a, new Promise<void>((r) => (release = r)));
    const events: string[] = [];
    const write = b.createThread({ tenantId: 't', threadId: 'th' }).then(() => events.push('write done'));
    // The write is waiting: timers still run (a synchronous busy wait would have stopped them).
    await new Promise((r) => setTimeout(r, 30));
    events.push('timer');
    release();
    await held;
    await write;
    expect(events).toEqual(['timer', 'write done']);
    expect(await a.getThread('t', 'th')).toMatchObject({ threadId: 'th' });
    await a.close();
    await b.close();
  });

  it('a write transaction of another store waits for the lock, then runs whole', async () => {
    const [a, b] = await twoStores();
    let release!: () => void;
    const { done: held } = await holdingLock(a, new Promise<void>((r) => (release = r)));
    const tx = b.writeTransaction(async (db) => {
      await sql`insert into threads (tenant_id, thread_id, created_at, updated_at, status, metadata) values ('t', 'x', 1, 1, 'idle', '{}')`.execute(db);
      return 'committed';
    });
    await new Promise((r) => setTimeout(r, 30));
    release();
    await held;
    expect(await tx).toBe('committed');
    expect(await a.getThread('t', 'x')).toMatchObject({ threadId: 'x' });
    await a.close();
    await b.close();
  });

  it('gives up with SQLITE_BUSY after the busy timeout, having written nothing', async () => {
    const [a, b] = await twoStores(20);
    let release!: () => void;
    const { done: held } = await holdingLock(a, new Promise<void>((r) => (release = r)));
    await expect(b.createThread({ tenantId: 't', threadId: 'late' })).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
    release();
    await held;
    expect(await a.getThread('t', 'late')).toBeUndefined();
    await a.close();
    await b.close();
  });
});
