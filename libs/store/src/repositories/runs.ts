/**
 * Reads of runs. Every write of a run (admission, status, deferral, dead letter) belongs to
 * `RunLifecycle`, the one owner of run and thread status (issue 10): there is no write here on purpose.
 */
import type { JsonObject, RunRecord, RunStatusName } from '../types.js';
import type { RepositoryContext } from './context.js';
import { parseObject, RUN_RECORD_COLUMNS, toRun } from './rows.js';
import { preparedQuery } from '../prepared-query.js';

/** A run by its key (its record's columns): read by the API and at a run's end. Built once (prepared-query.ts). */
export const selectRun = preparedQuery((db, p: { tenantId: string; runId: string }) =>
  db.selectFrom('runs').select(RUN_RECORD_COLUMNS).where('tenant_id', '=', p.tenantId).where('run_id', '=', p.runId),
);
const RUN_RECORD_COLUMNS_OF_RUNS = RUN_RECORD_COLUMNS.map((c) => `runs.${c}` as const);

/** The run and its thread's values: `runs.wait` reads it before and after the wait. Built once. */
const selectRunWithThreadValues = preparedQuery((db, p: { tenantId: string; runId: string }) =>
  db
    .selectFrom('runs')
    .leftJoin('threads', (j) => j.onRef('threads.tenant_id', '=', 'runs.tenant_id').onRef('threads.thread_id', '=', 'runs.thread_id'))
    .select(RUN_RECORD_COLUMNS_OF_RUNS)
    .select('threads.state_values as thread_values')
    .where('runs.tenant_id', '=', p.tenantId)
    .where('runs.run_id', '=', p.runId),
);

export class RunRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  async get(tenantId: string, runId: string): Promise<RunRecord | undefined> {
    const row = await selectRun.first(this.ctx.db, { tenantId, runId });
    return row && toRun(row);
  }

  /** See `Store.getRunWithThreadValues`: one statement, the thread joined on the run's key. */
  async getWithThreadValues(tenantId: string, runId: string): Promise<{ run: RunRecord; threadValues: JsonObject | null } | undefined> {
    const row = await selectRunWithThreadValues.first(this.ctx.db, { tenantId, runId });
    if (!row) return undefined;
    const { thread_values, ...run } = row;
    return { run: toRun(run), threadValues: thread_values === null ? null : parseObject(thread_values, 'thread values') };
  }

  /** Newest first (ties in the same millisecond: last inserted first). */
  async list(tenantId: string, threadId: string, opts: { limit?: number; offset?: number; status?: RunStatusName } = {}): Promise<RunRecord[]> {
    const rows = await this.ctx.db
      .selectFrom('runs')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .$if(opts.status !== undefined, (q) => q.where('status', '=', opts.status as RunStatusName))
      .orderBy('created_at', 'desc')
      .orderBy('seq', 'desc')
      .limit(Math.max(0, Math.floor(opts.limit ?? 10)))
      .offset(Math.max(0, Math.floor(opts.offset ?? 0)))
      .execute();
    return rows.map(toRun);
  }

  /** Every tenant's runs in `status` unchanged since `updatedBefore`, oldest first (the sweeper). */
  async listInStatus(status: RunStatusName, updatedBefore: Date, limit: number): Promise<RunRecord[]> {
    const rows = await this.ctx.db
      .selectFrom('runs')
      .selectAll()
      .where('status', '=', status)
      .where('updated_at', '<', updatedBefore.getTime())
      .orderBy('updated_at')
      .limit(Math.max(1, Math.floor(limit)))
      .execute();
    return rows.map(toRun);
  }

  /** The tenant's pending and running runs (admission quotas). */
  async countActive(tenantId: string): Promise<number> {
    const row = await this.ctx.db
      .selectFrom('runs')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', ['pending', 'running'])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /**
   * The tenant's runs in any of `statuses` across its threads, oldest first (`POST /runs/cancel`
   * with a status). At most `limit`.
   */
  async listOfTenantInStatus(tenantId: string, statuses: RunStatusName[], limit: number): Promise<RunRecord[]> {
    if (statuses.length === 0) return [];
    const rows = await this.ctx.db
      .selectFrom('runs')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('status', 'in', statuses)
      .orderBy('created_at')
      .orderBy('seq')
      .limit(Math.max(1, Math.floor(limit)))
      .execute();
    return rows.map(toRun);
  }
}
