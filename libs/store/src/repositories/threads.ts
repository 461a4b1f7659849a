/**
 * Threads: creation, reads, metadata and deletion. Their status, values and holder
 * (`active_run_id`) are written only by `RunLifecycle`, never here.
 */
import { AgentLoopError } from '@agentloop/core';
import type { NewThread, ThreadCountFilter, ThreadPatch, ThreadRecord, ThreadSearch, ThreadStatus } from '../types.js';
import type { RepositoryContext } from './context.js';
import type { SqlWriter } from '../write-transaction.js';
import { checkId, isDuplicateKey, toThread } from './rows.js';
import { jsonKeyEquals } from './json-filter.js';
import { preparedQuery } from '../prepared-query.js';

/** A new thread (one per run in the bench's workload, as with `threads.create` then a run). Built once (prepared-query.ts). */
const insertThread = preparedQuery((db, p: { tenantId: string; threadId: string; now: number; metadata: string }) =>
  db.insertInto('threads').values({
    tenant_id: p.tenantId,
    thread_id: p.threadId,
    created_at: p.now,
    updated_at: p.now,
    status: 'idle',
    metadata: p.metadata,
    state_values: null,
  }),
);

/** A thread by its key: read before every admission on an existing thread. Built once. */
const selectThread = preparedQuery((db, p: { tenantId: string; threadId: string }) =>
  db.selectFrom('threads').selectAll().where('tenant_id', '=', p.tenantId).where('thread_id', '=', p.threadId),
);

export class ThreadRepository {
  constructor(
    private readonly ctx: RepositoryContext,
    private readonly writer: SqlWriter,
  ) {}

  async create(t: NewThread): Promise<ThreadRecord> {
    checkId('tenantId', t.tenantId);
    checkId('threadId', t.threadId);
    const now = this.ctx.now();
    const row = {
      tenant_id: t.tenantId,
      thread_id: t.threadId,
      created_at: now,
      updated_at: now,
      status: 'idle',
      metadata: JSON.stringify(t.metadata ?? {}),
      state_values: null,
    };
    try {
      await insertThread.execute(this.ctx.db, { tenantId: row.tenant_id, threadId: row.thread_id, now, metadata: row.metadata });
      // Inserted: the thread is what was written, no need to read it back (a statement less per
      // new thread, issue 9). A run admitted on it meanwhile changes it after its creation.
      return toThread({ ...row, active_run_id: null });
    } catch (err) {
      // Plain INSERT, duplicate caught (not INSERT IGNORE, which would also hide truncation on MySQL).
      if (!isDuplicateKey(err)) throw err;
    }
    const thread = await this.get(t.tenantId, t.threadId);
    if (!thread) throw new AgentLoopError('INTERNAL', `Thread ${t.threadId} vanished right after it was created`);
    return thread;
  }

  async get(tenantId: string, threadId: string): Promise<ThreadRecord | undefined> {
    const row = await selectThread.first(this.ctx.db, { tenantId, threadId });
    return row && toThread(row);
  }

  async update(tenantId: string, threadId: string, patch: ThreadPatch): Promise<void> {
    await this.ctx.db
      .updateTable('threads')
      .set({
        updated_at: this.ctx.now(),
        ...(patch.metadata !== undefined ? { metadata: JSON.stringify(patch.metadata) } : {}),
      })
      .where('tenant_id', '=', tenantId)
      .where('thread_id', '=', threadId)
      .execute();
  }

  /**
   * The thread with everything hanging off it (ledger, uploads, runs), in one transaction — a
   * write transaction, so on SQLite it holds the lock from its first statement (a deferred BEGIN
   * would meet another connection's lock midway, where it cannot be waited for: sqlite-busy-wait.ts).
   */
  async delete(tenantId: string, threadId: string): Promise<boolean> {
    return this.writer.writeTransaction(async (trx) => {
      await trx.deleteFrom('tool_effects').where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).execute();
      await trx.deleteFrom('thread_uploads').where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).execute();
      await trx.deleteFrom('runs').where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).execute();
      const res = await trx.deleteFrom('threads').where('tenant_id', '=', tenantId).where('thread_id', '=', threadId).executeTakeFirst();
      return res.numDeletedRows > 0n;
    });
  }

  /**
   * The tenant's threads matching the filters (metadata and values: top-level key equality, in
   * SQL like `count`), in the order asked (default newest first; thread id breaks ties), paged.
   */
  async search(tenantId: string, opts: ThreadSearch): Promise<ThreadRecord[]> {
    const limit = Math.max(0, Math.floor(opts.limit));
    const offset = Math.max(0, Math.floor(opts.offset));
    if (limit === 0 || (opts.ids !== undefined && opts.ids.length === 0)) return [];
    const order = opts.sortOrder ?? 'desc';
    const rows = await this.filtered(tenantId, opts)
      .selectAll()
      .$if(opts.ids !== undefined, (q) => q.where('thread_id', 'in', [...(opts.ids ?? [])]))
      .orderBy(opts.sortBy ?? 'created_at', order)
      .orderBy('thread_id', order)
      .limit(limit)
      .offset(offset)
      .execute();
    return rows.map(toThread);
  }

  /** Threads of the tenant matching the filters, counted in SQL (metadata and values: top-level key equality). */
  async count(tenantId: string, filter: ThreadCountFilter): Promise<number> {
    const row = await this.filtered(tenantId, filter)
      .select((eb) => eb.fn.countAll<number | bigint | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Threads in `status`, counted per tenant (operations; counts only, no tenant's records leave). */
  async countByTenant(status: ThreadStatus): Promise<Array<{ tenantId: string; count: number }>> {
    const rows = await this.ctx.db
      .selectFrom('threads')
      .where('status', '=', status)
      .groupBy('tenant_id')
      .select((eb) => ['tenant_id', eb.fn.countAll<number | bigint | string>().as('n')])
      .execute();
    return rows.map((r) => ({ tenantId: r.tenant_id, count: Number(r.n) }));
  }

  /** The tenant's threads with the filters of `count` and `search` as WHERE clauses. */
  private filtered(tenantId: string, filter: ThreadCountFilter) {
    const { dialect } = this.ctx;
    return this.ctx.db
      .selectFrom('threads')
      .where('tenant_id', '=', tenantId)
      .$if(filter.status !== undefined, (q) => q.where('status', '=', filter.status as ThreadStatus))
      .$call((q) => Object.entries(filter.metadata ?? {}).reduce((acc, [k, v]) => acc.where(jsonKeyEquals(dialect, 'metadata', k, v)), q))
      .$call((q) => Object.entries(filter.values ?? {}).reduce((acc, [k, v]) => acc.where(jsonKeyEquals(dialect, 'state_values', k, v)), q));
  }
}
