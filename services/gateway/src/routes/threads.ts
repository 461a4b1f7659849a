import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ThreadRecord } from '@agentloop/store';
import { newOrderedId } from '@agentloop/core';
import type { RouteContext } from '../context.js';
import { conflict, invalid, notFound } from '../errors.js';
import { toApiThread } from '../serialize.js';
import { JsonObjectSchema, MetadataSchema, parseRequest, ThreadParams, Uuid } from '../validation.js';
import { registerThreadCopyRoutes } from './thread-copy.js';
import { registerThreadStateRoutes, requireCheckpoints, syncThreadRecord } from './thread-state.js';
import { registerThreadStreamRoutes } from './thread-stream.js';

const ThreadStatusSchema = z.enum(['idle', 'busy', 'interrupted', 'error']);

const CreateBody = z.object({
  thread_id: Uuid.nullish(),
  metadata: MetadataSchema.nullish(),
  if_exists: z.enum(['raise', 'do_nothing']).nullish(),
  // LangGraph: the new thread's state, built by updates applied superstep after superstep.
  supersteps: z
    .array(
      z.object({
        updates: z
          .array(
            z.object({
              values: z.unknown().optional(),
              command: z.object({ update: z.unknown().optional() }).strict().nullish(),
              as_node: z.string().min(1).max(200),
            }),
          )
          .min(1),
      }),
    )
    .max(100)
    .nullish(),
  ttl: z.unknown().optional(),
});

const PatchBody = z.object({
  metadata: MetadataSchema.nullish(),
  ttl: z.unknown().optional(),
});

const CountBody = z.object({
  metadata: MetadataSchema.nullish(),
  values: JsonObjectSchema.nullish(),
  status: ThreadStatusSchema.nullish(),
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

/** The thread, or a 404 naming it. Tenant-scoped: another tenant's thread is "not found" too. */
export async function requireThread(ctx: RouteContext, tenantId: string, threadId: string): Promise<ThreadRecord> {
  const thread = await ctx.store.getThread(tenantId, threadId);
  if (!thread) throw notFound(`Thread ${threadId} not found.`);
  return thread;
}

/** Deletes a thread with its runs' event logs, checkpoints and workspace (thread-deletion.ts); false when it was gone. */
export async function deleteThread(ctx: RouteContext, tenantId: string, threadId: string): Promise<boolean> {
  await ctx.runs.purgeThreadEvents(tenantId, threadId);
  return ctx.store.deleteThread(tenantId, threadId);
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
    const threadId = body.thread_id ?? newOrderedId();
    if (body.thread_id) {
      const existing = await store.getThread(tenantId, threadId);
      if (existing) {
        if (body.if_exists === 'do_nothing') return toApiThread(existing);
        throw conflict(`Thread ${threadId} already exists. Send "if_exists": "do_nothing" to get the existing thread instead.`);
      }
    }
    if (!body.supersteps || body.supersteps.length === 0) return toApiThread(await store.createThread({ threadId, tenantId, metadata: body.metadata ?? {} }));
    // The checkpoints first: an invalid update is refused before the thread exists.
    const steps = body.supersteps.map((s) => s.updates.map((u) => ({ values: u.command?.update ?? u.values, asNode: u.as_node })));
    const built = await requireCheckpoints(ctx, 'Creating a thread with supersteps').applySupersteps(tenantId, threadId, steps);
    await store.createThread({ threadId, tenantId, metadata: body.metadata ?? {} });
    await syncThreadRecord(ctx, tenantId, threadId, built.state);
    return toApiThread(await requireThread(ctx, tenantId, threadId));
  });

  // The number of threads a search with the same filters would find (counted in SQL).
  app.post('/threads/count', async (request) => {
    const body = parseRequest(CountBody, request.body ?? {}, 'body');
    for (const [field, obj] of [
      ['metadata', body.metadata],
      ['values', body.values],
    ] as const) {
      for (const key of Object.keys(obj ?? {}))
        if (/["\\]/.test(key)) throw invalid(`body.${field}.${key}`, 'a filter key may not contain a quote or a backslash');
    }
    return store.countThreads(request.tenantId, {
      ...(body.metadata ? { metadata: body.metadata } : {}),
      ...(body.values ? { values: body.values } : {}),
      ...(body.status ? { status: body.status } : {}),
    });
  });

  app.post('/threads/search', async (request) => {
    const body = parseRequest(SearchBody, request.body, 'body');
    const tenantId = request.tenantId;
    // Filters, order and page all in SQL, so offset/limit count matching threads.
    const threads = await store.searchThreads(tenantId, {
      limit: body.limit ?? 10,
      offset: body.offset ?? 0,
      ...(body.ids && body.ids.length > 0 ? { ids: body.ids } : {}),
      ...(body.metadata ? { metadata: body.metadata } : {}),
      ...(body.values ? { values: body.values } : {}),
      ...(body.status ? { status: body.status } : {}),
      // state_updated_at: the thread record's updated_at is written with its state.
      ...(body.sort_by ? { sortBy: body.sort_by === 'state_updated_at' ? 'updated_at' : body.sort_by } : {}),
      ...(body.sort_order ? { sortOrder: body.sort_order } : {}),
    });
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
    if (!(await deleteThread(ctx, request.tenantId, thread_id))) throw notFound(`Thread ${thread_id} not found.`);
    return reply.code(204).send();
  });

  registerThreadCopyRoutes(app, ctx);
  registerThreadStateRoutes(app, ctx);
  registerThreadStreamRoutes(app, ctx);
}

export { checkpointRef } from './thread-state.js';
