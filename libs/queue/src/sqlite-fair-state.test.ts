/**
 * The fair scheduler's state in the SQLite file (fair-tags.ts), kept by the triggers of the add and
 * the take (sqlite-database.ts) since neither runs a second statement for it (issue 9): the finish
 * tag of each group and the virtual time, as the arithmetic of fair-tags.ts says, and the column
 * that carries a job's finish tag added to a file made before it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SQL, SqliteQueueDatabase } from './sqlite-queue.js';
import { advance, finishTag, startTag } from './fair-tags.js';

const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-sqlite-fair-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SqliteQueue fairness state', () => {
  const finishOf = (db: SqliteQueueDatabase, queue: string) =>
    Object.fromEntries(
      (db.db.prepare('SELECT grp, finish FROM queue_fair_finish WHERE queue = ?').all(queue) as Array<{ grp: string; finish: number }>).map((r) => [
        r.grp,
        r.finish,
      ]),
    );
  const vtimeOf = (db: SqliteQueueDatabase, queue: string) =>
    (db.db.prepare('SELECT v FROM queue_fair_vtime WHERE queue = ?').get(queue) as { v: number } | undefined)?.v;
  const tagOf = (db: SqliteQueueDatabase, queue: string, id: string) =>
    (db.db.prepare('SELECT tag FROM queue_jobs WHERE queue = ? AND id = ?').get(queue, id) as { tag: number }).tag;

  it('an add moves its group finish tag on, a take moves the virtual time, as fair-tags.ts computes them', async () => {
    const database = new SqliteQueueDatabase({ path: path.join(dir, 'state.sqlite') });
    const q = database.queue('runs', { fairness: { weights: new Map([['heavy', 4]]) } });
    // The model: the same adds and take through the arithmetic alone.
    let v = 0;
    const finish = new Map<string, number>();
    const add = async (id: string, group: string, weight: number) => {
      await q.enqueue(new Uint8Array([1]), { jobId: id, group });
      const tag = startTag(v, finish.get(group));
      finish.set(group, finishTag(tag, weight));
      expect(tagOf(database, 'runs', id)).toBe(tag);
    };
    await add('h1', 'heavy', 4);
    await add('h2', 'heavy', 4);
    await add('l1', 'light', 1);
    await add('l2', 'light', 1);
    expect(finishOf(database, 'runs')).toEqual(Object.fromEntries(finish));
    // A duplicate id adds nothing, finish tag included.
    await q.enqueue(new Uint8Array([1]), { jobId: 'l2', group: 'light' });
    expect(finishOf(database, 'runs')).toEqual(Object.fromEntries(finish));

    const taken = q.take(3);
    for (const t of taken) v = advance(v, t.tag);
    expect(taken.map((t) => t.id)).toEqual(['h1', 'l1', 'h2']);
    expect(vtimeOf(database, 'runs')).toBe(v);
    expect(v).toBeGreaterThan(0);
    // A group idle until now is tagged from the virtual time.
    await add('n1', 'new', 1);
    expect(tagOf(database, 'runs', 'n1')).toBe(v);
    await database.close();
  });

  it('a finished job past the retention added again is tagged anew and moves its group on; a queue without fairness keeps no state', async () => {
    const database = new SqliteQueueDatabase({ path: path.join(dir, 'readd.sqlite') });
    const q = database.queue('fair', { fairness: { weights: new Map() }, retentionMs: 0 });
    await q.enqueue(new Uint8Array([1]), { jobId: 'again', group: 'g' });
    await q.enqueue(new Uint8Array([1]), { jobId: 'other', group: 'g' });
    const [job] = q.take(1);
    q.settle(job!, { ok: true });
    expect(finishOf(database, 'fair')).toEqual({ g: 2 });
    await new Promise((r) => setTimeout(r, 5));
    expect(await q.enqueue(new Uint8Array([1]), { jobId: 'again', group: 'g' })).toEqual({ jobId: 'again', added: true });
    expect(tagOf(database, 'fair', 'again')).toBe(2);
    expect(finishOf(database, 'fair')).toEqual({ g: 3 });

    const plain = database.queue('plain');
    await plain.enqueue(new Uint8Array([1]), { jobId: 'p', group: 'g' });
    expect(plain.take(1).map((t) => [t.id, t.tag])).toEqual([['p', 0]]);
    expect(finishOf(database, 'plain')).toEqual({});
    expect(vtimeOf(database, 'plain')).toBeUndefined();
    await database.close();
  });

  it('a file made before the finish tag moved into the job row gets the column; its queued jobs still run in tag order', async () => {
    const file = path.join(dir, 'pre-finish.sqlite');
    const old = new BetterSqlite3(file);
    // The schema as it was: no `finish` column, no triggers.
    old.exec(SQL.schema.replace('finish REAL,', '').replace(/CREATE TRIGGER[\s\S]*?END;/g, ''));
    old.exec(`INSERT INTO queue_jobs (queue, id, payload, state, attempts, backoff_ms, attempts_made, stalled, ready_at, seq, run, tag, grp)
      VALUES ('runs', 'old', x'01', 0, 1, 1000, 0, 0, 0, 1, 0, 5, 'g')`);
    old.exec(`INSERT INTO queue_fair_finish (queue, grp, finish) VALUES ('runs', 'g', 6)`);
    old.close();
    const database = new SqliteQueueDatabase({ path: file });
    const q = database.queue('runs', { fairness: { weights: new Map() } });
    await q.enqueue(new Uint8Array([2]), { jobId: 'new', group: 'g' });
    expect(tagOf(database, 'runs', 'new')).toBe(6);
    expect(q.take(2).map((t) => t.id)).toEqual(['old', 'new']);
    expect(vtimeOf(database, 'runs')).toBe(6);
    expect(finishOf(database, 'runs')).toEqual({ g: 7 });
    await database.close();
  });
});
