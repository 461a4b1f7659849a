/**
 * `POST /threads/{id}/copy` and `POST /threads/prune`, as LangGraph Platform defines them. A copy
 * is a new thread (new id, the source's metadata) holding every checkpoint and pending write of the
 * source, so history, state and forks work on it as on the source. A busy source is copied as far
 * as its checkpoints are committed: each checkpoint is written atomically, so the copy is the
 * source as of some step of its run, never a half-written one.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { newOrderedId } from '@agentloop/core';
import type { RouteContext } from '../context.js';
import { toApiThread } from '../serialize.js';
import { parseRequest, ThreadParams, Uuid } from '../validation.js';
import { deleteThread, requireThread } from './threads.js';
import { requireCheckpoints, syncThreadRecord } from './thread-state.js';

const PruneBody = z.object({
  thread_ids: z.array(Uuid).max(1000),
  strategy: z.enum(['delete', 'keep_latest']).nullish(),
});

export function registerThreadCopyRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.post('/threads/:thread_id/copy', async (request) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const tenantId = request.tenantId;
    const source = await requireThread(ctx, tenantId, thread_id);
    const checkpoints = requireCheckpoints(ctx, 'Copying a thread');
    const copyId = newOrderedId();
    // The checkpoints first, then the record: a failed copy leaves no thread behind, only
    // checkpoints under an id nobody knows.
    const latest = await checkpoints.copy(tenantId, thread_id, copyId);
    await ctx.store.createThread({ threadId: copyId, tenantId, metadata: source.metadata });
    if (latest) await syncThreadRecord(ctx, tenantId, copyId, latest);
    return toApiThread(await requireThread(ctx, tenantId, copyId));
  });

  // {pruned_count}: threads deleted, or cut down to their latest checkpoint. Unknown ids (and
  // another tenant's) are skipped; with keep_latest, so are threads a run holds.
  app.post('/threads/prune', async (request) => {
    const body = parseRequest(PruneBody, request.body, 'body');
    const tenantId = request.tenantId;
    const strategy = body.strategy ?? 'delete';
    const checkpoints = strategy === 'keep_latest' ? requireCheckpoints(ctx, 'Pruning to the latest checkpoint') : undefined;
    let pruned = 0;
    for (const threadId of new Set(body.thread_ids)) {
      const thread = await ctx.store.getThread(tenantId, threadId);
      if (!thread) continue;
      if (!checkpoints) {
        if (await deleteThread(ctx, tenantId, threadId)) pruned++;
        continue;
      }
      // Cutting the history under a running run would delete the checkpoint it resumes from.
      if (thread.activeRunId || thread.status === 'busy') continue;
      await checkpoints.keepLatest(tenantId, threadId);
      pruned++;
    }
    return { pruned_count: pruned };
  });
}
