import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cachePreparedStatements } from './statement-cache.js';

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
