import { z } from 'zod';
import { newOrderedId } from '@agentloop/core';
import { create, DeleteThreadResponseSchema } from '@agentloop/proto';
import type { JsonObject, ThreadRecord } from '@agentloop/store';
import { notFound } from '../../errors.js';
import { JsonObjectSchema, parseRequest, Uuid } from '../../validation.js';
import type { CallScope, GrpcContext } from '../call.js';
import { parseJsonField, toThreadInfo, toThreadState, uuidField, withProtoFieldNames } from '../convert.js';
import type { RequestOf, ResponseOf } from '../definition.js';
import { alreadyExists } from '../../errors.js';

/** The part of HTTP POST /threads' body a CreateThreadRequest carries (routes/threads.ts). */
const CreateThreadBody = z.object({
  thread_id: Uuid.nullish(),
  metadata: JsonObjectSchema.nullish(),
});

/** The thread, or NOT_FOUND naming it. Tenant-scoped: another tenant's thread is "not found" too. */
export async function requireThread(ctx: GrpcContext, tenant: string, threadId: string): Promise<ThreadRecord> {
  const thread = await ctx.store.getThread(tenant, uuidField(threadId, 'thread_id'));
  if (!thread) throw notFound(`Thread ${threadId} not found.`);
  return thread;
}

/** CreateThread, GetThread, DeleteThread, GetThreadState: HTTP's /threads routes over gRPC. */
export function threadHandlers(ctx: GrpcContext) {
  const { store } = ctx;
  return {
    async createThread(req: RequestOf<'createThread'>, { tenant }: CallScope): Promise<ResponseOf<'createThread'>> {
      let body: z.infer<typeof CreateThreadBody>;
      try {
        body = parseRequest(
          CreateThreadBody,
          { thread_id: req.threadId === '' ? undefined : req.threadId, metadata: parseJsonField(req.metadataJson, 'metadata_json') },
          'body',
        );
      } catch (err) {
        throw withProtoFieldNames(err, { thread_id: 'thread_id', metadata: 'metadata_json' });
      }
      const threadId = body.thread_id ?? newOrderedId();
      if (body.thread_id) {
        const existing = await store.getThread(tenant, threadId);
        if (existing) {
          if (req.ifExistsDoNothing) return toThreadInfo(existing);
          throw alreadyExists(`Thread ${threadId} already exists. Set if_exists_do_nothing to get the existing thread instead.`);
        }
      }
      return toThreadInfo(await store.createThread({ threadId, tenantId: tenant, metadata: (body.metadata ?? {}) as JsonObject }));
    },

    async getThread(req: RequestOf<'getThread'>, { tenant }: CallScope): Promise<ResponseOf<'getThread'>> {
      return toThreadInfo(await requireThread(ctx, tenant, req.threadId));
    },

    async deleteThread(req: RequestOf<'deleteThread'>, { tenant }: CallScope): Promise<ResponseOf<'deleteThread'>> {
      await requireThread(ctx, tenant, req.threadId);
      await ctx.runs.purgeThreadEvents(tenant, req.threadId);
      if (!(await store.deleteThread(tenant, req.threadId))) throw notFound(`Thread ${req.threadId} not found.`);
      return create(DeleteThreadResponseSchema, {});
    },

    async getThreadState(req: RequestOf<'getThreadState'>, { tenant }: CallScope): Promise<ResponseOf<'getThreadState'>> {
      return toThreadState(await requireThread(ctx, tenant, req.threadId));
    },
  };
}
