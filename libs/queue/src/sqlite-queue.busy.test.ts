/**
 * SqliteQueue waiting for another connection's write lock (an `EMBEDDED_THREADS=orchestrator`
 * thread writing the same file) asynchronously, never by SQLite sleeping on this thread (issue 9).
 * The other connection is in this thread: a wait in SQLite could not see its lock released.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { lockedByAnotherThread } from '@agentloop/core/testing';
import { createLogger } from '@agentloop/core';
import { SqliteQueueDatabase } from './sqlite-queue.js';

const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-sqlite-queue-busy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const text = (s: string) => new TextEncoder().encode(s);
/** Until the event loop has run timers for `ms` (a synchronous wait in SQLite would hold this back). */
const timersRun = (ms = 5) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const stop = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("SqliteQueue: another connection's write lock (issue 9)", () => {
  let database: SqliteQueueDatabase;
  let other: BetterSqlite3.Database;
  let file: string;
  /** The queue's warnings and errors (a take or an outcome that failed, as the worker reports them). */
  let logged: string[];
  /** The queue database on a new file, and a second connection to it; `busyTimeoutMs` the queue's. */
  const open = (busyTimeoutMs: number) => {
    file = path.join(dir, `q-${n++}.sqlite`);
    database = new SqliteQueueDatabase({ path: file, busyTimeoutMs });
    other = new BetterSqlite3(file);
    logged = [];
    const logger = createLogger({ service: 'test', level: 'warn', destination: { write: (line: string) => void logged.push(line) } });
    return database.queue('jobs', { logger });
  };
  afterEach(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await database.close();
  });

  it('an add waits without stopping the event loop, then succeeds', async () => {
    const q = open(2_000);
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const add = q.enqueue(text('a'), { jobId: 'a' }).finally(() => (settled = true));
    await timersRun();
    expect(settled).toBe(false);
    other.exec('COMMIT');
    expect(await add).toEqual({ jobId: 'a', added: true });
    expect(await q.getState('a')).toBe('waiting');
  });

  it('adds keep their call order across the wait: the first add of an id wins', async () => {
    const q = open(2_000);
    other.exec('BEGIN IMMEDIATE');
    const first = q.enqueue(text('first'), { jobId: 'x' });
    await timersRun();
    // Called while the first waits: behind it, so it finds the job there.
    const second = q.enqueue(text('second'), { jobId: 'x' });
    const third = q.enqueue(text('third'), { jobId: 'y' });
    other.exec('COMMIT');
    expect(await first).toEqual({ jobId: 'x', added: true });
    expect(await second).toEqual({ jobId: 'x', added: false });
    expect(await third).toEqual({ jobId: 'y', added: true });
    expect(new TextDecoder().decode(await q.getPayload('x'))).toBe('first');
  });

  it('an add rejects with SQLITE_BUSY once the busy timeout has passed, the event loop running meanwhile', async () => {
    const q = open(200);
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const add = q.enqueue(text('a'), { jobId: 'a' }).finally(() => (settled = true));
    await timersRun();
    expect(settled).toBe(false);
    await expect(add).rejects.toMatchObject({ code: 'SQLITE_BUSY' });
    other.exec('ROLLBACK');
    // Nothing of it is in the file; the queue is usable after it.
    expect(await q.getState('a')).toBe('unknown');
    expect(await q.enqueue(text('a'), { jobId: 'a' })).toEqual({ jobId: 'a', added: true });
  });

  it('a worker takes a job once the lock is released, without stopping the event loop meanwhile', async () => {
    const q = open(2_000);
    await q.enqueue(text('a'), { jobId: 'a' });
    other.exec('BEGIN IMMEDIATE');
    const ran: string[] = [];
    const w = await q.process(async (job) => void ran.push(job.id), { concurrency: 1 });
    await timersRun(20);
    expect(ran).toEqual([]);
    other.exec('COMMIT');
    await until('the job ran and completed', async () => ran.length === 1 && (await q.getState('a')) === 'completed');
    // No take failed: a wait in SQLite could not have seen the lock released, and failed at its busy timeout.
    expect(logged).toEqual([]);
    await w.close();
  });

  it("records a job's outcome once the lock is released, without stopping the event loop meanwhile", async () => {
    const q = open(2_000);
    await q.enqueue(text('a'), { jobId: 'a' });
    let finish!: () => void;
    const gate = new Promise<void>((r) => (finish = r));
    let started = false;
    const w = await q.process(
      async () => {
        started = true;
        await gate;
      },
      { concurrency: 1 },
    );
    await until('the job started', () => started);
    other.exec('BEGIN IMMEDIATE');
    finish();
    await timersRun(20);
    // Its UPDATE waits: still active in the file.
    expect(await stateSeenByOther('a')).toBe(1);
    other.exec('COMMIT');
    await until('the outcome was recorded', async () => (await q.getState('a')) === 'completed');
    // Recorded at its first try: a wait in SQLite could not have seen the lock released, and failed at its busy timeout.
    expect(logged).toEqual([]);
    await w.close();
  });

  it('a transaction whose BEGIN IMMEDIATE met the lock waits and then commits; an error after its BEGIN is not tried again', async () => {
    open(2_000);
    database.db.exec('CREATE TABLE IF NOT EXISTS t (k TEXT)');
    const insert = database.db.prepare('INSERT INTO t (k) VALUES (?)');
    other.exec('BEGIN IMMEDIATE');
    let runs = 0;
    const committed = database.run(() =>
      database.transaction(() => {
        runs++;
        insert.run('a');
      }),
    );
    expect(committed).toBeInstanceOf(Promise);
    await timersRun();
    expect(runs).toBe(0);
    other.exec('COMMIT');
    await committed;
    expect(runs).toBe(1);
    expect(other.prepare('SELECT k FROM t').all()).toEqual([{ k: 'a' }]);
    // SQLITE_BUSY inside a transaction that began: SQLite may have rolled it back, so it is the caller's.
    let inside = 0;
    expect(() =>
      database.run(() =>
        database.transaction(() => {
          inside++;
          throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        }),
      ),
    ).toThrow(/locked/);
    expect(inside).toBe(1);
  });

  it("lets SQLite wait for statements others prepare on the connection (the cron scheduler's, run synchronously)", async () => {
    open(10_000);
    database.db.exec('CREATE TABLE IF NOT EXISTS t (k TEXT)');
    const insert = database.db.prepare('INSERT INTO t (k) VALUES (?)');
    const lock = await lockedByAnotherThread(file, 50);
    lock.release();
    // Synchronous: SQLite waits until the other thread commits.
    expect(insert.run('a').changes).toBe(1);
    await lock.done;
    // The queue's own statements still run without a busy timeout.
    expect(database.db.pragma('busy_timeout', { simple: true })).toBe(0);
  });

  it("a database opened while another thread holds the lock has its owner row before any take: another database's orphan check never hands its job out again", async () => {
    const q = open(10_000);
    await q.enqueue(text('x'), { jobId: 'j' });
    const lock = await lockedByAnotherThread(file, 50);
    lock.release();
    // A thread starting while the file is locked: its first heartbeat waits in SQLite.
    const starting = new SqliteQueueDatabase({ path: file });
    try {
      const owners = () => (other.prepare('SELECT count(*) AS n FROM queue_owners WHERE owner = ?').get(starting.owner) as { n: number }).n;
      expect(owners()).toBe(1);
      await lock.done;
      const ran: string[] = [];
      let finish = () => {};
      const running = new Promise<void>((resolve) => (finish = resolve));
      const w1 = await starting.queue('jobs').process(
        async (job) => {
          ran.push(`starting:${job.id}`);
          await running;
        },
        { concurrency: 1 },
      );
      await until('the starting database to take j', () => ran.length === 1);
      // The first database's worker starts now: its orphan check must see a live owner.
      const w2 = await q.process(async (job) => void ran.push(`first:${job.id}`), { concurrency: 1 });
      await timersRun(100);
      expect(ran).toEqual(['starting:j']);
      finish();
      await w2.close(10);
      await w1.close(10);
    } finally {
      await starting.close();
    }
  });

  it('a take whose look for the next delayed job met the lock looks again soon: the delayed job still runs when due', async () => {
    const q = open(10_000);
    await q.enqueue(text('x'), { jobId: 'later', delayMs: 150 });
    const stmts = (database as unknown as { stmts: Record<string, BetterSqlite3.Statement> }).stmts;
    const real = stmts.nextReadyAt!;
    let busy = 1;
    stmts.nextReadyAt = {
      get: (...args: unknown[]) => {
        if (busy-- > 0) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        return real.get(...args);
      },
    } as unknown as BetterSqlite3.Statement;
    const ran: string[] = [];
    const w = await q.process(async (job) => void ran.push(job.id), { concurrency: 1, stalledIntervalMs: 60_000 });
    await until('the delayed job to run', () => ran.length === 1);
    expect(busy).toBeLessThan(0);
    await w.close(10);
  });

  /** The job's state as another connection sees it in the file. */
  async function stateSeenByOther(id: string): Promise<number | undefined> {
    return (other.prepare('SELECT state FROM queue_jobs WHERE id = ?').get(id) as { state: number } | undefined)?.state;
  }
});
