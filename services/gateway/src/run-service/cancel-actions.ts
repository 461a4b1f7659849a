/** LangGraph's cancel actions over one run and over many (`POST /runs/cancel`). */
import type { RunRecord, Store } from '@agentloop/store';
import { conflict, notFound } from '../errors.js';
import { isTerminal, type CancelSelection, type RunCancellation } from './cancellation.js';
import type { RunRemoval } from './rollback.js';

/** LangGraph's cancel `action`. */
export type CancelAction = 'interrupt' | 'rollback';

export interface CancelActionDeps {
  store: Pick<Store, 'getRun'>;
  cancellation: RunCancellation;
  removal: RunRemoval;
}

/**
 * Cancels a run with LangGraph's `action`: `interrupt` (it stops and keeps its checkpoints), or
 * `rollback` (it stops, then it and its checkpoints are deleted). 409 when it had already ended.
 * Returns the record after an interrupt; undefined after a rollback (the run is gone).
 */
export async function cancelWithAction(d: CancelActionDeps, tenantId: string, run: RunRecord, action: CancelAction): Promise<RunRecord | undefined> {
  if (isTerminal(run.status)) {
    throw conflict(`Run ${run.runId} already finished with status ${run.status}; there is nothing to cancel.`);
  }
  if (action === 'rollback') {
    await d.removal.rollback(tenantId, run, 'cancelled by the client (rollback)');
    return undefined;
  }
  const after = await d.cancellation.cancel(tenantId, run);
  if (after.status !== 'interrupted') {
    throw conflict(`Run ${run.runId} already finished with status ${after.status}; there is nothing to cancel.`);
  }
  return after;
}

/**
 * `POST /runs/cancel`: cancels every selected run of the tenant that is still pending or running
 * (ended ones are left as they are). Listed runs that do not exist for the tenant: 404, nothing
 * cancelled. With rollback, the runs of one thread go newest first.
 */
export async function cancelMany(d: CancelActionDeps, tenantId: string, selection: CancelSelection, action: CancelAction): Promise<number> {
  const { runs, missing } = await d.cancellation.select(tenantId, selection);
  if (missing.length > 0) throw notFound(`Run ${missing.join(', ')} not found${'threadId' in selection ? ` on thread ${selection.threadId}` : ''}.`);
  const active = runs.filter((r) => !isTerminal(r.status)).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  for (const run of active) {
    // Re-read: cancelling one run may have ended or promoted another of the list.
    const current = await d.store.getRun(tenantId, run.runId);
    if (!current || isTerminal(current.status)) continue;
    if (action === 'rollback') await d.removal.rollback(tenantId, current, 'cancelled by the client (rollback)');
    else await d.cancellation.cancel(tenantId, current);
  }
  return active.length;
}
