/**
 * Stopping and removing runs: `POST /threads/{id}/runs/{run_id}/cancel` and `POST /runs/cancel`
 * (LangGraph `action=interrupt|rollback`), `DELETE /threads/{id}/runs/{run_id}`.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RouteContext } from '../context.js';
import { toApiRun } from '../serialize.js';
import { parseRequest, RunParams } from '../validation.js';
import { requireRun } from './run-lookup.js';
import { CancelAction, cancelManyRuns } from '../run-cancel-many.js';

const CancelQuery = z.object({
  wait: z.enum(['0', '1', 'true', 'false']).optional(),
  action: CancelAction.optional(),
});

export function registerRunCancelRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { store, runs } = ctx;

  // ?wait=0|1&action=interrupt|rollback. Interrupt: the run stops where it is and keeps its
  // checkpoints (202 with the run, 200 when waited). Rollback: the run stops and is deleted with
  // every checkpoint it wrote, the thread back to its state before the run (204).
  app.post('/threads/:thread_id/runs/:run_id/cancel', async (request, reply) => {
    const { thread_id, run_id } = parseRequest(RunParams, request.params, 'params');
    const q = parseRequest(CancelQuery, request.query, 'query');
    const run = await requireRun(store, request.tenantId, thread_id, run_id);
    const after = await runs.cancelWithAction(request.tenantId, run, q.action ?? 'interrupt');
    if (!after) return reply.code(204).send();
    if (q.wait === '1' || q.wait === 'true') return reply.code(200).send(toApiRun(after));
    return reply.code(202).send(toApiRun(after));
  });

  // Cancels many runs of the tenant (the SDK's runs.cancelMany): 204 once each is cancelled.
  app.post('/runs/cancel', async (request, reply) => {
    const { action, cancelled } = await cancelManyRuns(runs, request.tenantId, request.body, { value: request.query, part: 'query' });
    request.log.info({ tenant: request.tenantId, cancelled, action }, 'runs cancelled');
    return reply.code(204).send();
  });

  // Deletes an ended run with its event log; a pending or running one is 409 (cancel it first).
  app.delete('/threads/:thread_id/runs/:run_id', async (request, reply) => {
    const { thread_id, run_id } = parseRequest(RunParams, request.params, 'params');
    const run = await requireRun(store, request.tenantId, thread_id, run_id);
    await runs.deleteRun(request.tenantId, run);
    return reply.code(204).send();
  });
}
