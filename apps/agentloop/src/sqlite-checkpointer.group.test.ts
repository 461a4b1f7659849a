/**
 * EmbeddedSqliteSaver's group commit: the checkpoint writes of one turn share one transaction, and
 * no one sees or is promised a write before its COMMIT.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emptyCheckpoint, uuid6, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { openCheckpointSqlite } from '@agentloop/store';
import { EmbeddedCheckpointSerializer, EmbeddedSqliteSaver, openEmbeddedCheckpointer } from './sqlite-checkpointer.js';

const threadConfig = { configurable: { thread_id: 'th1', checkpoint_ns: '' } };
const checkpoint = (): Checkpoint => ({ ...emptyCheckpoint(), id: uuid6(-1) });
const metadata = { source: 'loop' as const, step: 0, parents: {} };

describe('EmbeddedSqliteSaver group commit', () => {
  let dir: string;
  let file: string;
  let saver: EmbeddedSqliteSaver;
  let other: BetterSqlite3.Database;
  /** The flush the saver scheduled, run when the test says. */
  let scheduled: (() => void) | undefined;
  const turn = () => {
    const f = scheduled;
    scheduled = undefined;
    f?.();
  };
  /** Until the saver's writes have been serialized and are waiting for the commit. */
  const untilQueued = async (n: number) => {
    for (let i = 0; i < 100 && (saver as unknown as { commits: { size: number } }).commits.size < n; i++) await new Promise((r) => setImmediate(r));
    expect((saver as unknown as { commits: { size: number } }).commits.size).toBe(n);
  };
  const rowsSeenByOther = () => ({
    checkpoints: (other.prepare('SELECT count(*) AS n FROM checkpoints').get() as { n: number }).n,
    writes: (other.prepare('SELECT count(*) AS n FROM writes').get() as { n: number }).n,
  });

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ckpt-group-'));
    file = path.join(dir, 'checkpoints.sqlite');
    saver = openEmbeddedCheckpointer(file, (flush) => {
      scheduled = flush;
    });
    // Creates the tables (committed at once: a schema change is not a batched write).
    expect(await saver.getTuple(threadConfig)).toBeUndefined();
    other = new BetterSqlite3(file);
  });
  afterEach(() => {
    other.close();
    saver.db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('commits a put and a putWrites of one turn together; another connection sees neither, and neither resolves, before that', async () => {
    const cp = checkpoint();
    let settled = 0;
    const put = saver.put(threadConfig, cp, metadata).finally(() => settled++);
    const writes = saver
      .putWrites({ configurable: { ...threadConfig.configurable, checkpoint_id: cp.id } }, [['messages', 'hi']], 'task-a')
      .finally(() => settled++);
    await untilQueued(2);
    expect(rowsSeenByOther()).toEqual({ checkpoints: 0, writes: 0 });
    expect(settled).toBe(0);
    turn();
    await Promise.all([put, writes]);
    expect(rowsSeenByOther()).toEqual({ checkpoints: 1, writes: 1 });
  });

  it('answers getTuple with a put that is still waiting for its commit, committing it first', async () => {
    const cp = checkpoint();
    const put = saver.put(threadConfig, cp, metadata);
    await untilQueued(1);
    const tuple = await saver.getTuple(threadConfig);
    expect(tuple?.checkpoint.id).toBe(cp.id);
    await expect(put).resolves.toEqual({ configurable: { ...threadConfig.configurable, checkpoint_id: cp.id } });
    expect(rowsSeenByOther().checkpoints).toBe(1);
  });

  it('lists a pending put', async () => {
    const cp = checkpoint();
    const put = saver.put(threadConfig, cp, metadata);
    await untilQueued(1);
    const listed = [];
    for await (const t of saver.list(threadConfig)) listed.push(t.checkpoint.id);
    expect(listed).toEqual([cp.id]);
    await put;
  });

  it('commits pending writes when its connection is reached through saver.db, so closing it loses none', async () => {
    const put = saver.put(threadConfig, checkpoint(), metadata);
    await untilQueued(1);
    saver.db.close();
    await put;
    const reopened = openEmbeddedCheckpointer(file);
    try {
      expect((reopened.db.prepare('SELECT count(*) AS n FROM checkpoints').get() as { n: number }).n).toBe(1);
    } finally {
      reopened.db.close();
    }
    saver = openEmbeddedCheckpointer(file); // for afterEach
  });

  it('rejects every write of a batch whose transaction cannot begin, and keeps none of them', async () => {
    saver.db.close();
    // A short busy timeout: the batch waits that long for the lock (asynchronously), then fails.
    saver = new EmbeddedSqliteSaver(openCheckpointSqlite(file, 100), new EmbeddedCheckpointSerializer(), (flush) => {
      scheduled = flush;
    });
    const cp = checkpoint();
    const put = saver.put(threadConfig, cp, metadata);
    const writes = saver.putWrites({ configurable: { ...threadConfig.configurable, checkpoint_id: cp.id } }, [['messages', 'hi']], 'task-a');
    await untilQueued(2);
    // Another connection holds the write lock: the batch's BEGIN IMMEDIATE fails with SQLITE_BUSY.
    other.exec('BEGIN IMMEDIATE');
    turn();
    await expect(put).rejects.toThrow(/locked|busy/i);
    await expect(writes).rejects.toThrow(/locked|busy/i);
    other.exec('ROLLBACK');
    expect(rowsSeenByOther()).toEqual({ checkpoints: 0, writes: 0 });
  });

  it("waits for another connection's write lock without stopping the event loop, then commits (issue 9)", async () => {
    const cp = checkpoint();
    const events: string[] = [];
    const put = saver.put(threadConfig, cp, metadata).then(() => events.push('put'));
    const writes = saver
      .putWrites({ configurable: { ...threadConfig.configurable, checkpoint_id: cp.id } }, [['messages', 'hi']], 'task-a')
      .then(() => events.push('writes'));
    await untilQueued(2);
    other.exec('BEGIN IMMEDIATE');
    turn();
    // The batch's BEGIN met the lock: it waits, and timers run meanwhile.
    await new Promise((r) => setTimeout(r, 5));
    events.push('timer');
    other.exec('COMMIT');
    await Promise.all([put, writes]);
    expect(events).toEqual(['timer', 'put', 'writes']);
    expect(rowsSeenByOther()).toEqual({ checkpoints: 1, writes: 1 });
  });

  it("a getTuple while a write waits for another connection's lock waits for that write without stopping the event loop, then reads it (issue 9)", async () => {
    const cp = checkpoint();
    const put = saver.put(threadConfig, cp, metadata);
    await untilQueued(1);
    other.exec('BEGIN IMMEDIATE');
    // The put met the lock: it waits, retried after a sleep.
    turn();
    const events: string[] = [];
    const tuple = saver.getTuple(threadConfig).then((t) => {
      events.push('read');
      return t;
    });
    await new Promise((r) => setTimeout(r, 5));
    events.push('timer');
    other.exec('COMMIT');
    await put;
    expect((await tuple)?.checkpoint.id).toBe(cp.id);
    expect(events).toEqual(['timer', 'read']);
  });

  it('tries a getTuple read that met SQLITE_BUSY again asynchronously (issue 9)', async () => {
    const cp = checkpoint();
    const put = saver.put(threadConfig, cp, metadata);
    await untilQueued(1);
    turn();
    await put;
    // A WAL read meets SQLITE_BUSY only in rare windows (another connection recovering the WAL):
    // the saver's prepared read fails twice, as it would there.
    const stmts = saver as unknown as { withoutCheckpoint: BetterSqlite3.Statement };
    const read = stmts.withoutCheckpoint;
    let busy = 2;
    stmts.withoutCheckpoint = {
      get: (...args: unknown[]) => {
        if (busy-- > 0) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        return read.get(...args);
      },
    } as unknown as BetterSqlite3.Statement;
    let timer = false;
    setTimeout(() => (timer = true), 0);
    const tuple = await saver.getTuple(threadConfig);
    expect(tuple?.checkpoint.id).toBe(cp.id);
    expect(busy).toBe(-1);
    expect(timer).toBe(true);
  });

  it("gives synchronous users of saver.db the connection's busy timeout (the rewinder, deleteThread, list)", async () => {
    const put = saver.put(threadConfig, checkpoint(), metadata);
    await untilQueued(1);
    turn();
    await put;
    const connection = (saver as unknown as { connection: BetterSqlite3.Database }).connection;
    // The group commit's own attempts run without one.
    expect(connection.pragma('busy_timeout', { simple: true })).toBe(0);
    expect(saver.db.pragma('busy_timeout', { simple: true })).toBe(5000);
  });
});
