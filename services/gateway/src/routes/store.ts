/**
 * LangGraph Platform's store (issue 12): long-term memory items under namespaces, per tenant.
 * `PUT/GET/DELETE /store/items`, `POST /store/items/search`, `POST /store/namespaces`, served
 * directly on the record store (libs/store `StoreItems`), like threads. Another tenant's item is
 * simply absent: GET answers null, as LangGraph does for a missing item.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { errorMessage, type Logger } from '@agentloop/core';
import { MAX_ITEM_KEY_LENGTH, MAX_NAMESPACE_LENGTH, type StoreItemHit, type StoreItemRecord, type StoreItems } from '@agentloop/store';
import { JsonObjectSchema, parseRequest } from '../validation.js';

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

export function toApiItem(item: StoreItemRecord) {
  return { namespace: item.namespace, key: item.key, value: item.value, created_at: item.createdAt.toISOString(), updated_at: item.updatedAt.toISOString() };
}

const toApiHit = (hit: StoreItemHit) => ({ ...toApiItem(hit), score: hit.score });

export function registerStoreRoutes(app: FastifyInstance, items: StoreItems): void {
  app.put('/store/items', async (request, reply) => {
    const body = parseRequest(PutBody, request.body, 'body');
    await items.put(request.tenantId, body.namespace, body.key, body.value, {
      ...(body.index !== undefined ? { index: body.index } : {}),
      ttl: body.ttl ?? null,
    });
    return reply.status(204).send();
  });

  app.get('/store/items', async (request) => {
    const q = parseRequest(GetQuery, request.query, 'query');
    const item = await items.get(request.tenantId, q.namespace, q.key, { refreshTtl: q.refresh_ttl ?? false });
    return item ? toApiItem(item) : null;
  });

  app.delete('/store/items', async (request, reply) => {
    const body = parseRequest(ItemBody, request.body, 'body');
    await items.delete(request.tenantId, body.namespace, body.key);
    return reply.status(204).send();
  });

  app.post('/store/items/search', async (request) => {
    const body = parseRequest(SearchBody, request.body, 'body');
    const hits = await items.search(request.tenantId, body.namespace_prefix ?? [], {
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      ...(body.filter ? { filter: body.filter } : {}),
      ...(body.query ? { query: body.query } : {}),
      ...(body.refresh_ttl ? { refreshTtl: true } : {}),
    });
    return { items: hits.map(toApiHit) };
  });

  app.post('/store/namespaces', async (request) => {
    const body = parseRequest(NamespacesBody, request.body, 'body');
    const namespaces = await items.listNamespaces(request.tenantId, {
      limit: body.limit ?? 100,
      offset: body.offset ?? 0,
      ...(body.prefix ? { prefix: body.prefix } : {}),
      ...(body.suffix ? { suffix: body.suffix } : {}),
      ...(body.max_depth ? { maxDepth: body.max_depth } : {}),
    });
    return { namespaces };
  });
}

/**
 * Deletes expired items every `intervalMs` (they are invisible from their expiry on; this only
 * frees the rows). Every gateway replica may sweep: deleting an expired row twice is harmless.
 */
export function startStoreSweeper(store: { sweepExpiredItems(limit: number): Promise<number> }, intervalMs: number, logger: Logger): () => void {
  if (intervalMs <= 0) return () => undefined;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    store
      .sweepExpiredItems(10_000)
      .then((n) => n > 0 && logger.debug({ deleted: n }, 'expired store items swept'))
      .catch((err: unknown) => logger.warn({ err: errorMessage(err) }, 'store item sweep failed'))
      .finally(() => (running = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
