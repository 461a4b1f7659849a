import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RunRecord } from '@agentloop/store';
import { errorMessage } from '@agentloop/core';
import type { RouteContext } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import type { CreatedRun } from '../run-service.js';
import { normalizeStreamModes, RunCreateBody, StreamModeSchema, wantsEvent } from '../run-schema.js';
import { toApiRun } from '../serialize.js';
import { parseLastEventId, SseWriter } from '../sse.js';
import { parseRequest, queryInt, RunParams, ThreadParams, Uuid } from '../validation.js';
import { requireThread } from './threads.js';
import { registerRunBatchRoutes } from './run-batch.js';
import { registerRunCancelRoutes } from './run-cancel.js';
import { requireRun as requireThreadRun, runPath } from './run-lookup.js';
import { registerRecordingRoutes } from './recordings.js';
import { withReplayOutcome } from '../recording-export.js';

const ListQuery = z.object({
  limit: queryInt(10, 1, 1000),
  offset: queryInt(0, 0, 1_000_000),
  status: z.enum(['pending', 'running', 'success', 'error', 'timeout', 'interrupted']).optional(),
  select: z.union([z.string(), z.array(z.string())]).optional(),
});

const JoinStreamQuery = z.object({
  stream_mode: StreamModeSchema.optional(),
  cancel_on_disconnect: z.string().optional(),
  namespace: z.unknown().optional(),
  checkpoint_id: z.string().optional(),
});

/**
 * An AbortSignal for work done on behalf of one HTTP request: aborted when the
 * client goes away, when RUN_WAIT_MAX_MS passes, or when the gateway stops.
 */
function requestScope(ctx: RouteContext, reply: FastifyReply) {
  // One controller fed by the three causes, not AbortSignal.any of three: that builds a signal
  // with weak references to its sources on every runs.wait, which showed in the profile (issue 9).
  const ac = new AbortController();
  const closing = ctx.runs.closingSignal;
  let clientLeft = false;
  const onClosing = () => ac.abort(closing.reason);
  const timer = setTimeout(() => ac.abort(), ctx.config.RUN_WAIT_MAX_MS);
  timer.unref();
  if (closing.aborted) ac.abort(closing.reason);
  else closing.addEventListener('abort', onClosing, { once: true });
  reply.raw.on('close', () => {
    clearTimeout(timer);
    closing.removeEventListener('abort', onClosing);
    if (!reply.raw.writableFinished) {
      clientLeft = true;
      ac.abort();
    }
  });
  return { signal: ac.signal, closing: () => closing.aborted, clientLeft: () => clientLeft };
}

/** `on_disconnect` of the run request (LangGraph default: continue), or `?cancel_on_disconnect=true` of a join. */
type OnDisconnect = 'cancel' | 'continue';
const cancelOnDisconnect = (v: string | undefined): OnDisconnect => (v === 'true' || v === '1' ? 'cancel' : 'continue');

export function registerRunRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { store, runs } = ctx;
  registerRunCancelRoutes(app, ctx);
  registerRunBatchRoutes(app, ctx);
  registerRecordingRoutes(app, ctx);

  const requireRun = (tenantId: string, threadId: string, runId: string): Promise<RunRecord> => requireThreadRun(store, tenantId, threadId, runId);

  /**
   * The client of a run that asked `on_disconnect: "cancel"` went away before the run ended: the
   * run is cancelled like `POST .../cancel` (it stops where it is and keeps its checkpoints).
   */
  async function cancelAbandoned(request: FastifyRequest, run: RunRecord, onDisconnect: OnDisconnect): Promise<void> {
    if (onDisconnect !== 'cancel') return;
    const current = await store.getRun(request.tenantId, run.runId);
    if (!current) return;
    const after = await runs.cancel(request.tenantId, current, 'the client disconnected (on_disconnect: cancel)');
    if (after.status === 'interrupted' && current.status !== 'interrupted') request.log.info({ run_id: run.runId }, 'run cancelled: its client disconnected');
  }

  /** Waits for the run's end and answers like LangGraph's /wait: final values, or {__error__}. */
  async function waitAndReply(
    request: FastifyRequest,
    reply: FastifyReply,
    created: Pick<CreatedRun, 'run' | 'deleteOnCompletion' | 'endWatch'>,
    onDisconnect: OnDisconnect = 'continue',
    scope = requestScope(ctx, reply),
  ) {
    const tenantId = request.tenantId;
    const { run } = created;
    const result = await runs.waitForEnd(tenantId, run.runId, scope.signal, created.endWatch);
    if (result.kind !== 'finished' && scope.clientLeft()) await cancelAbandoned(request, run, onDisconnect);
    if (result.kind === 'finished') {
      const body = await runs.waitBody(tenantId, result);
      // A run's error is text from the orchestrator and the tools: the last redaction before the client.
      if ('__error__' in body) return JSON.parse(ctx.redact(JSON.stringify(body))) as typeof body;
      if (created.deleteOnCompletion) await runs.deleteStateless(tenantId, run);
      return body;
    }
    if (created.deleteOnCompletion) runs.cleanupWhenDone(tenantId, run);
    if (result.kind === 'missing') throw notFound(`Run ${run.runId} no longer exists (its thread was deleted).`);
    if (scope.closing()) throw new ApiError('UNAVAILABLE', 'The gateway is shutting down; join the run again on another replica.');
    // The wait limit passed (or the client left, in which case nobody reads this).
    throw new ApiError(
      'WAIT_TIMEOUT',
      `Run ${run.runId} has not finished within the server's wait limit (${ctx.config.RUN_WAIT_MAX_MS} ms). Join it again with GET ${runPath(run)}/join.`,
    );
  }

  /** Streams the run's events as SSE, filtered by `modes`, from position `afterId`. */
  async function streamRun(
    request: FastifyRequest,
    reply: FastifyReply,
    run: RunRecord,
    opts: { modes: string[]; afterId: number; metadata: boolean; deleteOnCompletion: boolean; onDisconnect?: OnDisconnect },
  ): Promise<void> {
    const tenantId = request.tenantId;
    const scope = requestScope(ctx, reply);
    reply.hijack();
    const sse = new SseWriter(reply.raw);
    sse.open({ ...reply.getHeaders(), 'content-location': runPath(run), location: `${runPath(run)}/stream` }, ctx.config.SSE_HEARTBEAT_MS);
    let ended = false;
    try {
      if (opts.metadata) {
        await sse.send({ event: 'metadata', data: JSON.stringify({ run_id: run.runId, thread_id: run.threadId, attempt: 1 }), id: opts.afterId });
      }
      for await (const ev of runs.events(tenantId, run.runId, opts.afterId, scope.signal)) {
        if (ev.event === 'end') ended = true;
        if (wantsEvent(ev.event, opts.modes))
          await sse.send({ event: ev.event, data: ev.event === 'error' ? ctx.redact(ev.dataJson) : ev.dataJson, id: ev.id });
        if (sse.closed) break;
      }
    } catch (err) {
      request.log.error({ run_id: run.runId, err: errorMessage(err) }, 'run event stream failed');
      await sse.send({
        event: 'error',
        data: JSON.stringify({ error: 'StreamError', message: `Lost the run's event stream: ${errorMessage(err)}. Join it again.` }),
      });
    } finally {
      // Before our own end(): after it the response reads as closed whoever closed it.
      const clientGone = scope.clientLeft() || sse.closed;
      sse.end();
      if (!ended && clientGone) {
        await cancelAbandoned(request, run, opts.onDisconnect ?? 'continue').catch((err: unknown) =>
          request.log.warn({ run_id: run.runId, err: errorMessage(err) }, 'run of a disconnected client not cancelled'),
        );
      }
      if (opts.deleteOnCompletion) {
        if (ended) await runs.deleteStateless(tenantId, run).catch((err: unknown) => request.log.warn({ err: errorMessage(err) }, 'stateless cleanup failed'));
        else runs.cleanupWhenDone(tenantId, run);
      }
    }
  }

  /** `waitScope`: the request's scope of a `runs.wait`, during which the run's end is watched from before its admission. */
  async function createFromRequest(
    request: FastifyRequest,
    threadId: string | undefined,
    waitScope?: ReturnType<typeof requestScope>,
  ): Promise<CreatedRun & { onDisconnect: OnDisconnect }> {
    const body = parseRequest(RunCreateBody, request.body, 'body');
    const created = await runs.create(request.tenantId, threadId, body, { apiKeyId: request.apiKeyId ?? '' }, waitScope ? { watchEnd: waitScope.signal } : {});
    request.log.info({ run_id: created.run.runId, thread_id: created.run.threadId, tenant: request.tenantId }, 'run created');
    return { ...created, onDisconnect: body.on_disconnect ?? 'continue' };
  }

  // --- stateful runs ---------------------------------------------------------

  app.post('/threads/:thread_id/runs', async (request, reply) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const { run } = await createFromRequest(request, thread_id);
    reply.header('content-location', runPath(run));
    return toApiRun(run);
  });

  app.post('/threads/:thread_id/runs/wait', async (request, reply) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const scope = requestScope(ctx, reply);
    const created = await createFromRequest(request, thread_id, scope);
    reply.header('content-location', runPath(created.run));
    return waitAndReply(request, reply, created, created.onDisconnect, scope);
  });

  app.post('/threads/:thread_id/runs/stream', async (request, reply) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const created = await createFromRequest(request, thread_id);
    await streamRun(request, reply, created.run, {
      modes: created.streamModes,
      afterId: 0,
      metadata: true,
      deleteOnCompletion: false,
      onDisconnect: created.onDisconnect,
    });
  });

  app.get('/threads/:thread_id/runs', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const q = parseRequest(ListQuery, request.query, 'query');
    await requireThread(ctx, request.tenantId, thread_id);
    const list = await store.listRuns(request.tenantId, thread_id, { limit: q.limit, offset: q.offset, ...(q.status ? { status: q.status } : {}) });
    return list.map(toApiRun);
  });

  app.get('/threads/:thread_id/runs/:run_id', async (request) => {
    const { thread_id, run_id } = parseRequest(RunParams, request.params, 'params');
    const run = await requireRun(request.tenantId, thread_id, run_id);
    // A replay's outcome (issue 17) is shown as metadata.replay.
    return withReplayOutcome((t, r) => store.listRecordingEvents(t, r), run, toApiRun(run));
  });

  app.get('/threads/:thread_id/runs/:run_id/join', async (request, reply) => {
    const { thread_id, run_id } = parseRequest(RunParams, request.params, 'params');
    const run = await requireRun(request.tenantId, thread_id, run_id);
    return waitAndReply(request, reply, { run, deleteOnCompletion: false });
  });

  /** Joins a run's stream (`GET .../runs/{run_id}/stream`): its stored modes unless the query names some, from Last-Event-ID. */
  async function joinStream(request: FastifyRequest, reply: FastifyReply, run: RunRecord): Promise<void> {
    const q = parseRequest(JoinStreamQuery, request.query, 'query');
    const afterId = parseLastEventId(request.headers['last-event-id']);
    const stored = run.kwargs.stream_mode;
    const modes = normalizeStreamModes(
      q.stream_mode ?? (Array.isArray(stored) && stored.every((m) => typeof m === 'string') ? (stored as string[]) : undefined),
    );
    await streamRun(request, reply, run, {
      modes,
      afterId,
      metadata: false,
      deleteOnCompletion: false,
      onDisconnect: cancelOnDisconnect(q.cancel_on_disconnect),
    });
  }

  app.get('/threads/:thread_id/runs/:run_id/stream', async (request, reply) => {
    const { thread_id, run_id } = parseRequest(RunParams, request.params, 'params');
    await joinStream(request, reply, await requireRun(request.tenantId, thread_id, run_id));
  });

  // The SDK's joinStream without a thread (`runs.joinStream(null, runId)`): any run of the tenant.
  app.get('/runs/:run_id/stream', async (request, reply) => {
    const { run_id } = parseRequest(z.object({ run_id: Uuid }), request.params, 'params');
    const run = await store.getRun(request.tenantId, run_id);
    if (!run) throw notFound(`Run ${run_id} not found.`);
    await joinStream(request, reply, run);
  });

  // --- dead letter: runs whose queue job failed for good (poison runs) or was lost ---------

  // The tenant's dead-lettered runs, newest first (paginated: limit, offset).
  app.get('/runs/dead-letter', async (request) => {
    const q = parseRequest(ListQuery, request.query, 'query');
    return (await runs.listDeadLettered(request.tenantId, { limit: q.limit, offset: q.offset })).map(toApiRun);
  });

  // Re-queues a dead-lettered run from its last checkpoint (a new job, attempts reset); 409 otherwise.
  app.post('/threads/:thread_id/runs/:run_id/redrive', async (request, reply) => {
    const { thread_id, run_id } = parseRequest(RunParams, request.params, 'params');
    const run = await requireRun(request.tenantId, thread_id, run_id);
    const after = await runs.redrive(request.tenantId, run);
    reply.header('content-location', runPath(after));
    return reply.code(202).send(toApiRun(after));
  });

  // The webhook delivery log of a run: every attempt with its outcome (delivery id = run id).
  app.get('/runs/:run_id/webhook', async (request) => {
    const { run_id } = parseRequest(z.object({ run_id: Uuid }), request.params, 'params');
    const run = await store.getRun(request.tenantId, run_id);
    if (!run) throw notFound(`Run ${run_id} not found.`);
    const attempts = await store.listWebhookAttempts(request.tenantId, run_id);
    return {
      delivery_id: run_id,
      url: typeof run.kwargs.webhook === 'string' ? run.kwargs.webhook : null,
      attempts: attempts.map((a) => ({
        attempt: a.attempt,
        at: a.at.toISOString(),
        outcome: a.outcome,
        status_code: a.statusCode,
        error: a.error,
        duration_ms: a.durationMs,
      })),
    };
  });

  // --- delegated agents' runs (seed 001 Part 5) ------------------------------

  // The child runs a run started with delegate_task, oldest first. Each lives on its own thread
  // (metadata parent_run_id), so GET /threads/{child thread}/runs/{child run} works as for any run.
  app.get('/runs/:run_id/children', async (request) => {
    const { run_id } = parseRequest(z.object({ run_id: Uuid }), request.params, 'params');
    const q = parseRequest(ListQuery, request.query, 'query');
    if (!(await store.getRun(request.tenantId, run_id))) throw notFound(`Run ${run_id} not found.`);
    const threads = await store.searchThreads(request.tenantId, { limit: 1000, offset: 0, metadata: { parent_run_id: run_id } });
    const children = (await Promise.all(threads.map((t) => store.listRuns(request.tenantId, t.threadId, { limit: 100 }))))
      .flat()
      .filter((r) => r.metadata.parent_run_id === run_id && (!q.status || r.status === q.status))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.runId.localeCompare(b.runId));
    return children.slice(q.offset, q.offset + q.limit).map(toApiRun);
  });

  // --- stateless runs (temporary thread, removed when the run ends) ---------

  app.post('/runs', async (request, reply) => {
    const created = await createFromRequest(request, undefined);
    if (created.deleteOnCompletion) runs.cleanupWhenDone(request.tenantId, created.run);
    reply.header('content-location', runPath(created.run));
    return toApiRun(created.run);
  });

  app.post('/runs/wait', async (request, reply) => {
    const scope = requestScope(ctx, reply);
    const created = await createFromRequest(request, undefined, scope);
    reply.header('content-location', runPath(created.run));
    return waitAndReply(request, reply, created, created.onDisconnect, scope);
  });

  app.post('/runs/stream', async (request, reply) => {
    const created = await createFromRequest(request, undefined);
    await streamRun(request, reply, created.run, {
      modes: created.streamModes,
      afterId: 0,
      metadata: true,
      deleteOnCompletion: created.deleteOnCompletion,
      onDisconnect: created.onDisconnect,
    });
  });
}
