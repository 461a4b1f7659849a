/**
 * Fair scheduling across tenants (issue 17; docs/adr/0008-fair-scheduling.md). Tenant A submits
 * 2,000 background runs, then tenant B submits one: B's run starts after at most the ADR's bound of
 * A's runs (counted from the run records, not timed), long before A's backlog drains. Embedded
 * (SQLite queue) and as a cluster (BullMQ on Redis, records in MySQL).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { createConnection, type RowDataPacket } from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { poll, scripted, useCluster, useEmbeddedServer } from './helpers.js';

const A_RUNS = 2_000;
const BATCH = 100;
/** Orchestrator worker slots: 2,000 short runs take far longer than B's wait. */
const RUN_CONCURRENCY = 4;
const KEYS = { a: 'key-tenant-a', b: 'key-tenant-b' };
/** `cap`: TENANT_MAX_CONCURRENT_RUNS; 0 lets A fill every worker slot, so only the queue's order lets B in. */
const env = (cap: number) => ({
  AGENTLOOP_API_KEYS: `${KEYS.a}:tenant-a,${KEYS.b}:tenant-b`,
  ALLOW_SCRIPTED_MODEL: 'true',
  // A's 2,000 runs are admitted (the multi-tenant default is 1,000 pending or running).
  TENANT_MAX_ACTIVE_RUNS: '0',
  RUN_CONCURRENCY: String(RUN_CONCURRENCY),
  TENANT_MAX_CONCURRENT_RUNS: String(cap),
});
/**
 * The ADR's bound on A's runs that start between B's submission and B's start, with equal weights:
 * the jobs the workers had taken but not yet started when B was tagged (every worker slot), plus
 * one tie of tags (A's job tagged V), plus the jobs A parked at its cap that its ending runs wake meanwhile.
 */
const bound = (cap: number) => RUN_CONCURRENCY + 1 + cap;

const run = (who: string) => ({
  assistant_id: 'agent',
  input: { messages: [{ role: 'user', content: who }] },
  config: scripted([{ content: `done: ${who}` }]),
  on_completion: 'keep',
});

async function post(url: string, key: string, body: unknown): Promise<unknown> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** The run records as the tests read them (milliseconds since the epoch). */
interface Records {
  run(runId: string): Promise<{ created_at: number; started_at: number | null } | undefined>;
  /** Runs of the tenant that started at or before `t`, and after `after` when given. */
  startedBy(tenantId: string, t: number, after?: number): Promise<number>;
  close(): Promise<void>;
}

async function bWaitsBoundedBehindA(url: string, records: Records, cap: number): Promise<void> {
  const BOUND = bound(cap);
  // A's backlog: 20 batches of 100, four requests at a time.
  for (let i = 0; i < A_RUNS / BATCH; i += 4) {
    await Promise.all(
      Array.from({ length: 4 }, (_, j) =>
        post(
          `${url}/runs/batch`,
          KEYS.a,
          Array.from({ length: BATCH }, (_, k) => run(`a ${(i + j) * BATCH + k}`)),
        ),
      ),
    );
  }
  const b = (await post(`${url}/runs`, KEYS.b, run('b'))) as { run_id: string };
  const started = await poll(
    async () => {
      const r = await records.run(b.run_id);
      return r?.started_at != null ? { createdAt: r.created_at, startedAt: r.started_at } : undefined;
    },
    60_000,
    50,
  );
  const aDuringWait = await records.startedBy('tenant-a', started.startedAt, started.createdAt);
  const aBefore = await records.startedBy('tenant-a', started.startedAt);
  console.log(
    `fair scheduling: B's run started ${started.startedAt - started.createdAt} ms after its submission; ` +
      `${aDuringWait} of A's runs started meanwhile (bound ${BOUND}); ${aBefore} of A's ${A_RUNS} had started by then`,
  );
  expect(aDuringWait).toBeLessThanOrEqual(BOUND);
  // A's backlog was far from drained: B did not wait behind it.
  expect(aBefore).toBeLessThan(A_RUNS / 2);
  // And A's backlog keeps running (at a cap: its parked jobs are woken as its runs end).
  const more = await poll(async () => {
    const n = await records.startedBy('tenant-a', Date.now() + 60_000);
    return n >= aBefore + 20 ? n : undefined;
  }, 60_000);
  console.log(`fair scheduling: ${more} of A's runs started so far`);
}

function embedded(cap: number): void {
  const server = useEmbeddedServer('agentloop-fair-', env(cap));

  it(`starts B's one run after at most ${bound(cap)} of A's ${A_RUNS} queued runs`, async () => {
    const db = new Database(path.join(server.dataDir, 'agentloop.sqlite'), { readonly: true });
    const records: Records = {
      run: async (id) =>
        db.prepare('SELECT created_at, started_at FROM runs WHERE run_id = ?').get(id) as { created_at: number; started_at: number | null } | undefined,
      startedBy: async (tenant, t, after = 0) =>
        (
          db
            .prepare('SELECT count(*) AS n FROM runs WHERE tenant_id = ? AND started_at IS NOT NULL AND started_at <= ? AND started_at > ?')
            .get(tenant, t, after) as { n: number }
        ).n,
      close: async () => void db.close(),
    };
    try {
      await bWaitsBoundedBehindA(server.url, records, cap);
    } finally {
      await records.close();
    }
  }, 120_000);
}

describe('fair scheduling (embedded: SQLite queue; A may fill every worker slot)', () => embedded(0));
describe('fair scheduling (embedded: SQLite queue; A capped at 2 runs, its other jobs parked)', () => embedded(2));

describe('fair scheduling (cluster: BullMQ, MySQL; A may fill every worker slot)', () => {
  const cluster = useCluster({ env: env(0) });

  it(`starts B's one run after at most ${bound(0)} of A's ${A_RUNS} queued runs`, async () => {
    const c = cluster();
    const db = await createConnection(c.mysql.url);
    const records: Records = {
      run: async (id) => {
        const [rows] = await db.query<RowDataPacket[]>('SELECT created_at, started_at FROM runs WHERE run_id = ?', [id]);
        const r = rows[0];
        return r ? { created_at: Number(r.created_at), started_at: r.started_at === null ? null : Number(r.started_at) } : undefined;
      },
      startedBy: async (tenant, t, after = 0) => {
        const [rows] = await db.query<RowDataPacket[]>(
          'SELECT count(*) AS n FROM runs WHERE tenant_id = ? AND started_at IS NOT NULL AND started_at <= ? AND started_at > ?',
          [tenant, t, after],
        );
        return Number(rows[0]?.n ?? 0);
      },
      close: () => db.end(),
    };
    try {
      await bWaitsBoundedBehindA(c.url, records, 0);
    } finally {
      await records.close();
    }
  }, 180_000);
});
