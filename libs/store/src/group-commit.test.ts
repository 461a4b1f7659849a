import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockedByAnotherThread } from '@agentloop/core/testing';
import { SqliteGroupCommit } from './group-commit.js';

/** Two connections to one WAL file; the group commit's flush runs when the test calls `turn()`. */
function setup(dir: string) {
  const file = path.join(dir, 'g.sqlite');
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.exec(`CREATE TABLE p (id TEXT PRIMARY KEY);
    CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL, p TEXT REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED);
    -- An error after which SQLite has rolled the whole transaction back, as it may on an I/O error,
    -- a full disk or no memory.
    CREATE TRIGGER whole_rollback BEFORE INSERT ON t WHEN NEW.v = 'ROLLBACK'
      BEGIN SELECT RAISE(ROLLBACK, 'whole transaction rolled back'); END`);
  const other = new BetterSqlite3(file);
  let scheduled: (() => void) | undefined;
  const commits = new SqliteGroupCommit(db, (flush) => {
    scheduled = flush;
  });
  const insert =
    (k: string, v: string | null, p: string | null = null) =>
    () => {
      // Whether the write ran inside the batch's transaction (an autocommit write runs outside one).
      const inBatch = db.inTransaction;
      db.prepare('INSERT OR REPLACE INTO t (k, v, p) VALUES (?, ?, ?)').run(k, v, p);
      return inBatch;
    };
  const seen = () => other.prepare('SELECT k, v FROM t ORDER BY k').all();
  const turn = () => {
    const f = scheduled;
    scheduled = undefined;
    f?.();
  };
  return { db, other, commits, insert, seen, turn, isScheduled: () => scheduled !== undefined };
}

describe('SqliteGroupCommit', () => {
  let dir: string;
  let env: ReturnType<typeof setup>;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'group-commit-'));
    env = setup(dir);
  });
  afterEach(() => {
    env.db.close();
    env.other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('commits the writes of one turn in one transaction, invisible to another connection until then', async () => {
    const { commits, insert, seen, turn } = env;
    const a = commits.run(insert('a', '1'));
    const b = commits.run(insert('b', '2'));
    expect(commits.size).toBe(2);
    expect(seen()).toEqual([]);
    turn();
    expect(await a).toBe(true);
    expect(await b).toBe(true);
    expect(seen()).toEqual([
      { k: 'a', v: '1' },
      { k: 'b', v: '2' },
    ]);
  });

  it('settles no caller before the commit', async () => {
    const { commits, insert, turn } = env;
    let settled = false;
    void commits.run(insert('a', '1')).finally(() => (settled = true));
    void commits.run(insert('b', '1'));
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    turn();
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(true);
  });

  it('runs a write alone in its turn in autocommit mode', async () => {
    const { commits, insert, seen, turn } = env;
    const a = commits.run(insert('a', '1'));
    turn();
    expect(await a).toBe(false);
    expect(seen()).toEqual([{ k: 'a', v: '1' }]);
  });

  it('applies the writes in call order', async () => {
    const { commits, insert, seen, turn } = env;
    const writes = ['1', '2', '3'].map((v) => commits.run(insert('a', v)));
    turn();
    await Promise.all(writes);
    expect(seen()).toEqual([{ k: 'a', v: '3' }]);
  });

  it('rejects only the write whose statement failed; the others commit', async () => {
    const { commits, insert, seen, turn } = env;
    const a = commits.run(insert('a', '1'));
    const bad = commits.run(insert('b', null)); // NOT NULL: SQLite undoes this statement only
    const c = commits.run(insert('c', '3'));
    turn();
    await expect(bad).rejects.toThrow(/NOT NULL/);
    await expect(a).resolves.toBe(true);
    await expect(c).resolves.toBe(true);
    expect(seen()).toEqual([
      { k: 'a', v: '1' },
      { k: 'c', v: '3' },
    ]);
  });

  it('rejects only the write that does not fit on a full disk (max_page_count: SQLite undoes that statement); the others commit', async () => {
    const { db, commits, insert, seen, turn } = env;
    // A file that cannot grow: a 200 KB value cannot fit, the small ones can.
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 8}`);
    const a = commits.run(insert('a', '1'));
    const full = commits.run(insert('big', 'x'.repeat(200_000)));
    const c = commits.run(insert('c', '3'));
    turn();
    const settled = await Promise.allSettled([a, full, c]);
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as { code?: string }).code))).toEqual([true, 'SQLITE_FULL', true]);
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([
      { k: 'a', v: '1' },
      { k: 'c', v: '3' },
    ]);
  });

  it('rejects only the write after which SQLite rolled the whole transaction back; the others are run again and commit', async () => {
    const { db, commits, insert, seen, turn } = env;
    const a = commits.run(insert('a', '1'));
    const gone = commits.run(insert('b', 'ROLLBACK'));
    const c = commits.run(insert('c', '3'));
    turn();
    await expect(gone).rejects.toThrow(/whole transaction rolled back/);
    // Both ran inside a batch's transaction: `a` again after the rollback undid it.
    await expect(a).resolves.toBe(true);
    await expect(c).resolves.toBe(true);
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([
      { k: 'a', v: '1' },
      { k: 'c', v: '3' },
    ]);
  });

  it('when every write of a batch rolls the transaction back, rejects each and commits nothing; the connection stays usable', async () => {
    const { db, commits, insert, seen, turn } = env;
    const writes = ['p', 'q', 'r'].map((k) => commits.run(insert(k, 'ROLLBACK')));
    turn();
    for (const write of writes) await expect(write).rejects.toThrow(/whole transaction rolled back/);
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([]);
    const d = commits.run(insert('d', '4'));
    turn();
    await expect(d).resolves.toBe(false);
    expect(seen()).toEqual([{ k: 'd', v: '4' }]);
  });

  it("a batch that meets another connection's lock after such a rollback waits, then commits the rest", async () => {
    const { db, other, commits, insert, seen, turn } = env;
    const a = commits.run(insert('a', '1'));
    // The rolled-back write takes the other connection's lock before the batch begins again.
    const gone = commits.run(() => {
      try {
        return insert('b', 'ROLLBACK')();
      } finally {
        other.exec('BEGIN IMMEDIATE');
      }
    });
    const c = commits.run(insert('c', '3'));
    db.pragma('busy_timeout = 0');
    turn();
    await expect(gone).rejects.toThrow(/whole transaction rolled back/);
    expect(commits.size).toBe(2);
    other.exec('COMMIT');
    await expect(a).resolves.toBe(true);
    await expect(c).resolves.toBe(true);
    expect(seen()).toEqual([
      { k: 'a', v: '1' },
      { k: 'c', v: '3' },
    ]);
  });

  it('rejects every caller of the batch when its COMMIT fails, and writes none of it', async () => {
    const { db, commits, insert, seen, turn } = env;
    const a = commits.run(insert('a', '1'));
    // A deferred foreign key is checked by the COMMIT: the whole batch fails there.
    const b = commits.run(insert('b', '2', 'missing'));
    turn();
    await expect(a).rejects.toThrow(/FOREIGN KEY/);
    await expect(b).rejects.toThrow(/FOREIGN KEY/);
    expect(db.inTransaction).toBe(false);
    expect(seen()).toEqual([]);
    // The connection is usable after it.
    const c = commits.run(insert('c', '3'));
    turn();
    await c;
    expect(seen()).toEqual([{ k: 'c', v: '3' }]);
  });

  it('rejects every caller when the transaction cannot begin', async () => {
    const { db, commits, insert, turn } = env;
    const a = commits.run(insert('a', '1'));
    const b = commits.run(insert('b', '2'));
    db.exec('BEGIN');
    turn();
    await expect(a).rejects.toThrow(/within a transaction/);
    await expect(b).rejects.toThrow(/within a transaction/);
    // The transaction it found open is not its own to roll back.
    expect(db.inTransaction).toBe(true);
    db.exec('ROLLBACK');
  });

  it('flush commits what is pending at once, and the scheduled flush then finds nothing', async () => {
    const { commits, insert, seen, turn, isScheduled } = env;
    const a = commits.run(insert('a', '1'));
    const b = commits.run(insert('b', '2'));
    commits.flush();
    await Promise.all([a, b]);
    expect(seen()).toHaveLength(2);
    expect(commits.size).toBe(0);
    expect(isScheduled()).toBe(true);
    turn();
    // A write after the flush schedules a new one.
    void commits.run(insert('c', '3'));
    expect(isScheduled()).toBe(true);
  });

  it('schedules on the event loop by default', async () => {
    const commits = new SqliteGroupCommit(env.db);
    const writes = [commits.run(env.insert('a', '1')), commits.run(env.insert('b', '2'))];
    expect(await Promise.all(writes)).toEqual([true, true]);
    expect(env.seen()).toHaveLength(2);
  });
});

/** Until the event loop has run timers for `ms` (a synchronous wait in SQLite would hold this back). */
const timersRun = (ms = 5) => new Promise((r) => setTimeout(r, ms));

describe("SqliteGroupCommit: another connection's write lock (issue 9)", () => {
  let dir: string;
  let file: string;
  let db: BetterSqlite3.Database;
  let other: BetterSqlite3.Database;
  /** A group commit on `db` scheduled on the event loop, `busyTimeoutMs` the connection's busy timeout. */
  const open = (busyTimeoutMs: number) => {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    return new SqliteGroupCommit(db);
  };
  const insert = (k: string) => () => db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run(k, k).changes;
  /** Keys in the order their rows were inserted. */
  const seen = () => (other.prepare('SELECT k FROM t ORDER BY rowid').all() as Array<{ k: string }>).map((r) => r.k);
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'group-commit-busy-'));
    file = path.join(dir, 'g.sqlite');
    db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
    other = new BetterSqlite3(file);
  });
  afterEach(() => {
    if (other.inTransaction) other.exec('ROLLBACK');
    db.close();
    other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a batch whose BEGIN meets the lock waits without stopping the event loop, then commits', async () => {
    const commits = open(2_000);
    other.exec('BEGIN IMMEDIATE');
    const events: string[] = [];
    const a = commits.run(insert('a')).then(() => events.push('a'));
    const b = commits.run(insert('b')).then(() => events.push('b'));
    await timersRun();
    events.push('timer');
    // Still pending, not failed: nothing of it was run.
    expect(commits.size).toBe(2);
    other.exec('COMMIT');
    await Promise.all([a, b]);
    expect(events).toEqual(['timer', 'a', 'b']);
    expect(seen()).toEqual(['a', 'b']);
  });

  it('a write alone in its turn (autocommit) waits the same way, then commits', async () => {
    const commits = open(2_000);
    other.exec('BEGIN IMMEDIATE');
    let done = false;
    const a = commits.run(insert('a')).then(() => (done = true));
    await timersRun();
    expect(done).toBe(false);
    expect(commits.size).toBe(1);
    other.exec('COMMIT');
    await a;
    expect(seen()).toEqual(['a']);
  });

  it('keeps the call order across the wait: writes called meanwhile commit after the batch', async () => {
    const commits = open(2_000);
    other.exec('BEGIN IMMEDIATE');
    const writes = [commits.run(insert('a')), commits.run(insert('b'))];
    await timersRun();
    writes.push(commits.run(insert('c')));
    await timersRun();
    writes.push(commits.run(insert('d')));
    expect(commits.size).toBe(4);
    other.exec('COMMIT');
    await Promise.all(writes);
    expect(seen()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('rejects every caller with SQLITE_BUSY once the busy timeout has passed, the event loop running meanwhile', async () => {
    const commits = open(200);
    other.exec('BEGIN IMMEDIATE');
    const a = commits.run(insert('a'));
    const b = commits.run(insert('b'));
    const failed = Promise.allSettled([a, b]);
    await timersRun();
    expect(commits.size).toBe(2);
    const [ra, rb] = await failed;
    expect(ra).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_BUSY' } });
    expect(rb).toMatchObject({ status: 'rejected', reason: { code: 'SQLITE_BUSY' } });
    expect(commits.size).toBe(0);
    expect(db.inTransaction).toBe(false);
    other.exec('ROLLBACK');
    // The connection is usable after it.
    await commits.run(insert('c'));
    expect(seen()).toEqual(['c']);
  });

  it('a synchronous flush while writes wait for the lock lets SQLite wait, and has committed them when it returns', async () => {
    const commits = open(10_000);
    const lock = await lockedByAnotherThread(file, 50);
    const writes = [commits.run(insert('a')), commits.run(insert('b'))];
    // The scheduled flush met the lock: the writes wait asynchronously.
    await timersRun();
    expect(commits.size).toBe(2);
    lock.release();
    commits.flush();
    expect(commits.size).toBe(0);
    expect(await Promise.all(writes)).toEqual([1, 1]);
    await lock.done;
    expect(seen()).toEqual(['a', 'b']);
  });

  it('runs its attempts with busy_timeout 0 and gives the busy timeout back for synchronous use', async () => {
    const commits = open(1_234);
    expect(commits.busyTimeoutMs).toBe(1_234);
    await Promise.all([commits.run(insert('a')), commits.run(insert('b'))]);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(0);
    expect(commits.forSynchronousUse()).toBe(db);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(1_234);
  });
});
