import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { JsonObject, ThreadRecord } from '@agentloop/store';
import { newId } from '@agentloop/core';
import type { RouteContext } from '../context.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { CheckpointRef } from '../checkpoints.js';
import { toApiThread, toApiThreadState } from '../serialize.js';
import { JsonObjectSchema, MetadataSchema, parseRequest, ThreadParams, Uuid } from '../validation.js';

const ThreadStatusSchema = z.enum(['idle', 'busy', 'interrupted', 'error']);

const CreateBody = z.object({
  thread_id: Uuid.nullish(),
  metadata: MetadataSchema.nullish(),
  if_exists: z.enum(['raise', 'do_nothing']).nullish(),
  supersteps: z.unknown().optional(),
  ttl: z.unknown().optional(),
});

const PatchBody = z.object({
  metadata: MetadataSchema.nullish(),
  ttl: z.unknown().optional(),
});

const SearchBody = z.object({
  metadata: MetadataSchema.nullish(),
  ids: z.array(Uuid).max(1000).nullish(),
  limit: z.number().int().min(1).max(1000).nullish(),
  offset: z.number().int().min(0).nullish(),
  status: ThreadStatusSchema.nullish(),
  sort_by: z.enum(['thread_id', 'status', 'created_at', 'updated_at', 'state_updated_at']).nullish(),
  sort_order: z.enum(['asc', 'desc']).nullish(),
  select: z.array(z.string()).nullish(),
  values: JsonObjectSchema.nullish(),
  extract: z.unknown().optional(),
});

const HistoryBody = z.object({
  limit: z.number().int().min(1).max(1000).nullish(),
  before: z.unknown().optional(),
  metadata: MetadataSchema.nullish(),
  checkpoint: z.unknown().optional(),
  select: z.array(z.string()).nullish(),
});

/** The thread, or a 404 naming it. Tenant-scoped: another tenant's thread is "not found" too. */
export async function requireThread(ctx: RouteContext, tenantId: string, threadId: string): Promise<ThreadRecord> {
  const thread = await ctx.store.getThread(tenantId, threadId);
  if (!thread) throw notFound(`Thread ${threadId} not found.`);
  return thread;
}

function project(obj: Record<string, unknown>, select: readonly string[] | null | undefined): Record<string, unknown> {
  if (!select || select.length === 0) return obj;
  return Object.fromEntries(Object.entries(obj).filter(([k]) => select.includes(k)));
}

export function registerThreadRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { store } = ctx;

  app.post('/threads', async (request) => {
    const body = parseRequest(CreateBody, request.body, 'body');
    const tenantId = request.tenantId;
    const threadId = body.thread_id ?? newId();
    if (body.thread_id) {
      const existing = await store.getThread(tenantId, threadId);
      if (existing) {
        if (body.if_exists === 'do_nothing') return toApiThread(existing);
        throw conflict(`Thread ${threadId} already exists. Send "if_exists": "do_nothing" to get the existing thread instead.`);
      }
    }
    const thread = await store.createThread({ threadId, tenantId, metadata: body.metadata ?? {} });
    return toApiThread(thread);
  });

  app.post('/threads/search', async (request) => {
    const body = parseRequest(SearchBody, request.body, 'body');
    const tenantId = request.tenantId;
    const limit = body.limit ?? 10;
    const offset = body.offset ?? 0;
    let threads: ThreadRecord[];
    if (body.ids && body.ids.length > 0) {
      const found = await Promise.all(body.ids.map((id) => store.getThread(tenantId, id)));
      threads = found
        .filter((t): t is ThreadRecord => t !== undefined)
        .filter((t) => (body.status ? t.status === body.status : true))
        .filter((t) => Object.entries(body.metadata ?? {}).every(([k, v]) => JSON.stringify(t.metadata[k]) === JSON.stringify(v)))
        .slice(offset, offset + limit);
    } else {
      threads = await store.searchThreads(tenantId, {
        limit,
        offset,
        ...(body.metadata ? { metadata: body.metadata } : {}),
        ...(body.status ? { status: body.status } : {}),
      });
    }
    if (body.values) {
      const want = Object.entries(body.values);
      threads = threads.filter((t) => want.every(([k, v]) => JSON.stringify(t.values?.[k]) === JSON.stringify(v)));
    }
    return threads.map((t) => project({ ...toApiThread(t) }, body.select));
  });

  app.get('/threads/:thread_id', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    return toApiThread(await requireThread(ctx, request.tenantId, thread_id));
  });

  app.patch('/threads/:thread_id', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const body = parseRequest(PatchBody, request.body, 'body');
    const thread = await requireThread(ctx, request.tenantId, thread_id);
    if (body.metadata) {
      await store.updateThread(request.tenantId, thread_id, { metadata: { ...thread.metadata, ...body.metadata } });
    }
    return toApiThread(await requireThread(ctx, request.tenantId, thread_id));
  });

  app.delete('/threads/:thread_id', async (request, reply) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    await requireThread(ctx, request.tenantId, thread_id);
    await ctx.runs.purgeThreadEvents(request.tenantId, thread_id);
    const deleted = await store.deleteThread(request.tenantId, thread_id);
    if (!deleted) throw notFound(`Thread ${thread_id} not found.`);
    return reply.code(204).send();
  });

  app.get('/threads/:thread_id/state', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    return toApiThreadState(await requireThread(ctx, request.tenantId, thread_id));
  });

  // One state per checkpoint, newest first (without a checkpoint reader: the latest state only).
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

const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  before: z.string().min(1).optional(),
});

const CheckpointParams = z.object({ thread_id: Uuid, checkpoint_id: z.string().min(1).max(200) });

const StateAtBody = z.object({
  checkpoint: z.unknown(),
  subgraphs: z.boolean().nullish(),
  select: z.array(z.string()).nullish(),
});

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

async function stateAt(ctx: RouteContext, tenantId: string, threadId: string, checkpoint: CheckpointRef | null): Promise<unknown> {
  const thread = await requireThread(ctx, tenantId, threadId);
  if (!checkpoint?.checkpoint_id) return toApiThreadState(thread);
  if (!ctx.checkpoints) throw notFound(`Checkpoint ${checkpoint.checkpoint_id} of thread ${threadId} not found: this deployment keeps no checkpoint history.`);
  const state = await ctx.checkpoints.state(tenantId, threadId, checkpoint);
  if (!state) throw notFound(`Checkpoint ${checkpoint.checkpoint_id} of thread ${threadId} not found.`);
  return state;
}
