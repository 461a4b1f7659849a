/**
 * EmbeddedSqliteSaver.putWrites writes the rows SqliteSaver writes, in one statement per call.
 */
import { createHook } from 'node:async_hooks';
import { describe, expect, it, vi } from 'vitest';
import type BetterSqlite3 from 'better-sqlite3';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { ERROR, INTERRUPT, RESUME, type PendingWrite } from '@langchain/langgraph-checkpoint';
import { openCheckpointSqlite } from '@agentloop/store';
import { openEmbeddedCheckpointer, WRITES_PER_STATEMENT } from './sqlite-checkpointer.js';

const config = { configurable: { thread_id: 'th1', checkpoint_ns: '', checkpoint_id: 'cp1' } };

/** The statements `db` runs, by SQL text, and an optional failure of the n-th run of an INSERT. */
function watch(db: BetterSqlite3.Database, failInsertNumber?: number) {
  const ran: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    const stmt = prepare(sql);
    return new Proxy(stmt, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        // A native statement's methods need the statement itself as `this`.
        if (prop !== 'run') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return (...args: unknown[]) => {
          ran.push(sql.trim().split(/\s+/).slice(0, 5).join(' '));
          if (ran.filter((s) => s.startsWith('INSERT')).length === failInsertNumber) throw new Error('disk I/O error');
          return target.run(...args);
        };
      },
    });
  }) as BetterSqlite3.Database['prepare'];
  return ran;
}

const rowsOf = (db: BetterSqlite3.Database) => db.prepare('SELECT * FROM writes ORDER BY thread_id, checkpoint_id, task_id, idx').all();

/** The same calls on SqliteSaver and on EmbeddedSqliteSaver. */
async function both(calls: Array<[PendingWrite[], string]>) {
  const stock = new SqliteSaver(openCheckpointSqlite(':memory:'));
  const ours = openEmbeddedCheckpointer(':memory:');
  for (const [writes, task] of calls) {
    await stock.putWrites(config, writes, task);
    await ours.putWrites(config, writes, task);
  }
  return { stock: rowsOf(stock.db), ours: rowsOf(ours.db), saver: ours };
}

/** Promises created while `fn` runs (every promise of the process: run it alone). */
async function promisesDuring(fn: () => Promise<unknown>): Promise<number> {
  let n = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') n++;
    },
  }).enable();
  try {
    await fn();
  } finally {
    hook.disable();
  }
  return n;
}

describe('EmbeddedSqliteSaver: checkpoint writes serialized without a promise per value (issue 9)', () => {
  it('a call with 40 writes, and a checkpoint put, create a few promises, not some per value', async () => {
    const ours = openEmbeddedCheckpointer(':memory:');
    const writes: PendingWrite[] = Array.from({ length: 40 }, (_, i) => [`channel_${i}`, { value: i }]);
    // Warm: the saver's setup and statements.
    await ours.putWrites(config, writes, 'warm');
    expect(await promisesDuring(() => ours.putWrites(config, writes, 'task'))).toBeLessThan(15);
    const checkpoint = { v: 4, id: 'cp2', ts: new Date(0).toISOString(), channel_values: { a: 1 }, channel_versions: { a: 1 }, versions_seen: {} };
    await ours.put(config, { ...checkpoint, id: 'cp1' }, { source: 'loop', step: 0, parents: {} });
    expect(await promisesDuring(() => ours.put(config, checkpoint, { source: 'loop', step: 1, parents: {} }))).toBeLessThan(10);
    // The rows are what SqliteSaver writes (the comparisons below), read back as written.
    const tuple = await ours.getTuple({ configurable: { thread_id: 'th1', checkpoint_ns: '', checkpoint_id: 'cp2' } });
    expect(tuple?.checkpoint.channel_values).toEqual({ a: 1 });
  });
});

describe('EmbeddedSqliteSaver.putWrites', () => {
  it("writes SqliteSaver's rows: idx of special channels, first write kept for ordinary ones, last for all-special calls", async () => {
    const { stock, ours } = await both([
      [
        [
          ['messages', [{ role: 'ai', content: 'hi' }]],
          [ERROR, { message: 'boom' }],
          ['todos', undefined],
        ],
        'task-a',
      ],
      [
        [
          ['messages', 'second write, ignored'],
          ['loops', 2],
        ],
        'task-a',
      ],
      [[[INTERRUPT, [{ value: 'first' }]]], 'task-b'],
      [
        [
          [INTERRUPT, [{ value: 'replaced' }]],
          [RESUME, 'yes'],
        ],
        'task-b',
      ],
      [[], 'task-c'],
    ]);
    expect(ours).toEqual(stock);
    expect(ours.length).toBe(6);
  });

  it('saves a call with one INSERT and no transaction', async () => {
    const saver = openEmbeddedCheckpointer(':memory:');
    const ran = watch(saver.db);
    const transaction = vi.spyOn(saver.db, 'transaction');
    await saver.putWrites(
      config,
      [
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ],
      'task-a',
    );
    expect(ran).toEqual(['INSERT OR IGNORE INTO writes']);
    expect(transaction).not.toHaveBeenCalled();
    expect(rowsOf(saver.db)).toHaveLength(3);
  });

  it('writes more rows than one statement takes in one transaction, the same rows as SqliteSaver', async () => {
    const many: PendingWrite[] = Array.from({ length: WRITES_PER_STATEMENT * 2 + 5 }, (_, i) => [`ch${i}`, { i }]);
    const { stock, ours } = await both([[many, 'task-a']]);
    expect(ours).toEqual(stock);
    expect(ours).toHaveLength(many.length);
  });

  it('leaves none of a call’s rows when its second INSERT fails', async () => {
    const saver = openEmbeddedCheckpointer(':memory:');
    watch(saver.db, 2);
    const many: PendingWrite[] = Array.from({ length: WRITES_PER_STATEMENT + 1 }, (_, i) => [`ch${i}`, i]);
    await expect(saver.putWrites(config, many, 'task-a')).rejects.toThrow('disk I/O error');
    expect(rowsOf(saver.db)).toEqual([]);
  });
});
