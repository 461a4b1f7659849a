import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../context.js';
import { AssistantApi, AssistantParams } from '../assistant-api.js';
import { parseRequest } from '../validation.js';
import { registerAssistantGraphRoutes } from './assistant-graph.js';

export { metadataMatches } from '../assistant-api.js';

/**
 * Assistants, LangGraph Platform's versioned agent configurations over the `agent` graph (issue 11),
 * per tenant, beside the read-only built-in one every tenant has; the operations are in
 * assistant-api.ts (which gRPC serves too). Another tenant's assistant is "not found".
 */
export function registerAssistantRoutes(app: FastifyInstance, ctx: Pick<RouteContext, 'store'>): void {
  const assistants = new AssistantApi(ctx.store);
  const idOf = (params: unknown): string => parseRequest(AssistantParams, params, 'params').assistant_id;

  app.post('/assistants', async (request) => assistants.create(request.tenantId, request.body));

  app.post('/assistants/search', async (request, reply) => {
    const { page, nextOffset } = await assistants.search(request.tenantId, request.body);
    if (nextOffset !== undefined) void reply.header('x-pagination-next', String(nextOffset));
    return page;
  });

  app.post('/assistants/count', async (request) => assistants.count(request.tenantId, request.body));

  app.get('/assistants/:assistant_id', async (request) => assistants.get(request.tenantId, idOf(request.params)));

  app.patch('/assistants/:assistant_id', async (request) => {
    const id = idOf(request.params);
    return assistants.update(request.tenantId, id, request.body);
  });

  app.delete('/assistants/:assistant_id', async (request, reply) => {
    await assistants.delete(request.tenantId, idOf(request.params));
    return reply.code(204).send();
  });

  app.post('/assistants/:assistant_id/versions', async (request) => {
    const id = idOf(request.params);
    return assistants.versions(request.tenantId, id, request.body);
  });

  app.post('/assistants/:assistant_id/latest', async (request) => {
    const id = idOf(request.params);
    return assistants.setLatest(request.tenantId, id, request.body);
  });

  registerAssistantGraphRoutes(app, ctx);
}
