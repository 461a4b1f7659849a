import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { RunEventStream } from '@agentloop/bus';
import type { JobQueue } from '@agentloop/queue';
import type { RouteContext } from '../context.js';
import { notFound } from '../errors.js';
import { SseWriter } from '../sse.js';
import { parseRequest, queryInt, Uuid } from '../validation.js';
import { readEventLog } from '../console/event-log.js';
import type { ConsoleFeed } from '../console/live-feed.js';
import { listPendingApprovals } from '../console/pending-approvals.js';
import { summarizeRuns } from '../console/run-summary.js';
import { canSee, viewedTenant } from '../console/scope.js';
import { buildTimeline } from '../console/timeline.js';

const TenantId = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'expected a tenant id (1-64 letters, digits, "_", "." or "-")');

const RunsQuery = z.object({
  tenant_id: TenantId.optional(),
  status: z.enum(['pending', 'running', 'success', 'error', 'timeout', 'interrupted']).optional(),
  limit: queryInt(50, 1, 500),
  offset: queryInt(0, 0, 1_000_000),
});
const ApprovalsQuery = z.object({ tenant_id: TenantId.optional(), limit: queryInt(100, 1, 1000) });
const TenantQuery = z.object({ tenant_id: TenantId.optional() });

export interface ConsoleApiDeps {
  events: RunEventStream;
  queue: JobQueue;
  feed: ConsoleFeed;
}

/**
 * The public API of the ops console (issue 16; README "Ops console"). Every read is scoped by
 * the API key: a tenant key sees its own tenant; an operator key (AGENTLOOP_ADMIN_KEYS) sees every
 * tenant, or one with `?tenant_id=`. Answers go through the usual resume
 * (`POST /threads/{thread_id}/runs` with `command.resume`), re-drives through
 * `POST /threads/{thread_id}/runs/{run_id}/redrive`.
 */
export function registerConsoleApiRoutes(app: FastifyInstance, ctx: RouteContext, deps: ConsoleApiDeps): void {
  const { store } = ctx;

  // Who the key is: its tenant, and whether it is an operator key (the console hides what it cannot answer).
  app.get('/console/session', async (request) => ({ tenant_id: request.tenantId, admin: request.isAdmin === true }));

  // Runs across threads, newest first, with status, tenant, assistant, duration, tokens and model calls.
  app.get('/runs', async (request) => {
    const q = parseRequest(RunsQuery, request.query, 'query');
    const tenantId = viewedTenant(request, q.tenant_id);
    const runs = await store.listConsoleRuns({
      ...(tenantId !== undefined ? { tenantId } : {}),
      ...(q.status ? { status: q.status } : {}),
      limit: q.limit,
      offset: q.offset,
    });
    return { runs: await summarizeRuns(store, runs) };
  });

  // One run's timeline: lifecycle, model calls, tool calls, approvals, child runs, webhook attempts.
  app.get('/runs/:run_id/timeline', async (request, reply) => {
    const { run_id } = parseRequest(z.object({ run_id: Uuid }), request.params, 'params');
    const run = request.isAdmin ? await store.findRunAnyTenant(run_id) : await store.getRun(request.tenantId, run_id);
    if (!run || !canSee(request, run.tenantId)) throw notFound(`Run ${run_id} not found.`);
    const gone = new AbortController();
    reply.raw.on('close', () => gone.abort());
    const events = await readEventLog(deps.events, run.runId, AbortSignal.any([gone.signal, ctx.runs.closingSignal]));
    return buildTimeline(store, run, events);
  });

  // Tool approvals and ask_human questions waiting for a human, across threads.
  app.get('/approvals/pending', async (request) => {
    const q = parseRequest(ApprovalsQuery, request.query, 'query');
    return { approvals: await listPendingApprovals(store, viewedTenant(request, q.tenant_id), q.limit) };
  });

  // The runs queue: an operator key sees the queue itself (shared by every tenant); a tenant key its own runs waiting.
  app.get('/queue/stats', async (request) => {
    const q = parseRequest(TenantQuery, request.query, 'query');
    const tenantId = viewedTenant(request, q.tenant_id);
    const queue = request.isAdmin ? await deps.queue.stats() : undefined;
    const tenant = tenantId === undefined ? undefined : await tenantBacklog(ctx, tenantId);
    return {
      queue: queue
        ? {
            name: deps.queue.name,
            waiting: queue.waiting,
            delayed: queue.delayed,
            active: queue.active,
            failed: queue.failed,
            oldest_waiting_ms: queue.oldestWaitingMs,
          }
        : null,
      tenant: tenant ?? null,
    };
  });

  // Live updates (SSE): runs started and ended, approvals pending and answered, of the key's scope.
  app.get('/console/events', async (request, reply) => {
    const q = parseRequest(TenantQuery, request.query, 'query');
    const tenantId = viewedTenant(request, q.tenant_id);
    reply.hijack();
    const sse = new SseWriter(reply.raw);
    sse.open({ ...reply.getHeaders() }, ctx.config.SSE_HEARTBEAT_MS);
    await sse.send({ event: 'ready', data: JSON.stringify({ tenant_id: tenantId ?? null }) });
    const stop = deps.feed.listen(tenantId, (change) => void sse.send({ event: change.type, data: JSON.stringify(change) }));
    const end = () => {
      stop();
      sse.end();
    };
    reply.raw.on('close', end);
    ctx.runs.closingSignal.addEventListener('abort', end, { once: true });
  });
}

/** A tenant's runs not finished yet, and how long its oldest pending one has waited. */
async function tenantBacklog(ctx: RouteContext, tenantId: string) {
  const [active, [oldest]] = await Promise.all([ctx.store.countActiveRuns(tenantId), ctx.store.listTenantRunsInStatus(tenantId, ['pending'], 1)]);
  return { tenant_id: tenantId, active_runs: active, oldest_pending_ms: oldest ? Math.max(0, Date.now() - oldest.createdAt.getTime()) : 0 };
}
