/**
 * The memory store's items (issue 12), per tenant. Reads never see an expired item (every query
 * asks `expires_at` is null or in the future), so TTL holds at once; `sweep` deletes them later.
 * A namespace prefix is a range of the primary key (see migration 0013). Filters and text or
 * vector queries run in the layer over at most STORE_SEARCH_SCAN_LIMIT candidates, most recently
 * updated first: brute force, bounded, with no vector database.
 */
import type { ExpressionBuilder, Selectable } from 'kysely';
import { AgentLoopError, InvalidArgumentError } from '@agentloop/core';
import type { Database, StoreItemsTable } from '../schema.js';
import type { JsonObject, NamespaceListing, StoreItemHit, StoreItemRecord, StoreItemSearch, StoreItemWrite } from '../types.js';
import type { RepositoryContext } from './context.js';
import { checkId, millisToDate } from './rows.js';
import {
  checkItemKey,
  cosine,
  joinNamespace,
  namespaceMatches,
  NAMESPACE_SEPARATOR,
  splitNamespace,
  STORE_SEARCH_SCAN_LIMIT,
  valueMatches,
} from '../items/namespace.js';

/** Rows read per page while scanning. */
const SCAN_PAGE = 100;
const MINUTE_MS = 60_000;

type ItemRow = Omit<Selectable<StoreItemsTable>, 'embedding'> & { embedding?: string | null };

function toItem(row: ItemRow): StoreItemRecord {
  const value: unknown = JSON.parse(row.value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new AgentLoopError('INTERNAL', 'Stored item value is not a JSON object');
  return {
    tenantId: row.tenant_id,
    namespace: splitNamespace(row.namespace),
    key: row.item_key,
    value: value as JsonObject,
    createdAt: millisToDate(row.created_at),
    updatedAt: millisToDate(row.updated_at),
    expiresAt: row.expires_at === null ? null : millisToDate(row.expires_at),
    ttlMinutes: row.ttl_ms === null ? null : Number(row.ttl_ms) / MINUTE_MS,
  };
}

function ttlMs(minutes: number | null | undefined): number | null {
  if (minutes === null || minutes === undefined) return null;
  if (!Number.isFinite(minutes) || minutes <= 0) throw new InvalidArgumentError(`Invalid ttl ${minutes}: expected a positive number of minutes`);
  return Math.max(1, Math.round(minutes * MINUTE_MS));
}

const COLUMNS = ['tenant_id', 'namespace', 'item_key', 'value', 'search_text', 'created_at', 'updated_at', 'ttl_ms', 'expires_at'] as const;

export class StoreItemRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  /** Not expired at `now`. */
  private live(now: number) {
    return (eb: ExpressionBuilder<Database, 'store_items'>) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]);
  }

  /** The namespace itself or any below it: `ns = p` or `p. <= ns < p/` ("/" follows "."). */
  private under(prefix: string) {
    return (eb: ExpressionBuilder<Database, 'store_items'>) =>
      eb.or([
        eb('namespace', '=', prefix),
        eb.and([
          eb('namespace', '>=', prefix + NAMESPACE_SEPARATOR),
          eb('namespace', '<', prefix + String.fromCharCode(NAMESPACE_SEPARATOR.charCodeAt(0) + 1)),
        ]),
      ]);
  }

  async put(item: StoreItemWrite): Promise<void> {
    checkId('tenantId', item.tenantId);
    const namespace = joinNamespace(item.namespace);
    checkItemKey(item.key);
    const now = this.ctx.now();
    const ttl = ttlMs(item.ttlMinutes);
    const fields = {
      value: JSON.stringify(item.value),
      search_text: item.searchText,
      embedding: item.embedding ? JSON.stringify(item.embedding) : null,
      updated_at: now,
      ttl_ms: ttl,
      expires_at: ttl === null ? null : now + ttl,
    };
    // An expired item is gone: replacing it is a new item (a new created_at), not an update.
    await this.ctx.db
      .deleteFrom('store_items')
      .where('tenant_id', '=', item.tenantId)
      .where('namespace', '=', namespace)
      .where('item_key', '=', item.key)
      .where('expires_at', '<=', now)
      .execute();
    await this.ctx.db
      .insertInto('store_items')
      .values({ tenant_id: item.tenantId, namespace, item_key: item.key, created_at: now, ...fields })
      .$call((q) =>
        this.ctx.dialect === 'mysql'
          ? q.onDuplicateKeyUpdate(fields)
          : q.onConflict((oc) => oc.columns(['tenant_id', 'namespace', 'item_key']).doUpdateSet(fields)),
      )
      .execute();
  }

  async get(tenantId: string, namespace: string[], key: string, opts: { refreshTtl?: boolean } = {}): Promise<StoreItemRecord | undefined> {
    const ns = joinNamespace(namespace);
    checkItemKey(key);
    const now = this.ctx.now();
    const row = await this.ctx.db
      .selectFrom('store_items')
      .select(COLUMNS)
      .where('tenant_id', '=', tenantId)
      .where('namespace', '=', ns)
      .where('item_key', '=', key)
      .where(this.live(now))
      .executeTakeFirst();
    if (!row) return undefined;
    if (opts.refreshTtl) await this.refresh(now, [row]);
    return toItem(row);
  }

  async delete(tenantId: string, namespace: string[], key: string): Promise<boolean> {
    const ns = joinNamespace(namespace);
    checkItemKey(key);
    const res = await this.ctx.db
      .deleteFrom('store_items')
      .where('tenant_id', '=', tenantId)
      .where('namespace', '=', ns)
      .where('item_key', '=', key)
      .where(this.live(this.ctx.now()))
      .executeTakeFirst();
    return res.numDeletedRows > 0n;
  }

  async search(tenantId: string, s: StoreItemSearch): Promise<StoreItemHit[]> {
    const prefix = joinNamespace(s.namespacePrefix, 'namespace_prefix', true);
    const now = this.ctx.now();
    const limit = Math.max(0, Math.floor(s.limit));
    const offset = Math.max(0, Math.floor(s.offset));
    if (limit === 0) return [];
    const query = s.query?.trim() ? s.query : undefined;
    const vector = query !== undefined ? s.queryVector : undefined;
    const base = this.ctx.db
      .selectFrom('store_items')
      .select(COLUMNS)
      .$if(vector !== undefined, (q) => q.select('embedding'))
      .where('tenant_id', '=', tenantId)
      .$if(prefix !== '', (q) => q.where(this.under(prefix)))
      .where(this.live(now))
      .orderBy('updated_at', 'desc')
      .orderBy('namespace')
      .orderBy('item_key');
    const inLayer = query !== undefined || Object.keys(s.filter ?? {}).length > 0;
    let hits: Array<{ row: ItemRow; score: number | null }>;
    if (!inLayer) {
      hits = (await base.limit(limit).offset(offset).execute()).map((row) => ({ row, score: null }));
    } else {
      // A text query matches when every one of its words occurs in the indexed text, in any case.
      const terms = query
        ?.toLowerCase()
        .split(/\s+/)
        .filter((t) => t !== '');
      const matched: Array<{ row: ItemRow; score: number | null }> = [];
      for (let seen = 0; seen < STORE_SEARCH_SCAN_LIMIT; seen += SCAN_PAGE) {
        const rows: ItemRow[] = await base
          .limit(Math.min(SCAN_PAGE, STORE_SEARCH_SCAN_LIMIT - seen))
          .offset(seen)
          .execute();
        for (const row of rows) {
          if (!valueMatches(toItem(row).value, s.filter)) continue;
          if (query !== undefined && row.search_text === null) continue; // not indexed: never matched by a query
          if (vector) {
            const embedding = row.embedding ? (JSON.parse(row.embedding) as number[]) : null;
            matched.push({ row, score: embedding ? cosine(vector, embedding) : 0 });
          } else if (terms === undefined || terms.every((t) => (row.search_text ?? '').toLowerCase().includes(t))) {
            matched.push({ row, score: null });
          }
        }
        if (rows.length < SCAN_PAGE) break;
      }
      // Stable sort: equal scores keep the recency order.
      if (vector) matched.sort((a, b) => (b.score ?? 0) - (a.score ?? 0));
      hits = matched.slice(offset, offset + limit);
    }
    if (s.refreshTtl)
      await this.refresh(
        now,
        hits.map((h) => h.row),
      );
    return hits.map(({ row, score }) => ({ ...toItem(row), score }));
  }

  async listNamespaces(tenantId: string, opts: NamespaceListing): Promise<string[][]> {
    if (opts.prefix) joinNamespace(opts.prefix, 'prefix');
    if (opts.suffix) joinNamespace(opts.suffix, 'suffix');
    // The labels before the first wildcard narrow the scan to a key range.
    const fixed = opts.prefix ? opts.prefix.slice(0, opts.prefix.indexOf('*') === -1 ? undefined : opts.prefix.indexOf('*')) : [];
    const rows = await this.ctx.db
      .selectFrom('store_items')
      .select('namespace')
      .distinct()
      .where('tenant_id', '=', tenantId)
      .$if(fixed.length > 0, (q) => q.where(this.under(fixed.join(NAMESPACE_SEPARATOR))))
      .where(this.live(this.ctx.now()))
      .orderBy('namespace')
      .limit(STORE_SEARCH_SCAN_LIMIT)
      .execute();
    const out = new Map<string, string[]>();
    for (const { namespace } of rows) {
      const labels = splitNamespace(namespace);
      if (!namespaceMatches(labels, opts.prefix, opts.suffix)) continue;
      const cut = opts.maxDepth !== undefined ? labels.slice(0, opts.maxDepth) : labels;
      out.set(cut.join(NAMESPACE_SEPARATOR), cut);
    }
    const sorted = [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, labels]) => labels);
    return sorted.slice(Math.max(0, opts.offset), Math.max(0, opts.offset) + Math.max(0, opts.limit));
  }

  /** Deletes up to `limit` expired items, oldest expiry first, through the expires_at index. */
  async sweep(limit: number): Promise<number> {
    const now = this.ctx.now();
    const edge = await this.ctx.db
      .selectFrom('store_items')
      .select('expires_at')
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(1)
      .offset(Math.max(0, Math.floor(limit) - 1))
      .executeTakeFirst();
    const cutoff = edge?.expires_at === null || edge?.expires_at === undefined ? now : Math.min(now, Number(edge.expires_at));
    const res = await this.ctx.db.deleteFrom('store_items').where('expires_at', '<=', cutoff).executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** Restarts the TTL of items that have one. */
  private async refresh(now: number, rows: ItemRow[]): Promise<void> {
    for (const row of rows) {
      if (row.ttl_ms === null) continue;
      const expires = now + Number(row.ttl_ms);
      await this.ctx.db
        .updateTable('store_items')
        .set({ expires_at: expires })
        .where('tenant_id', '=', row.tenant_id)
        .where('namespace', '=', row.namespace)
        .where('item_key', '=', row.item_key)
        .execute();
      row.expires_at = expires;
    }
  }
}
