/**
 * Assistants (issue 11): LangGraph Platform's versioned agent configurations, per tenant. The
 * `assistants` row holds the version in use; `assistant_versions` one immutable row per version.
 * Name and metadata filters run in the layer (the same case-insensitive match and JSON equality on
 * SQLite and MySQL), scanning the tenant's assistants page by page so offset and limit count matches.
 */
import type { Selectable } from 'kysely';
import { AgentLoopError, NotFoundError } from '@agentloop/core';
import type { AssistantsTable, AssistantVersionsTable } from '../schema.js';
import type { AssistantFilter, AssistantPatch, AssistantRecord, AssistantSearch, AssistantVersionRecord, JsonObject, NewAssistant } from '../types.js';
import type { RepositoryContext } from './context.js';
import type { SqlWriter } from '../write-transaction.js';
import { checkId, isDuplicateKey, jsonEqual, millisToDate } from './rows.js';

/** Page size when a filter runs in the layer. */
const SCAN_PAGE = 200;

function parseObject(text: string): JsonObject {
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AgentLoopError('INTERNAL', 'Stored assistant field is not a JSON object');
  return value as JsonObject;
}

function fieldsOf(row: Selectable<AssistantsTable> | Selectable<AssistantVersionsTable>) {
  return {
    tenantId: row.tenant_id,
    assistantId: row.assistant_id,
    graphId: row.graph_id,
    name: row.name,
    description: row.description,
    config: parseObject(row.config),
    context: parseObject(row.context),
    metadata: parseObject(row.metadata),
    version: Number(row.version),
    createdAt: millisToDate(row.created_at),
  };
}

const toAssistant = (row: Selectable<AssistantsTable>): AssistantRecord => ({ ...fieldsOf(row), updatedAt: millisToDate(row.updated_at) });
const toVersion = (row: Selectable<AssistantVersionsTable>): AssistantVersionRecord => fieldsOf(row);

function metadataMatches(metadata: JsonObject, wanted: JsonObject | undefined): boolean {
  return Object.entries(wanted ?? {}).every(([k, v]) => jsonEqual(metadata[k], v));
}

function matches(a: AssistantRecord, f: AssistantFilter): boolean {
  return (f.name === undefined || a.name.toLowerCase().includes(f.name.toLowerCase())) && metadataMatches(a.metadata, f.metadata);
}

export class AssistantRepository {
  constructor(
    private readonly ctx: RepositoryContext,
    /** Version writes take the store's write transaction: SQLite's write lock up front, MySQL deadlocks retried. */
    private readonly writer: SqlWriter,
  ) {}

  async create(a: NewAssistant): Promise<{ assistant: AssistantRecord; created: boolean }> {
    checkId('tenantId', a.tenantId);
    checkId('assistantId', a.assistantId);
    checkId('graphId', a.graphId);
    const now = this.ctx.now();
    const fields = {
      tenant_id: a.tenantId,
      assistant_id: a.assistantId,
      graph_id: a.graphId,
      name: a.name,
      description: a.description ?? null,
      config: JSON.stringify(a.config ?? {}),
      context: JSON.stringify(a.context ?? {}),
      metadata: JSON.stringify(a.metadata ?? {}),
      version: 1,
      created_at: now,
    };
    let created = true;
    try {
      await this.writer.writeTransaction(async (trx) => {
        await trx
          .insertInto('assistants')
          .values({ ...fields, updated_at: now })
          .execute();
        await trx.insertInto('assistant_versions').values(fields).execute();
      });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      created = false;
    }
    const assistant = await this.get(a.tenantId, a.assistantId);
    if (!assistant) throw new AgentLoopError('INTERNAL', `Assistant ${a.assistantId} vanished right after it was created`);
    return { assistant, created };
  }

  async get(tenantId: string, assistantId: string): Promise<AssistantRecord | undefined> {
    const row = await this.ctx.db
      .selectFrom('assistants')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('assistant_id', '=', assistantId)
      .executeTakeFirst();
    return row && toAssistant(row);
  }

  async update(tenantId: string, assistantId: string, patch: AssistantPatch): Promise<AssistantRecord | undefined> {
    const now = this.ctx.now();
    try {
      const found = await this.writer.writeTransaction(async (trx) => {
        // MySQL: the row lock orders concurrent updates of one assistant (SQLite serialises writers anyway).
        const current = await trx
          .selectFrom('assistants')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('assistant_id', '=', assistantId)
          .$if(this.ctx.dialect === 'mysql', (q) => q.forUpdate())
          .executeTakeFirst();
        if (!current) return false;
        const top = await trx
          .selectFrom('assistant_versions')
          .select((eb) => eb.fn.max('version').as('v'))
          .where('tenant_id', '=', tenantId)
          .where('assistant_id', '=', assistantId)
          .executeTakeFirst();
        const base = toAssistant(current);
        const version = Number(top?.v ?? base.version) + 1;
        const fields = {
          graph_id: patch.graphId ?? base.graphId,
          name: patch.name ?? base.name,
          description: patch.description !== undefined ? patch.description : base.description,
          config: JSON.stringify(patch.config ?? base.config),
          context: JSON.stringify(patch.context ?? base.context),
          // LangGraph merges metadata into the previous version's; the other fields are replaced when given.
          metadata: JSON.stringify({ ...base.metadata, ...(patch.metadata ?? {}) }),
          version,
        };
        await trx
          .insertInto('assistant_versions')
          .values({ ...fields, tenant_id: tenantId, assistant_id: assistantId, created_at: now })
          .execute();
        await trx
          .updateTable('assistants')
          .set({ ...fields, updated_at: now })
          .where('tenant_id', '=', tenantId)
          .where('assistant_id', '=', assistantId)
          .execute();
        return true;
      });
      return found ? this.get(tenantId, assistantId) : undefined;
    } catch (err) {
      if (isDuplicateKey(err)) throw new AgentLoopError('CONFLICT', `Assistant ${assistantId} was updated concurrently; retry the update`, { cause: err });
      throw err;
    }
  }

  async delete(tenantId: string, assistantId: string): Promise<boolean> {
    return this.writer.writeTransaction(async (trx) => {
      await trx.deleteFrom('assistant_versions').where('tenant_id', '=', tenantId).where('assistant_id', '=', assistantId).execute();
      const res = await trx.deleteFrom('assistants').where('tenant_id', '=', tenantId).where('assistant_id', '=', assistantId).executeTakeFirst();
      return res.numDeletedRows > 0n;
    });
  }

  async search(tenantId: string, opts: AssistantSearch): Promise<AssistantRecord[]> {
    const sortBy = opts.sortBy ?? 'created_at';
    const order = opts.sortOrder ?? 'desc';
    const base = this.filtered(tenantId, opts)
      .orderBy(sortBy, order)
      .$if(sortBy !== 'assistant_id', (q) => q.orderBy('assistant_id', 'asc'));
    const limit = Math.max(0, Math.floor(opts.limit));
    const offset = Math.max(0, Math.floor(opts.offset));
    if (limit === 0) return [];
    if (!inLayer(opts)) return (await base.limit(limit).offset(offset).execute()).map(toAssistant);
    const out: AssistantRecord[] = [];
    let toSkip = offset;
    for (let page = 0; ; page++) {
      const rows = await base
        .limit(SCAN_PAGE)
        .offset(page * SCAN_PAGE)
        .execute();
      for (const row of rows) {
        const a = toAssistant(row);
        if (!matches(a, opts)) continue;
        if (toSkip > 0) {
          toSkip--;
          continue;
        }
        out.push(a);
        if (out.length === limit) return out;
      }
      if (rows.length < SCAN_PAGE) return out;
    }
  }

  async count(tenantId: string, filter: AssistantFilter): Promise<number> {
    if (!inLayer(filter)) {
      const row = await this.filtered(tenantId, filter)
        .clearSelect()
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    }
    let n = 0;
    const base = this.filtered(tenantId, filter).orderBy('assistant_id');
    for (let page = 0; ; page++) {
      const rows = await base
        .limit(SCAN_PAGE)
        .offset(page * SCAN_PAGE)
        .execute();
      n += rows.filter((r) => matches(toAssistant(r), filter)).length;
      if (rows.length < SCAN_PAGE) return n;
    }
  }

  async listVersions(tenantId: string, assistantId: string, opts: { limit: number; offset: number; metadata?: JsonObject }): Promise<AssistantVersionRecord[]> {
    const base = this.ctx.db
      .selectFrom('assistant_versions')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('assistant_id', '=', assistantId)
      .orderBy('version', 'desc');
    const limit = Math.max(0, Math.floor(opts.limit));
    const offset = Math.max(0, Math.floor(opts.offset));
    if (limit === 0) return [];
    if (Object.keys(opts.metadata ?? {}).length === 0) return (await base.limit(limit).offset(offset).execute()).map(toVersion);
    // An assistant has few versions: filter them all in the layer.
    const all = (await base.execute()).map(toVersion).filter((v) => metadataMatches(v.metadata, opts.metadata));
    return all.slice(offset, offset + limit);
  }

  async setLatest(tenantId: string, assistantId: string, version: number): Promise<AssistantRecord | undefined> {
    const found = await this.writer.writeTransaction(async (trx) => {
      const current = await trx
        .selectFrom('assistants')
        .select('version')
        .where('tenant_id', '=', tenantId)
        .where('assistant_id', '=', assistantId)
        .$if(this.ctx.dialect === 'mysql', (q) => q.forUpdate())
        .executeTakeFirst();
      if (!current) return false;
      const v = await trx
        .selectFrom('assistant_versions')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('assistant_id', '=', assistantId)
        .where('version', '=', version)
        .executeTakeFirst();
      if (!v) throw new NotFoundError(`Assistant ${assistantId} has no version ${version}`);
      await trx
        .updateTable('assistants')
        .set({
          graph_id: v.graph_id,
          name: v.name,
          description: v.description,
          config: v.config,
          context: v.context,
          metadata: v.metadata,
          version: v.version,
          updated_at: this.ctx.now(),
        })
        .where('tenant_id', '=', tenantId)
        .where('assistant_id', '=', assistantId)
        .execute();
      return true;
    });
    return found ? this.get(tenantId, assistantId) : undefined;
  }

  /** The tenant's assistants with the filters SQL applies (graph id); name and metadata are matched in the layer. */
  private filtered(tenantId: string, f: AssistantFilter) {
    return this.ctx.db
      .selectFrom('assistants')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .$if(f.graphId !== undefined, (q) => q.where('graph_id', '=', f.graphId as string));
  }
}

const inLayer = (f: AssistantFilter): boolean => f.name !== undefined || Object.keys(f.metadata ?? {}).length > 0;
