import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SQL, SqliteQueue, SqliteQueueDatabase } from './sqlite-queue.js';
import { fairnessContract, queueContract } from './testing/index.js';
import type { Job } from './types.js';

const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-sqlite-queue-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string) => path.join(dir, `${name}.sqlite`);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Counts the prepared statements `database` hands out (each hand-out is one execution in SqliteQueue). */
function countStatements(database: SqliteQueueDatabase): { total: () => number } {
  let n = 0;
  const stmt = database.stmt.bind(database);
  database.stmt = ((name: Parameters<typeof stmt>[0]) => {
    n++;
    return stmt(name);
  }) as typeof database.stmt;
  return { total: () => n };
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const stop = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// Every queue of the suite in one shared file (as embedded mode shares one between runs and webhooks) ...
const shared = new SqliteQueueDatabase({ path: file('contract-shared') });
afterAll(() => shared.close());
queueContract('SqliteQueue (one file shared by the queues)', async (name) => shared.queue(name));
fairnessContract('SqliteQueue', async (name, fairness) => shared.queue(name, { fairness }));
// ... and each queue opening and closing its own file.
queueContract('SqliteQueue (own file)', async (name) => new SqliteQueue(name, { path: file(name) }));

/**
 * Runs `code` in a child process with `q` (SqliteQueue on `dbFile`, queue `name`) in scope; the
 * child prints `READY` when `code` got there. Returns the child and a way to wait for a line.
 */
function child(dbFile: string, name: string, code: string) {
  const script = `import { SqliteQueue } from '@agentloop/queue';
const q = new SqliteQueue(${JSON.stringify(name)}, { path: ${JSON.stringify(dbFile)} });
${code}`;
  const c = spawn(process.execPath, ['--conditions=@agentloop/source', '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  c.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  return { child: c, waitFor: (line: string) => until(`child to print ${line}`, () => out.includes(line), 30_000) };
}

describe('SqliteQueue durability', () => {
  it('keeps waiting and delayed jobs, their attempts and their dedupe across a reopen of the file', async () => {
    const f = file('reopen');
    const q1 = new SqliteQueue('runs', { path: f });
    await q1.enqueue(new Uint8Array([1]), { jobId: 'now', attempts: 3, backoffMs: 5 });
    await q1.enqueue(new Uint8Array([2]), { jobId: 'later', delayMs: 300 });
    await q1.close();

    const q2 = new SqliteQueue('runs', { path: f });
    expect(await q2.getState('now')).toBe('waiting');
    expect(await q2.getState('later')).toBe('delayed');
    expect(await q2.enqueue(new Uint8Array([9]), { jobId: 'now' })).toEqual({ jobId: 'now', added: false });
    const seen: Job[] = [];
    const w = await q2.process(async (job) => void seen.push(job), { concurrency: 2 });
    await until('both completed', async () => (await q2.getState('now')) === 'completed' && (await q2.getState('later')) === 'completed');
    expect(seen.map((j) => [j.id, [...j.payload], j.attempts])).toEqual([
      ['now', [1], 3],
      ['later', [2], 1],
    ]);
    await w.close();
    await q2.close();
  });

  it('takes a job again after the process running it was SIGKILLed, without counting an attempt', async () => {
    const f = file('killed');
    const victim = child(
      f,
      'runs',
      `await q.enqueue(new Uint8Array([7]), { jobId: 'victim', attempts: 1 });
await q.process(async () => { console.log('READY'); await new Promise(() => {}); }, { concurrency: 1 });`,
    );
    await victim.waitFor('READY');
    const q = new SqliteQueue('runs', { path: f });
    expect(await q.getState('victim')).toBe('active');
    victim.child.kill('SIGKILL');
    await once(victim.child, 'exit');

    // The job is still active in the file: no process looks at it until a worker starts.
    expect(await q.getState('victim')).toBe('active');
    const seen: Job[] = [];
    const w = await q.process(async (job) => void seen.push(job), { concurrency: 1, maxStalledCount: 1 });
    await until('victim completed', async () => (await q.getState('victim')) === 'completed');
    expect(seen.map((j) => [j.id, [...j.payload], j.attemptsMade])).toEqual([['victim', [7], 0]]);
    await w.close();
    await q.close();
  }, 60_000);

  it('fails a job that stalled more than maxStalledCount times, with the reason', async () => {
    const f = file('poison');
    for (let i = 0; i < 2; i++) {
      const victim = child(
        f,
        'runs',
        `await q.enqueue(new Uint8Array([7]), { jobId: 'poison', attempts: 5 });
await q.process(async () => { console.log('READY'); await new Promise(() => {}); }, { concurrency: 1, maxStalledCount: 1 });`,
      );
      await victim.waitFor('READY');
      victim.child.kill('SIGKILL');
      await once(victim.child, 'exit');
    }
    const q = new SqliteQueue('runs', { path: f });
    let calls = 0;
    const w = await q.process(async () => void calls++, { concurrency: 1, maxStalledCount: 1 });
    // Stalled once (taken by the second child), then a second time: more than allowed.
    expect(await q.getState('poison')).toBe('failed');
    expect(calls).toBe(0);
    const raw = new BetterSqlite3(f, { readonly: true });
    expect(raw.prepare(`SELECT stalled, error FROM queue_jobs WHERE id = 'poison'`).get()).toEqual({
      stalled: 2,
      error: expect.stringMatching(/stalled more than 1 time/),
    });
    // The dead owners are forgotten once none of their jobs is active.
    expect(raw.prepare('SELECT count(*) AS n FROM queue_owners').get()).toEqual({ n: 1 });
    raw.close();
    await w.close();
    await q.close();
  }, 60_000);

  it('leaves the active jobs of another live process alone', async () => {
    const f = file('alive');
    const other = child(
      f,
      'runs',
      `await q.enqueue(new Uint8Array([1]), { jobId: 'theirs' });
await q.process(async (_job, signal) => { console.log('READY'); await new Promise((r) => setTimeout(r, 1500)); }, { concurrency: 1 });
setTimeout(() => q.close().then(() => console.log('CLOSED')), 2500);`,
    );
    await other.waitFor('READY');
    const q = new SqliteQueue('runs', { path: f });
    let calls = 0;
    const w = await q.process(async () => void calls++, { concurrency: 1, stalledIntervalMs: 100 });
    await new Promise((r) => setTimeout(r, 500));
    expect(await q.getState('theirs')).toBe('active');
    await other.waitFor('CLOSED');
    expect(await q.getState('theirs')).toBe('completed');
    expect(calls).toBe(0);
    await once(other.child, 'exit');
    await w.close();
    await q.close();
  }, 60_000);

  it('an idle worker wakes for a delayed job when it is due, and for a job another process added at its next check', async () => {
    const f = file('wake');
    const q = new SqliteQueue('runs', { path: f });
    const took: Array<{ id: string; at: number }> = [];
    const w = await q.process(async (job) => void took.push({ id: job.id, at: Date.now() }), { concurrency: 2, stalledIntervalMs: 200 });
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    await q.enqueue(new Uint8Array([1]), { jobId: 'due-later', delayMs: 150 });
    await until('delayed job taken', () => took.length === 1);
    expect(took[0]!.at - t0).toBeGreaterThanOrEqual(140);
    const other = child(f, 'runs', `await q.enqueue(new Uint8Array([2]), { jobId: 'from-elsewhere' }); await q.close(); console.log('READY');`);
    await other.waitFor('READY');
    await until('job of the other process taken', () => took.length === 2);
    expect(took.map((t) => t.id)).toEqual(['due-later', 'from-elsewhere']);
    await w.close();
    await q.close();
  }, 60_000);

  it('a take that finds a job also arms the wake-up for a delayed job another connection added', async () => {
    const f = file('wake-after-take');
    const fairness = { weights: new Map<string, number>() };
    // Another connection with no worker (a gateway): its adds wake no worker of this one.
    const elsewhere = new SqliteQueue('runs', { path: f, fairness });
    await elsewhere.enqueue(new Uint8Array([1]), { jobId: 'ready', group: 'acme' });
    await elsewhere.enqueue(new Uint8Array([2]), { jobId: 'due-later', group: 'acme', delayMs: 200 });
    const q = new SqliteQueue('runs', { path: f, fairness });
    const took: string[] = [];
    // The stalled-job check, the other way to find the delayed job, comes only after the test's deadline.
    const w = await q.process(async (job) => void took.push(job.id), { concurrency: 2, stalledIntervalMs: 600_000 });
    await until('both jobs taken', () => took.length === 2);
    expect(took).toEqual(['ready', 'due-later']);
    await w.close();
    await q.close();
    await elsewhere.close();
  }, 60_000);

  it('keeps queues of one file apart (the same job id in two queues)', async () => {
    const db = new SqliteQueueDatabase({ path: file('two-queues') });
    const runs = db.queue('runs');
    const hooks = db.queue('webhooks');
    expect((await runs.enqueue(new Uint8Array([1]), { jobId: 'same' })).added).toBe(true);
    expect((await hooks.enqueue(new Uint8Array([2]), { jobId: 'same', delayMs: 60_000 })).added).toBe(true);
    const seen: number[] = [];
    const w = await runs.process(async (job) => void seen.push(...job.payload), { concurrency: 4 });
    await until('runs job completed', async () => (await runs.getState('same')) === 'completed');
    expect(await hooks.getState('same')).toBe('delayed');
    expect([...((await hooks.getPayload('same')) ?? [])]).toEqual([2]);
    expect(seen).toEqual([1]);
    await w.close();
    await db.close();
  });

  it('forgets a finished job id after the retention period, so the id can be added again', async () => {
    const q = new SqliteQueue('retention', { path: file('retention'), retentionMs: 0 });
    let runs = 0;
    const w = await q.process(async () => void runs++, { concurrency: 1 });
    await q.enqueue(new Uint8Array([1]), { jobId: 'once' });
    await until('once completed', () => runs === 1);
    await new Promise((r) => setTimeout(r, 5));
    expect(await q.getState('once')).toBe('unknown');
    expect(await q.enqueue(new Uint8Array([1]), { jobId: 'once' })).toEqual({ jobId: 'once', added: true });
    await until('once ran again', () => runs === 2);
    await w.close();
    await q.close();
  });

  it('waits base * 2^(n-1) between attempts', async () => {
    const q = new SqliteQueue('backoff', { path: file('backoff') });
    const seen: number[] = [];
    const w = await q.process(
      async (job) => {
        seen.push(job.attemptsMade);
        throw new Error('fail');
      },
      { concurrency: 1 },
    );
    await q.enqueue(new Uint8Array([1]), { jobId: 'b', attempts: 3, backoffMs: 60_000 });
    await until('first attempt', () => seen.length === 1);
    await until('delayed', async () => (await q.getState('b')) === 'delayed');
    expect(seen).toEqual([0]);
    await w.close();
    await q.close();
  });

  it('copies the payload so the caller cannot change a queued job, and rejects an integer job id', async () => {
    const q = new SqliteQueue('copy', { path: file('copy') });
    const payload = new Uint8Array([1, 2, 3]);
    await q.enqueue(payload.subarray(1), { jobId: 'c' });
    payload[1] = 9;
    expect([...((await q.getPayload('c')) ?? [])]).toEqual([2, 3]);
    await expect(q.enqueue(new Uint8Array(), { jobId: '42' })).rejects.toThrow(/Invalid job id "42"/);
    await q.close();
  });

  it('upgrades a file made before fair scheduling: its queued jobs keep their place and run', async () => {
    const path0 = file('pre-fairness');
    const old = new BetterSqlite3(path0);
    old.exec(`CREATE TABLE queue_jobs (queue TEXT NOT NULL, id TEXT NOT NULL, payload BLOB NOT NULL, state INTEGER NOT NULL,
      attempts INTEGER NOT NULL, backoff_ms INTEGER NOT NULL, attempts_made INTEGER NOT NULL, stalled INTEGER NOT NULL,
      ready_at INTEGER NOT NULL, seq INTEGER NOT NULL, run INTEGER NOT NULL, owner TEXT, finished_at INTEGER, error TEXT, UNIQUE (queue, id));
      INSERT INTO queue_jobs VALUES ('runs', 'old-job', x'6f6c64', 0, 1, 1000, 0, 0, 0, 1, 0, NULL, NULL, NULL);`);
    old.close();
    const database = new SqliteQueueDatabase({ path: path0 });
    const q = database.queue('runs', { fairness: { weights: new Map() } });
    await q.enqueue(new TextEncoder().encode('new'), { jobId: 'new-job', group: 'acme' });
    const seen: string[] = [];
    const w = await q.process(async (job) => void seen.push(new TextDecoder().decode(job.payload)), { concurrency: 1 });
    await until('both jobs ran', () => seen.length === 2);
    expect(seen).toEqual(['old', 'new']);
    await w.close();
    await database.close();
  });

  it('takes the next job through the index of ready jobs, and settles it by rowid (no table scan)', () => {
    const db = new BetterSqlite3(':memory:');
    db.exec(SQL.schema);
    const plan = (sql: string) => {
      // Named parameters (@name) bound as one object, positional ones (?) one by one.
      const names = [...new Set(sql.match(/@\w+/g) ?? [])].map((n) => [n.slice(1), null] as const);
      const args = names.length > 0 ? [Object.fromEntries(names)] : Array<null>((sql.match(/\?/g) ?? []).length).fill(null);
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    };
    for (const k of [
      'enqueue',
      'enqueueFair',
      'take',
      'takeOne',
      'nextReadyAt',
      'settle',
      'get',
      'sweep',
      'requeueStalled',
      'failStalled',
      'ownerBusy',
      'wakeParked',
    ] as const) {
      const p = plan(SQL[k]);
      expect(p, k).not.toMatch(/SCAN queue_jobs|TEMP B-TREE/);
    }
    expect(plan(SQL.take)).toMatch(/USING COVERING INDEX queue_jobs_fair/);
    expect(plan(SQL.takeOne)).toMatch(/USING COVERING INDEX queue_jobs_fair/);
    // One pass by rowid: no list of rowids built first (the batch take's cost, issue 9).
    expect(plan(SQL.takeOne)).not.toMatch(/LIST SUBQUERY/);
    db.close();
  });

  it("keeps temporary tables (the batch take's list of rowids) in memory, not in a temporary file", async () => {
    const database = new SqliteQueueDatabase({ path: file('temp-store') });
    expect(database.db.pragma('temp_store', { simple: true })).toBe(2);
    await database.close();
  });

  it('takes one job or a batch as the ready jobs allow, in order, and wakes for the next delayed one', async () => {
    const q = new SqliteQueue('batch', { path: file('batch') });
    const seen: string[] = [];
    const gates: Array<() => void> = [];
    // Three ready jobs and one due in 300 ms; a worker with room for all takes the ready ones at once.
    for (const id of ['a', 'b', 'c']) await q.enqueue(new TextEncoder().encode(id), { jobId: id });
    await q.enqueue(new TextEncoder().encode('later'), { jobId: 'later', delayMs: 300 });
    const w = await q.process(
      (job) => {
        seen.push(new TextDecoder().decode(job.payload));
        return new Promise<void>((r) => gates.push(r));
      },
      { concurrency: 10 },
    );
    await until('the ready jobs started', () => seen.length === 3);
    expect(seen).toEqual(['a', 'b', 'c']);
    await until('the delayed job started when due', () => seen.length === 4);
    expect(seen[3]).toBe('later');
    for (const g of gates) g();
    await w.close();
    await q.close();
  });

  it('hands out the job its single-row take committed even when the batch take after it fails', async () => {
    const q = new SqliteQueue('batch-fails', { path: file('batch-fails') });
    for (const id of ['a', 'b', 'c']) await q.enqueue(new TextEncoder().encode(id), { jobId: id });
    // The batch take fails once (SQLITE_BUSY past the busy timeout, a full disk) after `a` was taken.
    const database = (q as unknown as { database: SqliteQueueDatabase }).database;
    const stmt = database.stmt.bind(database);
    let failed = false;
    database.stmt = ((name) => {
      const s = stmt(name);
      if (name !== 'take' || failed) return s;
      failed = true;
      return {
        all: () => {
          throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
        },
      } as unknown as ReturnType<typeof stmt>;
    }) as typeof database.stmt;
    const seen: string[] = [];
    const w = await q.process(async (job) => void seen.push(new TextDecoder().decode(job.payload)), { concurrency: 10 });
    // `a` is active under this live process, which no stalled-job check takes back: lost until a restart if not run now.
    await until('every job ran', () => seen.length === 3, 10_000);
    expect([...seen].sort()).toEqual(['a', 'b', 'c']);
    expect(failed).toBe(true);
    await w.close();
    await q.close();
  });

  it('takes and completes thousands of jobs with a huge concurrency, in the same statements per job whatever the file holds', async () => {
    // What "costing little per job" means, counted rather than timed (issue 9: no timing thresholds
    // in the suite): the statements a job costs do not grow with the jobs kept or active, and each
    // of them finds its rows through an index (the query-plan test above), so none reads more
    // rows as the file grows.
    const database = new SqliteQueueDatabase({ path: file('many') });
    const q = database.queue('many');
    const counted = countStatements(database);
    const round = async (prefix: string, n: number) => {
      let done = 0;
      const gates: Array<() => void> = [];
      const w = await q.process(() => new Promise<void>((r) => gates.push(r)).then(() => void done++), { concurrency: 100_000 });
      const before = counted.total();
      const started = process.cpuUsage();
      for (let i = 0; i < n; i++) await q.enqueue(new Uint8Array([i & 255]), { jobId: `${prefix}-${i}` });
      await until(`all ${prefix} jobs active`, () => gates.length === n, 60_000);
      for (const g of gates) g();
      await until(`all ${prefix} jobs done`, () => done === n, 60_000);
      await until(`${prefix} jobs completed`, async () => (await q.getState(`${prefix}-${n - 1}`)) === 'completed', 60_000);
      const cpu = process.cpuUsage(started);
      await w.close();
      return { statements: (counted.total() - before) / n, cpuMs: (cpu.user + cpu.system) / 1000 / n };
    };
    // 500 jobs on an empty file, then 5,000 more (up to 5,000 active at once) with the first 500 kept.
    const small = await round('small', 500);
    const large = await round('large', 5_000);
    // Printed for whoever reads the log; not asserted (CPU time depends on the machine).
    console.log(
      `SqliteQueue: enqueue + take + complete, statements per job ${small.statements.toFixed(2)} (500 jobs) / ${large.statements.toFixed(2)} ` +
        `(5,000 more, up to 5,000 active), CPU per job ${small.cpuMs.toFixed(3)} / ${large.cpuMs.toFixed(3)} ms`,
    );
    // An add, a take (one, or a share of a batch take), a settle: at most three statements per job,
    // and no more with ten times the jobs (a take that re-read the active jobs would show here).
    expect(large.statements).toBeLessThanOrEqual(3);
    expect(large.statements).toBeLessThanOrEqual(small.statements + 0.05);
    await q.close();
    await database.close();
  }, 120_000);
});
