/**
 * LangGraph Platform's store (issue 12): long-term memory items under namespaces, per tenant.
 * `PUT/GET/DELETE /store/items`, `POST /store/items/search`, `POST /store/namespaces`, over the
 * transport-neutral operations of store-api.ts (which gRPC serves too). Another tenant's item is
 * simply absent: GET answers null, as LangGraph does for a missing item.
 */
import type { FastifyInstance } from 'fastify';
import { errorMessage, type Logger } from '@agentloop/core';
import type { StoreApi } from '../store-api.js';

export function registerStoreRoutes(app: FastifyInstance, store: StoreApi): void {
  app.put('/store/items', async (request, reply) => {
    await store.putItem(request.tenantId, request.body);
    return reply.status(204).send();
  });

  app.get('/store/items', async (request) => store.getItemByQuery(request.tenantId, request.query));

  app.delete('/store/items', async (request, reply) => {
    await store.deleteItem(request.tenantId, request.body);
    return reply.status(204).send();
  });

  app.post('/store/items/search', async (request) => store.searchItems(request.tenantId, request.body));

  app.post('/store/namespaces', async (request) => store.listNamespaces(request.tenantId, request.body));
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
