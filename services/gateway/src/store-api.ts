/**
 * The store's operations (issue 12), transport-neutral: each parses its request with the zod
 * schema of LangGraph Platform's `/store` body (422 naming `body.<field>`) and returns plain
 * objects. HTTP (routes/store.ts) and gRPC (grpc/handlers/store.ts) both call these, so the two
 * APIs validate and behave alike. Every call is scoped to its tenant: another tenant's item is
 * simply absent, as LangGraph answers for a missing item.
 */
import { z } from 'zod';
import { MAX_ITEM_KEY_LENGTH, MAX_NAMESPACE_LENGTH, type StoreItemHit, type StoreItemRecord, type StoreItems } from '@agentloop/store';
import { JsonObjectSchema, parseRequest } from './validation.js';

/**
 * Largest item value, serialized: a memory is a small document, not a file (uploads are files).
 * It also bounds what a search holds in memory while it scans a page of candidates.
 */
export const STORE_VALUE_MAX_BYTES = 256 * 1024;
/** Longest TTL: one year, in minutes. */
const TTL_MAX_MINUTES = 365 * 24 * 60;
const QUERY_MAX = 4096;

const Label = z
  .string()
  .min(1, 'a namespace label is a non-empty string')
  .refine((l) => !l.includes('.'), 'a namespace label may not contain "."');
const Labels = z
  .array(Label)
  .max(64)
  .refine((ns) => ns.join('.').length <= MAX_NAMESPACE_LENGTH, `at most ${MAX_NAMESPACE_LENGTH} characters once joined with "."`);
const Namespace = Labels.refine((ns) => ns.length > 0, 'expected at least one label');
const Key = z.string().min(1).max(MAX_ITEM_KEY_LENGTH);

const PutBody = z.object({
  namespace: Namespace,
  key: Key,
  value: JsonObjectSchema.refine((v) => Buffer.byteLength(JSON.stringify(v)) <= STORE_VALUE_MAX_BYTES, `at most ${STORE_VALUE_MAX_BYTES} bytes as JSON`),
  index: z
    .union([z.literal(false), z.array(z.string().min(1).max(256)).max(100)])
    .nullish()
    .transform((v) => v ?? undefined),
  ttl: z.number().positive().max(TTL_MAX_MINUTES).nullish(),
});

const ItemBody = z.object({ namespace: Namespace, key: Key });

const Bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')]);

/** GET /store/items' query: the namespace as its labels joined with ".". */
const GetQuery = z.object({
  namespace: z
    .string()
    .min(1, 'expected the namespace labels joined with "."')
    .pipe(
      z
        .string()
        .transform((s) => s.split('.'))
        .pipe(Namespace),
    ),
  key: Key,
  refresh_ttl: Bool.nullish(),
});

/** The same request with the namespace as a list of labels (gRPC, where no query string squeezes it). */
const GetBody = ItemBody.extend({ refresh_ttl: z.boolean().nullish() });

const SearchBody = z.object({
  namespace_prefix: Labels.nullish(),
  filter: JsonObjectSchema.nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).max(1_000_000).nullish(),
  query: z.string().max(QUERY_MAX).nullish(),
  refresh_ttl: z.boolean().nullish(),
});

/** Namespace patterns: labels or "*" (any one label). */
const NamespacesBody = z.object({
  prefix: Labels.nullish(),
  suffix: Labels.nullish(),
  max_depth: z.number().int().min(1).max(64).nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).max(1_000_000).nullish(),
});

export interface ApiStoreItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export type ApiStoreHit = ApiStoreItem & { score?: number | null | undefined };

export function toApiItem(item: StoreItemRecord): ApiStoreItem {
  return { namespace: item.namespace, key: item.key, value: item.value, created_at: item.createdAt.toISOString(), updated_at: item.updatedAt.toISOString() };
}

const toApiHit = (hit: StoreItemHit): ApiStoreHit => ({ ...toApiItem(hit), score: hit.score });

export class StoreApi {
  constructor(private readonly items: StoreItems) {}

  /** PUT /store/items: creates or replaces the item. */
  async putItem(tenantId: string, body: unknown): Promise<void> {
    const b = parseRequest(PutBody, body, 'body');
    await this.items.put(tenantId, b.namespace, b.key, b.value, { ...(b.index !== undefined ? { index: b.index } : {}), ttl: b.ttl ?? null });
  }

  /** GET /store/items (the namespace dotted in a query string): the item, or null. */
  getItemByQuery(tenantId: string, query: unknown): Promise<ApiStoreItem | null> {
    const q = parseRequest(GetQuery, query, 'query');
    return this.fetch(tenantId, q.namespace, q.key, q.refresh_ttl ?? false);
  }

  /** The same with the namespace as a list of labels: the item, or null. */
  getItem(tenantId: string, body: unknown): Promise<ApiStoreItem | null> {
    const b = parseRequest(GetBody, body, 'body');
    return this.fetch(tenantId, b.namespace, b.key, b.refresh_ttl ?? false);
  }

  /** DELETE /store/items: done also when there was no such item. */
  async deleteItem(tenantId: string, body: unknown): Promise<void> {
    const b = parseRequest(ItemBody, body, 'body');
    await this.items.delete(tenantId, b.namespace, b.key);
  }

  /** POST /store/items/search. */
  async searchItems(tenantId: string, body: unknown): Promise<{ items: ApiStoreHit[] }> {
    const b = parseRequest(SearchBody, body, 'body');
    const hits = await this.items.search(tenantId, b.namespace_prefix ?? [], {
      limit: b.limit ?? 10,
      offset: b.offset ?? 0,
      ...(b.filter ? { filter: b.filter } : {}),
      ...(b.query ? { query: b.query } : {}),
      ...(b.refresh_ttl ? { refreshTtl: true } : {}),
    });
    return { items: hits.map(toApiHit) };
  }

  /** POST /store/namespaces. */
  async listNamespaces(tenantId: string, body: unknown): Promise<{ namespaces: string[][] }> {
    const b = parseRequest(NamespacesBody, body, 'body');
    const namespaces = await this.items.listNamespaces(tenantId, {
      limit: b.limit ?? 100,
      offset: b.offset ?? 0,
      ...(b.prefix ? { prefix: b.prefix } : {}),
      ...(b.suffix ? { suffix: b.suffix } : {}),
      ...(b.max_depth ? { maxDepth: b.max_depth } : {}),
    });
    return { namespaces };
  }

  private async fetch(tenantId: string, namespace: string[], key: string, refreshTtl: boolean): Promise<ApiStoreItem | null> {
    const item = await this.items.get(tenantId, namespace, key, { refreshTtl });
    return item ? toApiItem(item) : null;
  }
}
