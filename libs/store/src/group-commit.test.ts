import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteGroupCommit } from './group-commit.js';

/** Two connections to one WAL file; the group commit's flush runs when the test calls `turn()`. */
function setup(dir: string) {
  const file = path.join(dir, 'g.sqlite');
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.exec(`CREATE TABLE p (id TEXT PRIMARY KEY);
    CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL, p TEXT REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)`);
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
