import { z } from 'zod';
import { CancelRunsResponseSchema, create, DeleteRunResponseSchema, ListRunsResponseSchema, RunResultSchema, type CreateRunRequest } from '@agentloop/proto';
import type { JsonObject, RunRecord } from '@agentloop/store';
import { conflict, notFound } from '../../errors.js';
import type { CreatedRun, CreateOptions } from '../../run-service.js';
import { cancelManyRuns } from '../../run-cancel-many.js';
import { parseRequest } from '../../validation.js';
import { abortedError, type CallScope, type GrpcContext } from '../call.js';
import { jsonText, RUN_REQUEST_FIELDS, runCreateBody, toRunInfo, uuidField, withProtoFieldNames } from '../convert.js';
import type { RequestOf, ResponseOf } from '../definition.js';
import { requireThread } from './threads.js';

/** HTTP GET /threads/{id}/runs' query (routes/runs.ts), with proto3's 0 meaning "default". */
const ListRunsQuery = z.object({
  limit: z.number().int().min(1).max(1000),
  offset: z.number().int().min(0).max(1_000_000),
  status: z.enum(['pending', 'running', 'success', 'error', 'timeout', 'interrupted']).optional(),
});

/** HTTP GET /runs/dead-letter's query, with proto3's 0 meaning "default". */
const DeadLetterQuery = ListRunsQuery.pick({ limit: true, offset: true });

/** The run on that thread, or NOT_FOUND (another tenant's run, or one on another thread, too). */
export async function requireRun(ctx: GrpcContext, tenant: string, threadId: string, runId: string): Promise<RunRecord> {
  uuidField(threadId, 'thread_id');
  const run = await ctx.store.getRun(tenant, uuidField(runId, 'run_id'));
  if (!run || run.threadId !== threadId) throw notFound(`Run ${runId} not found on thread ${threadId}.`);
  return run;
}

/**
 * Admits a run through the run service exactly as the HTTP routes do: on `thread_id`, or stateless
 * (a temporary thread) when it is empty; same validation, multitask strategy, if_not_exists, quota.
 * `opts.watchEnd`: a WaitRun's, as for HTTP's runs.wait (the run's end watched from before its admission).
 */
export async function admitRun(ctx: GrpcContext, scope: CallScope, req: CreateRunRequest, opts: CreateOptions = {}): Promise<CreatedRun> {
  const threadId = req.threadId === '' ? undefined : uuidField(req.threadId, 'thread_id');
  const body = runCreateBody(req);
  let created: CreatedRun;
  try {
    created = await ctx.runs.create(scope.tenant, threadId, body, { apiKeyId: scope.apiKeyId }, opts);
  } catch (err) {
    throw withProtoFieldNames(err, RUN_REQUEST_FIELDS);
  }
  scope.log.info({ run_id: created.run.runId, thread_id: created.run.threadId }, 'run created');
  return created;
}

/** CreateRun, WaitRun, GetRun, ListRuns, CancelRun, CancelRuns, DeleteRun, ListDeadLetterRuns, RedriveRun: HTTP's run routes over gRPC. */
export function runHandlers(ctx: GrpcContext) {
  const { runs, store } = ctx;
  return {
    async createRun(req: RequestOf<'createRun'>, scope: CallScope): Promise<ResponseOf<'createRun'>> {
      const created = await admitRun(ctx, scope, req);
      if (created.deleteOnCompletion) runs.cleanupWhenDone(scope.tenant, created.run);
      return toRunInfo(created.run);
    },

    async waitRun(req: RequestOf<'waitRun'>, scope: CallScope): Promise<ResponseOf<'waitRun'>> {
      const { tenant } = scope;
      const created = await admitRun(ctx, scope, req, { watchEnd: scope.signal });
      const { run } = created;
      const result = await runs.waitForEnd(tenant, run.runId, scope.signal, created.endWatch);
      if (result.kind === 'finished') {
        const body = await runs.waitBody(tenant, result);
        if (created.deleteOnCompletion) await runs.deleteStateless(tenant, run);
        const failure = (body as JsonObject & { __error__?: unknown }).__error__;
        return create(RunResultSchema, {
          run: toRunInfo(result.run),
          valuesJson: failure === undefined ? jsonText(body) : '',
          // A run's error is text from the orchestrator and the tools: the last redaction before the client.
          errorJson: ctx.redact(jsonText(failure)),
        });
      }
      if (created.deleteOnCompletion) runs.cleanupWhenDone(tenant, run);
      if (result.kind === 'missing') throw notFound(`Run ${run.runId} no longer exists (its thread was deleted).`);
      throw abortedError(scope, `run ${run.runId} goes on: re-join it with JoinRunStream (thread_id ${run.threadId}) or poll GetRun.`);
    },

    async getRun(req: RequestOf<'getRun'>, { tenant }: CallScope): Promise<ResponseOf<'getRun'>> {
      return toRunInfo(await requireRun(ctx, tenant, req.threadId, req.runId));
    },

    async listRuns(req: RequestOf<'listRuns'>, { tenant }: CallScope): Promise<ResponseOf<'listRuns'>> {
      let q: z.infer<typeof ListRunsQuery>;
      try {
        q = parseRequest(
          ListRunsQuery,
          { limit: req.limit === 0 ? 10 : req.limit, offset: req.offset, status: req.status === '' ? undefined : req.status },
          'body',
        );
      } catch (err) {
        throw withProtoFieldNames(err, { limit: 'limit', offset: 'offset', status: 'status' });
      }
      await requireThread(ctx, tenant, req.threadId);
      const list = await store.listRuns(tenant, req.threadId, { limit: q.limit, offset: q.offset, ...(q.status ? { status: q.status } : {}) });
      return create(ListRunsResponseSchema, { runs: list.map(toRunInfo) });
    },

    async listDeadLetterRuns(req: RequestOf<'listDeadLetterRuns'>, { tenant }: CallScope): Promise<ResponseOf<'listDeadLetterRuns'>> {
      let q: z.infer<typeof DeadLetterQuery>;
      try {
        q = parseRequest(DeadLetterQuery, { limit: req.limit === 0 ? 10 : req.limit, offset: req.offset }, 'body');
      } catch (err) {
        throw withProtoFieldNames(err, { limit: 'limit', offset: 'offset' });
      }
      return create(ListRunsResponseSchema, { runs: (await runs.listDeadLettered(tenant, q)).map(toRunInfo) });
    },

    async redriveRun(req: RequestOf<'redriveRun'>, { tenant }: CallScope): Promise<ResponseOf<'redriveRun'>> {
      return toRunInfo(await runs.redrive(tenant, await requireRun(ctx, tenant, req.threadId, req.runId)));
    },

    async cancelRun(req: RequestOf<'cancelRun'>, { tenant }: CallScope): Promise<ResponseOf<'cancelRun'>> {
      const after = await runs.cancel(tenant, await requireRun(ctx, tenant, req.threadId, req.runId));
      if (after.status !== 'interrupted') throw conflict(`Run ${req.runId} already finished with status ${after.status}; there is nothing to cancel.`);
      return toRunInfo(after);
    },

    async cancelRuns(req: RequestOf<'cancelRuns'>, scope: CallScope): Promise<ResponseOf<'cancelRuns'>> {
      const body = {
        thread_id: req.threadId === '' ? undefined : req.threadId,
        run_ids: req.runIds.length > 0 ? req.runIds : undefined,
        status: req.status === '' ? undefined : req.status,
      };
      try {
        const { action, cancelled } = await cancelManyRuns(runs, scope.tenant, body, {
          value: { action: req.action === '' ? undefined : req.action },
          part: 'body',
        });
        scope.log.info({ cancelled, action }, 'runs cancelled');
        return create(CancelRunsResponseSchema, { cancelled });
      } catch (err) {
        throw withProtoFieldNames(err, { thread_id: 'thread_id', run_ids: 'run_ids', status: 'status', action: 'action' });
      }
    },

    async deleteRun(req: RequestOf<'deleteRun'>, { tenant }: CallScope): Promise<ResponseOf<'deleteRun'>> {
      await runs.deleteRun(tenant, await requireRun(ctx, tenant, req.threadId, req.runId));
      return create(DeleteRunResponseSchema, {});
    },
  };
}
