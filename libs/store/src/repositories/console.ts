/**
 * Reads of the ops console (issue 16): runs and interrupted threads of one tenant or of every
 * tenant (an admin key), and the runs changed since a point in time (the console's live feed).
 * Reads only; every write of a run or thread status belongs to `RunLifecycle`.
 */
import type { RunRecord, RunStatusName, ThreadRecord } from '../types.js';
import type { RepositoryContext } from './context.js';
import { toRun, toThread } from './rows.js';

/** Which runs the console lists: one tenant's (`tenantId`) or every tenant's (undefined). */
export interface ConsoleRunFilter {
  tenantId?: string;
  status?: RunStatusName;
  limit: number;
  offset: number;
}

export class ConsoleRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  /** Runs across threads, newest first (ties in the same millisecond: last inserted first). */
  async listRuns(f: ConsoleRunFilter): Promise<RunRecord[]> {
    const rows = await this.ctx.db
      .selectFrom('runs')
      .selectAll()
      .$if(f.tenantId !== undefined, (q) => q.where('tenant_id', '=', f.tenantId as string))
      .$if(f.status !== undefined, (q) => q.where('status', '=', f.status as RunStatusName))
      .orderBy('created_at', 'desc')
      .orderBy('seq', 'desc')
      .limit(Math.max(1, Math.floor(f.limit)))
      .offset(Math.max(0, Math.floor(f.offset)))
      .execute();
    return rows.map(toRun);
  }

  /** Threads waiting for a human (status interrupted), most recently stopped first. */
  async listInterruptedThreads(tenantId: string | undefined, limit: number): Promise<ThreadRecord[]> {
    const rows = await this.ctx.db
      .selectFrom('threads')
      .selectAll()
      .where('status', '=', 'interrupted')
      .$if(tenantId !== undefined, (q) => q.where('tenant_id', '=', tenantId as string))
      .orderBy('updated_at', 'desc')
      .limit(Math.max(1, Math.floor(limit)))
      .execute();
    return rows.map(toThread);
  }

  /** Runs of every tenant whose record changed at or after `since` (epoch ms), oldest change first. */
  async listRunsChangedSince(since: number, limit: number): Promise<RunRecord[]> {
    const rows = await this.ctx.db
      .selectFrom('runs')
      .selectAll()
      .where('updated_at', '>=', since)
      .orderBy('updated_at')
      .limit(Math.max(1, Math.floor(limit)))
      .execute();
    return rows.map(toRun);
  }

  /** A run by id whatever its tenant (an admin's timeline); undefined when there is none. */
  async findRun(runId: string): Promise<RunRecord | undefined> {
    const row = await this.ctx.db.selectFrom('runs').selectAll().where('run_id', '=', runId).executeTakeFirst();
    return row && toRun(row);
  }
}
