/** Crons (issue 12): the LangGraph Platform endpoints `client.crons.*` calls (SDK v1.15). */
import type { FastifyInstance } from 'fastify';
import type { CronService } from '../cron-service.js';
import { CronCountBody, CronCreateBody, CronParams, CronPatchBody, CronSearchBody } from '../cron-schema.js';
import { parseRequest, ThreadParams } from '../validation.js';

function project(obj: Record<string, unknown>, select: readonly string[] | null | undefined): Record<string, unknown> {
  if (!select || select.length === 0) return obj;
  const now = new Date().toISOString();
  return Object.fromEntries(select.map((k) => [k, k === 'now' ? now : obj[k]]));
}

export function registerCronRoutes(app: FastifyInstance, crons: CronService): void {
  app.post('/runs/crons', async (request) => {
    const body = parseRequest(CronCreateBody, request.body, 'body');
    return crons.toApi(await crons.create(request.tenantId, undefined, body));
  });

  app.post('/threads/:thread_id/runs/crons', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const body = parseRequest(CronCreateBody, request.body, 'body');
    return crons.toApi(await crons.create(request.tenantId, thread_id, body));
  });

  app.patch('/runs/crons/:cron_id', async (request) => {
    const { cron_id } = parseRequest(CronParams, request.params, 'params');
    const body = parseRequest(CronPatchBody, request.body, 'body');
    return crons.toApi(await crons.update(request.tenantId, cron_id, body));
  });

  app.delete('/runs/crons/:cron_id', async (request, reply) => {
    const { cron_id } = parseRequest(CronParams, request.params, 'params');
    await crons.delete(request.tenantId, cron_id);
    return reply.code(204).send();
  });

  app.post('/runs/crons/search', async (request) => {
    const body = parseRequest(CronSearchBody, request.body, 'body');
    const found = await crons.search(request.tenantId, body);
    return found.map((c) => project(crons.toApi(c), body.select));
  });

  app.post('/runs/crons/count', async (request) => {
    const body = parseRequest(CronCountBody, request.body, 'body');
    return crons.count(request.tenantId, body);
  });
}
