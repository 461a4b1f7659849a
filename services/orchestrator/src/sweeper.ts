import { fromBinary, RunJobSchema } from '@agentloop/proto';
import type { JobQueue } from '@agentloop/queue';
import type { RunRecord, Store } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import type { RunExecutor } from './run-executor.js';

/**
 * Runs the queue gave up on, or never got, without our handler knowing:
 * - a job BullMQ fails itself (stalled more than RUN_MAX_STALLED times, i.e. its workers kept
 *   dying) leaves its run `running` (or `pending`, when it failed before the run was taken) and,
 *   for a delegated agent, its parent suspended: such runs untouched for `olderThanMs` whose
 *   `runs` job (job id = run id) is `failed` are ended as `error` with the usual announcements;
 * - a pending run whose job was lost between its transition's commit and the enqueue (the process
 *   died in between), or a deferred run whose thread no run holds, is enqueued
 *   (`RunLifecycle.recoverPending`).
 * Safe on several replicas at once (transitions are guarded; announcements and enqueues are
 * idempotent). Returns the run ids it ended or enqueued.
 */
export async function sweepOrphanedRuns(deps: {
  store: Store;
  runs: JobQueue;
  executor: Pick<RunExecutor, 'abandon' | 'lifecycle'>;
  logger: Logger;
  olderThanMs: number;
  limit?: number;
}): Promise<string[]> {
  const before = new Date(Date.now() - deps.olderThanMs);
  const limit = deps.limit ?? 100;
  const stale: RunRecord[] = [...(await deps.store.listRunsInStatus('running', before, limit)), ...(await deps.store.listRunsInStatus('pending', before, limit))];
  const swept: string[] = [];
  for (const run of stale) {
    if (run.deferred || (await deps.runs.getState(run.runId)) !== 'failed') continue;
    const payload = await deps.runs.getPayload(run.runId);
    if (!payload) continue;
    try {
      const job = fromBinary(RunJobSchema, payload);
      await deps.executor.abandon(job, new Error('its job failed in the queue (its workers stopped repeatedly while running it)'));
      swept.push(run.runId);
      deps.logger.warn({ run_id: run.runId, tenant: run.tenantId }, 'orphaned run ended');
    } catch (err) {
      deps.logger.error({ run_id: run.runId, err: errorMessage(err) }, 'orphaned run could not be ended');
    }
  }
  for (const runId of await deps.executor.lifecycle.recoverPending(before, limit)) {
    deps.logger.warn({ run_id: runId }, 'pending run without a queued job enqueued');
    swept.push(runId);
  }
  return swept;
}
