/**
 * A thread's state as LangGraph Platform serves it: the latest checkpoint (GET /state), the state at
 * a checkpoint, the history (one state per checkpoint, newest first), and edits made outside a run
 * — `POST /state` (updateState: values as if a node wrote them) and `PATCH /state` (the latest
 * checkpoint's metadata). Edits need the deployment's checkpoint store and an idle thread; after
 * one, the thread record (GET /threads/{id}) shows the new checkpoint's values and status.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { JsonObject, ThreadRecord } from '@agentloop/store';
import type { RouteContext } from '../context.js';
import { conflict, ApiError, invalid, notFound } from '../errors.js';
import type { CheckpointRef, CheckpointState, ThreadCheckpoints, UpdatedCheckpoint } from '../checkpoints.js';
import { toApiThreadState } from '../serialize.js';
import { MetadataSchema, parseRequest, ThreadParams, Uuid } from '../validation.js';
import { requireThread } from './threads.js';

const HistoryBody = z.object({
  limit: z.number().int().min(1).max(1000).nullish(),
  before: z.unknown().optional(),
  metadata: MetadataSchema.nullish(),
  checkpoint: z.unknown().optional(),
  select: z.array(z.string()).nullish(),
});

const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  before: z.string().min(1).optional(),
});

const StateQuery = z.object({ subgraphs: z.enum(['true', 'false', '1', '0']).optional() });

const CheckpointParams = z.object({ thread_id: Uuid, checkpoint_id: z.string().min(1).max(200) });

const StateAtBody = z.object({
  checkpoint: z.unknown(),
  subgraphs: z.boolean().nullish(),
  select: z.array(z.string()).nullish(),
});

const UpdateStateBody = z.object({
  values: z.unknown().optional(),
  as_node: z.string().min(1).max(200).nullish(),
  checkpoint: z.unknown().optional(),
  checkpoint_id: z.string().min(1).max(200).nullish(),
  command: z.object({ update: z.unknown().optional() }).strict().nullish(),
});

const PatchStateBody = z.object({ metadata: MetadataSchema });

/**
 * A checkpoint as clients address it: `{checkpoint_id, checkpoint_ns}`, a config
 * `{configurable: {checkpoint_id, ...}}`, or a bare checkpoint id.
 */
export function checkpointRef(v: unknown, where: string): CheckpointRef | null {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string') return { checkpoint_id: v, checkpoint_ns: '' };
  if (typeof v !== 'object' || Array.isArray(v))
    throw invalid(where, 'must be a checkpoint {"checkpoint_id": ..., "checkpoint_ns": ...} or a config {"configurable": {"checkpoint_id": ...}}');
  const o = v as Record<string, unknown>;
  const src = o.configurable && typeof o.configurable === 'object' ? (o.configurable as Record<string, unknown>) : o;
  const id = src.checkpoint_id;
  const ns = src.checkpoint_ns;
  if (id !== undefined && id !== null && typeof id !== 'string') throw invalid(`${where}.checkpoint_id`, 'must be a string');
  if (ns !== undefined && ns !== null && typeof ns !== 'string') throw invalid(`${where}.checkpoint_ns`, 'must be a string');
  return { checkpoint_id: id ?? null, checkpoint_ns: ns ?? '' };
}

/** The checkpoint store, or a 409 saying edits need one. */
export function requireCheckpoints(ctx: RouteContext, what: string): ThreadCheckpoints {
  if (!ctx.checkpoints) throw new ApiError('UNIMPLEMENTED', `${what} needs the thread checkpoints, which this deployment does not give the gateway.`);
  return ctx.checkpoints;
}

/** The thread, if no run holds it: an edit under a running run would race its checkpoints. */
export async function requireIdleThread(ctx: RouteContext, tenantId: string, threadId: string, what: string): Promise<ThreadRecord> {
  const thread = await requireThread(ctx, tenantId, threadId);
  if (thread.activeRunId || thread.status === 'busy') {
    throw conflict(`Thread ${threadId} is busy with run ${thread.activeRunId ?? '(starting)'}: ${what} waits until no run holds the thread.`);
  }
  return thread;
}

/**
 * The thread record after its checkpoints changed outside a run: the latest checkpoint's values, and
 * `interrupted` when it still has work to do (next nodes or interrupts), `idle` otherwise — as
 * LangGraph Platform sets the status after an update. 409 when a run took the thread meanwhile.
 */
export async function syncThreadRecord(ctx: RouteContext, tenantId: string, threadId: string, latest: CheckpointState): Promise<void> {
  const status = latest.next.length > 0 || latest.interrupts.length > 0 ? 'interrupted' : 'idle';
  const record = await ctx.store.getThread(tenantId, threadId);
  const values = record ? withRunOutputs(latest, record).values : latest.values;
  // The thread's status is the lifecycle's (libs/store run-lifecycle.ts), guarded on no run holding it.
  const ok = await ctx.runs.lifecycle.restoreThread(tenantId, threadId, { values, status });
  if (!ok) throw conflict(`Thread ${threadId} was taken by a run while its state was being updated; its checkpoints hold the update, its record does not yet.`);
}

/**
 * The latest checkpoint's state with what the thread record adds to it: the last run's `artifacts`
 * (the files it wrote under outputs/), listed at the end of the run and kept in no checkpoint.
 */
function withRunOutputs(state: CheckpointState, record: ThreadRecord): CheckpointState {
  const artifacts = record.values?.artifacts;
  return artifacts === undefined ? state : { ...state, values: { ...state.values, artifacts } };
}

/** The update's answer, after the record follows the thread's latest checkpoint. */
async function afterUpdate(
  ctx: RouteContext,
  tenantId: string,
  threadId: string,
  updated: UpdatedCheckpoint,
): Promise<{ checkpoint: UpdatedCheckpoint['checkpoint'] }> {
  // An update at an older checkpoint forks: the new checkpoint is the latest either way.
  await syncThreadRecord(ctx, tenantId, threadId, updated.state);
  return { checkpoint: updated.checkpoint };
}

export function registerThreadStateRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/threads/:thread_id/state', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    parseRequest(StateQuery, request.query ?? {}, 'query');
    return stateAt(ctx, request.tenantId, thread_id, null);
  });

  app.post('/threads/:thread_id/state', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const body = parseRequest(UpdateStateBody, request.body ?? {}, 'body');
    const checkpoints = requireCheckpoints(ctx, 'Updating a thread state');
    await requireIdleThread(ctx, request.tenantId, thread_id, 'a state update');
    const at = checkpointRef(body.checkpoint, 'body.checkpoint') ?? (body.checkpoint_id ? { checkpoint_id: body.checkpoint_id, checkpoint_ns: '' } : null);
    if (body.values !== undefined && body.command?.update !== undefined)
      throw invalid('body.command.update', 'give the update either as values or as command.update, not both');
    const values = body.command?.update !== undefined ? body.command.update : body.values;
    const updated = await checkpoints.update(request.tenantId, thread_id, { values, asNode: body.as_node ?? null }, at);
    return afterUpdate(ctx, request.tenantId, thread_id, updated);
  });

  app.patch('/threads/:thread_id/state', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const body = parseRequest(PatchStateBody, request.body, 'body');
    const checkpoints = requireCheckpoints(ctx, 'Patching a thread state');
    await requireIdleThread(ctx, request.tenantId, thread_id, 'a metadata patch');
    if (!(await checkpoints.patchMetadata(request.tenantId, thread_id, body.metadata as JsonObject))) {
      throw notFound(`Thread ${thread_id} has no checkpoint yet: there is no state whose metadata could be patched.`);
    }
    return {};
  });

  // One state per checkpoint, newest first (without a checkpoint store: the latest state only).
  app.post('/threads/:thread_id/history', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const body = parseRequest(HistoryBody, request.body ?? {}, 'body');
    return history(ctx, request.tenantId, thread_id, {
      limit: body.limit ?? 10,
      before: checkpointRef(body.before, 'body.before'),
      metadata: body.metadata ?? null,
      checkpoint: checkpointRef(body.checkpoint, 'body.checkpoint'),
    });
  });

  app.get('/threads/:thread_id/history', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const query = parseRequest(HistoryQuery, request.query ?? {}, 'query');
    return history(ctx, request.tenantId, thread_id, {
      limit: query.limit ?? 10,
      before: query.before ? { checkpoint_id: query.before } : null,
      metadata: null,
      checkpoint: null,
    });
  });

  app.get('/threads/:thread_id/state/:checkpoint_id', async (request) => {
    const { thread_id, checkpoint_id } = parseRequest(CheckpointParams, request.params, 'params');
    return stateAt(ctx, request.tenantId, thread_id, { checkpoint_id, checkpoint_ns: '' });
  });

  app.post('/threads/:thread_id/state/checkpoint', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const body = parseRequest(StateAtBody, request.body ?? {}, 'body');
    return stateAt(ctx, request.tenantId, thread_id, checkpointRef(body.checkpoint, 'body.checkpoint'));
  });
}

async function history(
  ctx: RouteContext,
  tenantId: string,
  threadId: string,
  opts: { limit: number; before: CheckpointRef | null; metadata: JsonObject | null; checkpoint: CheckpointRef | null },
): Promise<unknown[]> {
  const thread = await requireThread(ctx, tenantId, threadId);
  if (!ctx.checkpoints) return thread.values === null ? [] : [toApiThreadState(thread)];
  return ctx.checkpoints.history(tenantId, threadId, opts);
}

/** The state at a checkpoint; without one, the latest checkpoint (the thread record before the first). */
async function stateAt(ctx: RouteContext, tenantId: string, threadId: string, checkpoint: CheckpointRef | null): Promise<unknown> {
  const thread = await requireThread(ctx, tenantId, threadId);
  if (!checkpoint?.checkpoint_id) {
    const latest = ctx.checkpoints ? await ctx.checkpoints.state(tenantId, threadId, checkpoint) : null;
    return latest ? withRunOutputs(latest, thread) : toApiThreadState(thread);
  }
  if (!ctx.checkpoints) throw notFound(`Checkpoint ${checkpoint.checkpoint_id} of thread ${threadId} not found: this deployment keeps no checkpoint history.`);
  const state = await ctx.checkpoints.state(tenantId, threadId, checkpoint);
  if (!state) throw notFound(`Checkpoint ${checkpoint.checkpoint_id} of thread ${threadId} not found.`);
  return state;
}
