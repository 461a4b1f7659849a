/**
 * Cancelling many runs at once (LangGraph's `POST /runs/cancel`, the SDK's `runs.cancelMany`),
 * transport-neutral: HTTP (routes/run-cancel.ts) and gRPC (CancelRuns) parse the same body and
 * call the same run service.
 */
import { z } from 'zod';
import type { CancelSelection, RunService } from './run-service.js';
import { parseRequest, Uuid, type RequestPart } from './validation.js';

export const CancelAction = z.enum(['interrupt', 'rollback']);

/** The runs of one thread by id, or every run in a status (of the tenant, or of one thread). */
const CancelManyBody = z
  .object({
    thread_id: Uuid.nullish(),
    run_ids: z.array(Uuid).min(1, 'list at least one run id').max(1000).nullish(),
    status: z.enum(['pending', 'running', 'all']).nullish(),
  })
  .superRefine((b, issue) => {
    const byIds = b.thread_id !== undefined && b.thread_id !== null;
    if (b.status && b.run_ids) {
      issue.addIssue({ code: 'custom', path: ['status'], message: 'give either status (optionally with thread_id), or thread_id with run_ids, not both' });
    } else if (!b.status && !(byIds && b.run_ids)) {
      issue.addIssue({ code: 'custom', path: byIds ? ['run_ids'] : ['thread_id'], message: 'give thread_id with run_ids, or a status' });
    }
  });

const ActionOf = z.object({ action: CancelAction.optional() });

/**
 * Cancels the runs `body` selects with `action` (in `actionPart`: HTTP's query string, or the
 * body); returns the action taken and how many runs it stopped.
 */
export async function cancelManyRuns(
  runs: RunService,
  tenantId: string,
  body: unknown,
  action: { value: unknown; part: RequestPart },
): Promise<{ action: z.infer<typeof CancelAction>; cancelled: number }> {
  const a = parseRequest(ActionOf, action.value, action.part).action ?? 'interrupt';
  const b = parseRequest(CancelManyBody, body, 'body');
  const selection: CancelSelection = b.status
    ? { status: b.status, ...(b.thread_id ? { threadId: b.thread_id } : {}) }
    : { threadId: b.thread_id as string, runIds: b.run_ids as string[] };
  return { action: a, cancelled: await runs.cancelMany(tenantId, selection, a) };
}
