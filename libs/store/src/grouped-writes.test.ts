/**
 * Writes that share commits on a store's SQLite connection (prepared-query.ts `groupCommit`, issue 9):
 * what a caller and a reader of the connection or of the file can observe must not change — each
 * write settles after its own COMMIT, a statement issued after it runs after it, a failing write
 * fails alone, nothing is lost at close — while one turn's writes make one commit.
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockedByAnotherThread } from '@agentloop/core/testing';
import { preparedQuery } from './prepared-query.js';
import { createSqliteStore } from './sqlite.js';
import type { SqlStore } from './sql-store.js';
import type { NewRecordingEvent } from './types.js';

const groupedInsertThread = preparedQuery(
  (db, p: { tenantId: string; threadId: string; now: number }) =>
    db
      .insertInto('threads')
      .values({ tenant_id: p.tenantId, thread_id: p.threadId, created_at: p.now, updated_at: p.now, status: 'idle', metadata: '{}', state_values: null }),
  { groupCommit: true },
);
const getThread = preparedQuery((db, p: { tenantId: string; threadId: string }) =>
  db.selectFrom('threads').select('thread_id').where('tenant_id', '=', p.tenantId).where('thread_id', '=', p.threadId),
);

/**
 * Transactions committed to `file` so far, as its WAL records them: a frame whose header carries the
 * database size after the commit ends one (https://www.sqlite.org/fileformat2.html#walformat).
 * Frames of an earlier WAL generation (another salt) are not counted.
 */
function walCommits(file: string): number {
  const wal = `${file}-wal`;
  const size = statSync(wal).size;
  if (size < 32) return 0;
  const fd = openSync(wal, 'r');
  try {
    const header = Buffer.alloc(32);
    readSync(fd, header, 0, 32, 0);
    const pageSize = header.readUInt32BE(8);
    const salt = [header.readUInt32BE(16), header.readUInt32BE(20)];
    let commits = 0;
    const frame = Buffer.alloc(24);
    for (let at = 32; at + 24 + pageSize <= size; at += 24 + pageSize) {
      readSync(fd, frame, 0, 24, at);
      if (frame.readUInt32BE(8) !== salt[0] || frame.readUInt32BE(12) !== salt[1]) break;
      if (frame.readUInt32BE(4) !== 0) commits++;
    }
    return commits;
  } finally {
    closeSync(fd);
  }
}

const event = (runId: string, key: string): NewRecordingEvent => ({ tenantId: 'tn', runId, key, kind: 'tool_call', step: 1, payload: { key } });
const usage = { tenantId: 'tn', day: '2026-12-02', model: 'm', inputTokens: 3, outputTokens: 2, totalTokens: 5, firstCallOfRun: false };

describe('grouped writes on the SQLite store', () => {
  let dir: string;
  let file: string;
  let store: SqlStore;
  let other: BetterSqlite3.Database;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'grouped-writes-'));
    file = path.join(dir, 'store.sqlite');
    store = createSqliteStore({ path: file }) as SqlStore;
    await store.migrate();
    other = new BetterSqlite3(file);
  });
  afterEach(async () => {
    other.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const recorded = (runId: string) => other.prepare('SELECT event_key FROM run_recordings WHERE run_id = ? ORDER BY seq').pluck().all(runId);
  const usageRow = () => other.prepare('SELECT model_calls, total_tokens FROM token_usage WHERE tenant_id = ?').get('tn');

  it("commits one turn's recording events and usage increments together, each caller settling after that commit", async () => {
    const before = walCommits(file);
    const writes = [
      store.appendRecordingEvent(event('r1', 'model:1')),
      store.recordTokenUsage(usage),
      store.appendRecordingEvent(event('r2', 'model:1')),
      store.recordTokenUsage(usage),
      store.appendRecordingEvent(event('r1', 'tool:a')),
    ];
    // Not committed yet: another connection sees none of them.
    expect(recorded('r1')).toEqual([]);
    expect(usageRow()).toBeUndefined();
    expect(await Promise.all(writes)).toEqual([true, undefined, true, undefined, true]);
    expect(recorded('r1')).toEqual(['model:1', 'tool:a']);
    expect(recorded('r2')).toEqual(['model:1']);
    expect(usageRow()).toEqual({ model_calls: 2, total_tokens: 10 });
    expect(walCommits(file) - before).toBe(1);
    // Writes of later turns get commits of their own.
    await store.appendRecordingEvent(event('r3', 'model:1'));
    await store.appendRecordingEvent(event('r3', 'model:2'));
    expect(walCommits(file) - before).toBe(3);
  });

  it('runs a statement issued after a grouped write after it, on the direct path and on Kysely’s', async () => {
    const write = groupedInsertThread.execute(store.db, { tenantId: 'tn', threadId: 'th-1', now: 1 });
    // A prepared read (runs on the connection directly) issued in the same turn sees the write.
    expect(await getThread.first(store.db, { tenantId: 'tn', threadId: 'th-1' })).toEqual({ thread_id: 'th-1' });
    await write;
    const event2 = store.appendRecordingEvent(event('r1', 'model:1'));
    // An ordinary builder query (Kysely's executor) too.
    expect((await store.listRecordingEvents('tn', 'r1')).map((e) => e.key)).toEqual(['model:1']);
    expect(await event2).toBe(true);
    // And a transaction begun after it does not take it into its own commit or rollback.
    const write3 = store.appendRecordingEvent(event('r1', 'tool:a'));
    await expect(
      store.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('run_recordings').where('run_id', '=', 'r1').execute();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await write3).toBe(true);
    expect(recorded('r1')).toEqual(['model:1', 'tool:a']);
  });

  it('fails a write alone: a repeated recording key is reported as such, the rest of its commit is kept', async () => {
    const writes = [
      store.appendRecordingEvent(event('r1', 'model:1')),
      store.appendRecordingEvent(event('r1', 'model:1')),
      store.appendRecordingEvent(event('r1', 'tool:a')),
    ];
    expect(await Promise.all(writes)).toEqual([true, false, true]);
    expect(recorded('r1')).toEqual(['model:1', 'tool:a']);
  });

  it("waits for another connection's write lock without stopping the event loop, then commits", async () => {
    const lock = await lockedByAnotherThread(file, 0);
    const write = store.appendRecordingEvent(event('r1', 'model:1'));
    const read = store.listRecordingEvents('tn', 'r1');
    let settled = false;
    void write.finally(() => (settled = true));
    // Timers still fire while the write waits: the thread is not sleeping in SQLite.
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(settled).toBe(false);
    expect(ticks).toBeGreaterThan(2);
    lock.release();
    await lock.done;
    expect(await write).toBe(true);
    clearInterval(ticker);
    // The read issued after the write waited for it.
    expect((await read).map((e) => e.key)).toEqual(['model:1']);
  });

  it('commits pending writes when the store closes', async () => {
    const write = store.appendRecordingEvent(event('r1', 'model:1'));
    const usageWrite = store.recordTokenUsage(usage);
    await store.close();
    expect(await write).toBe(true);
    await usageWrite;
    expect(recorded('r1')).toEqual(['model:1']);
    expect(usageRow()).toEqual({ model_calls: 1, total_tokens: 5 });
    store = createSqliteStore({ path: file }) as SqlStore;
  });

  it("commits pending writes and closes the connection when the store closes before Kysely's executor ran a query", async () => {
    await store.close();
    // The migrated file, opened again and used only through prepared statements (the direct path).
    store = createSqliteStore({ path: file }) as SqlStore;
    const write = store.appendRecordingEvent(event('r1', 'model:1'));
    await store.close();
    expect(recorded('r1')).toEqual(['model:1']);
    expect(await write).toBe(true);
    await expect(store.appendRecordingEvent(event('r1', 'model:2'))).rejects.toThrow(/not open/);
    store = createSqliteStore({ path: file }) as SqlStore;
  });
});
