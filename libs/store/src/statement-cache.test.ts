import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cachePreparedStatements, openCheckpointSqlite } from './statement-cache.js';

describe('cachePreparedStatements', () => {
  it('returns the same statement for the same SQL, and results stay right', () => {
    const db = cachePreparedStatements(new BetterSqlite3(':memory:'));
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)');
    const insert = 'INSERT INTO t (k, v) VALUES (?, ?)';
    expect(db.prepare(insert)).toBe(db.prepare(insert));
    db.prepare(insert).run('a', 1);
    db.prepare(insert).run('b', 2);
    expect(db.prepare('SELECT v FROM t WHERE k = ?').get('b')).toEqual({ v: 2 });
    expect(db.prepare('SELECT v FROM t WHERE k = ?').get('a')).toEqual({ v: 1 });
    db.close();
  });

  it('prepares a fresh statement while the cached one is being iterated', () => {
    const db = cachePreparedStatements(new BetterSqlite3(':memory:'));
    db.exec('CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2), (3)');
    const sql = 'SELECT v FROM t ORDER BY v';
    const outer = db.prepare(sql);
    const seen: number[] = [];
    for (const row of outer.iterate() as Iterable<{ v: number }>) {
      const inner = db.prepare(sql);
      expect(inner).not.toBe(outer);
      seen.push(row.v, (inner.all() as Array<{ v: number }>).length);
    }
    expect(seen).toEqual([1, 3, 2, 3, 3, 3]);
    db.close();
  });

  it('keeps at most maxSize statements, dropping the least recently used', () => {
    const db = cachePreparedStatements(new BetterSqlite3(':memory:'), 2);
    const a = db.prepare('SELECT 1');
    db.prepare('SELECT 2');
    expect(db.prepare('SELECT 1')).toBe(a); // refreshed: now the most recent
    db.prepare('SELECT 3'); // evicts SELECT 2
    expect(db.prepare('SELECT 1')).toBe(a);
    db.close();
  });
});

describe('openCheckpointSqlite', () => {
  it("opens the checkpoint file with the store's durability settings (WAL, synchronous NORMAL, busy timeout)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'agentloop-checkpoints-'));
    try {
      const db = openCheckpointSqlite(path.join(dir, 'checkpoints.sqlite'), 1234);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL; SQLite's default is FULL (2)
      expect(db.pragma('busy_timeout', { simple: true })).toBe(1234);
      expect(db.prepare('SELECT 1')).toBe(db.prepare('SELECT 1'));
      db.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
