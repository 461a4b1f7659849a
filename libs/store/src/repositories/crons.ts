/**
 * Crons (issue 12): LangGraph Platform's scheduled runs, per tenant. The store keeps what the API
 * shows and what a firing needs; the ticks are the scheduler's (libs/queue). Metadata filters run
 * in the layer (the same JSON equality on SQLite and MySQL) over the tenant's crons that match the
 * SQL filters: a tenant has few crons, unlike runs or threads.
 */
import type { Selectable } from 'kysely';
import { AgentLoopError } from '@agentloop/core';
import type { CronsTable } from '../schema.js';
import type { CronFilter, CronPatch, CronRecord, CronSearch, JsonObject, NewCron } from '../types.js';
import type { RepositoryContext } from './context.js';
import { checkId, isDuplicateKey, jsonEqual, millisToDate } from './rows.js';

function parseObject(text: string): JsonObject {
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AgentLoopError('INTERNAL', 'Stored cron field is not a JSON object');
  return value as JsonObject;
}

function toCron(row: Selectable<CronsTable>): CronRecord {
  return {
    tenantId: row.tenant_id,
    cronId: row.cron_id,
    assistantId: row.assistant_id,
    threadId: row.thread_id ?? undefined,
    schedule: row.schedule,
    timezone: row.timezone ?? undefined,
    endTime: row.end_time === null ? undefined : millisToDate(row.end_time),
    payload: parseObject(row.payload),
    metadata: parseObject(row.metadata),
    enabled: Number(row.enabled) === 1,
    onRunCompleted: row.on_run_completed === 'delete' || row.on_run_completed === 'keep' ? row.on_run_completed : undefined,
    userId: row.user_id ?? undefined,
    createdAt: millisToDate(row.created_at),
    updatedAt: millisToDate(row.updated_at),
  };
}

const metadataMatches = (c: CronRecord, wanted: JsonObject | undefined): boolean => Object.entries(wanted ?? {}).every(([k, v]) => jsonEqual(c.metadata[k], v));
const hasMetadataFilter = (f: CronFilter): boolean => Object.keys(f.metadata ?? {}).length > 0;

export class CronRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  async create(c: NewCron): Promise<CronRecord> {
    checkId('tenantId', c.tenantId);
    checkId('cronId', c.cronId);
    checkId('assistantId', c.assistantId);
    if (c.threadId !== undefined) checkId('threadId', c.threadId);
    const now = this.ctx.now();
    try {
      await this.ctx.db
        .insertInto('crons')
        .values({
          tenant_id: c.tenantId,
          cron_id: c.cronId,
          assistant_id: c.assistantId,
          thread_id: c.threadId ?? null,
          schedule: c.schedule,
          timezone: c.timezone ?? null,
          end_time: c.endTime?.getTime() ?? null,
          payload: JSON.stringify(c.payload),
          metadata: JSON.stringify(c.metadata),
          enabled: c.enabled ? 1 : 0,
          on_run_completed: c.onRunCompleted ?? null,
          user_id: c.userId ?? null,
          created_at: now,
          updated_at: now,
        })
        .execute();
    } catch (err) {
      if (isDuplicateKey(err)) throw new AgentLoopError('CONFLICT', `Cron ${c.cronId} already exists`, { cause: err });
      throw err;
    }
    const created = await this.get(c.tenantId, c.cronId);
    if (!created) throw new AgentLoopError('INTERNAL', `Cron ${c.cronId} vanished right after it was created`);
    return created;
  }

  async get(tenantId: string, cronId: string): Promise<CronRecord | undefined> {
    const row = await this.ctx.db.selectFrom('crons').selectAll().where('tenant_id', '=', tenantId).where('cron_id', '=', cronId).executeTakeFirst();
    return row && toCron(row);
  }

  async update(tenantId: string, cronId: string, patch: CronPatch): Promise<CronRecord | undefined> {
    const set: Partial<CronsTable> = { updated_at: this.ctx.now() };
    if (patch.schedule !== undefined) set.schedule = patch.schedule;
    if (patch.timezone !== undefined) set.timezone = patch.timezone;
    if (patch.endTime !== undefined) set.end_time = patch.endTime?.getTime() ?? null;
    if (patch.payload !== undefined) set.payload = JSON.stringify(patch.payload);
    if (patch.metadata !== undefined) set.metadata = JSON.stringify(patch.metadata);
    if (patch.enabled !== undefined) set.enabled = patch.enabled ? 1 : 0;
    if (patch.onRunCompleted !== undefined) set.on_run_completed = patch.onRunCompleted;
    const res = await this.ctx.db.updateTable('crons').set(set).where('tenant_id', '=', tenantId).where('cron_id', '=', cronId).executeTakeFirst();
    // MySQL counts matched rows only when they change; read back instead of trusting the count.
    return res.numUpdatedRows > 0n || this.ctx.dialect === 'mysql' ? this.get(tenantId, cronId) : undefined;
  }

  async delete(tenantId: string, cronId: string): Promise<boolean> {
    const res = await this.ctx.db.deleteFrom('crons').where('tenant_id', '=', tenantId).where('cron_id', '=', cronId).executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  async search(tenantId: string, opts: CronSearch): Promise<CronRecord[]> {
    const limit = Math.max(0, Math.floor(opts.limit));
    const offset = Math.max(0, Math.floor(opts.offset));
    if (limit === 0) return [];
    // next_run_date is the scheduler's, not stored: it sorts like created_at (the tick order of equal schedules).
    const sortBy = !opts.sortBy || opts.sortBy === 'next_run_date' ? 'created_at' : opts.sortBy;
    const base = this.filtered(tenantId, opts)
      .orderBy(sortBy, opts.sortOrder ?? 'desc')
      .$if(sortBy !== 'cron_id', (q) => q.orderBy('cron_id', 'asc'));
    if (!hasMetadataFilter(opts)) return (await base.limit(limit).offset(offset).execute()).map(toCron);
    const all = (await base.execute()).map(toCron).filter((c) => metadataMatches(c, opts.metadata));
    return all.slice(offset, offset + limit);
  }

  async count(tenantId: string, filter: CronFilter): Promise<number> {
    if (hasMetadataFilter(filter))
      return (await this.filtered(tenantId, filter).execute()).map(toCron).filter((c) => metadataMatches(c, filter.metadata)).length;
    const row = await this.filtered(tenantId, filter)
      .clearSelect()
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  private filtered(tenantId: string, f: CronFilter) {
    return this.ctx.db
      .selectFrom('crons')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .$if(f.assistantId !== undefined, (q) => q.where('assistant_id', '=', f.assistantId as string))
      .$if(f.threadId !== undefined, (q) => q.where('thread_id', '=', f.threadId as string))
      .$if(f.enabled !== undefined, (q) => q.where('enabled', '=', f.enabled ? 1 : 0));
  }
}
