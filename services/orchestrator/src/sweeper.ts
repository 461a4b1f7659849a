import { fromBinary, RunJobSchema } from '@agentloop/proto';
import type { JobQueue } from '@agentloop/queue';
import type { Store } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import type { RunExecutor } from './run-executor.js';

/**
 * Runs the queue gave up on without our handler knowing: a job BullMQ fails itself (stalled more
 * than RUN_MAX_STALLED times, i.e. its workers kept dying) leaves its run `running` and, for a
 * delegated agent, its parent suspended. Finds `running` runs untouched for `olderThanMs` whose
 * `runs` job (job id = run id) is `failed`, and ends them as `error` with the usual announcements.
 * Safe on several replicas at once (the status change is conditional; announcements are idempotent).
 * Returns the run ids it ended.
 */
export async function sweepOrphanedRuns(deps: { store: Store; runs: JobQueue; executor: Pick<RunExecutor, 'abandon'>; logger: Logger; olderThanMs: number; limit?: number }): Promise<string[]> {
  const stale = await deps.store.listRunsInStatus('running', new Date(Date.now() - deps.olderThanMs), deps.limit ?? 100);
  const ended: string[] = [];
  for (const run of stale) {
    if ((await deps.runs.getState(run.runId)) !== 'failed') continue;
    const payload = await deps.runs.getPayload(run.runId);
    if (!payload) continue;
    try {
      const job = fromBinary(RunJobSchema, payload);
      await deps.executor.abandon(job, new Error('its job failed in the queue (its workers stopped repeatedly while running it)'));
      ended.push(run.runId);
      deps.logger.warn({ run_id: run.runId, tenant: run.tenantId }, 'orphaned run ended');
    } catch (err) {
      deps.logger.error({ run_id: run.runId, err: errorMessage(err) }, 'orphaned run could not be ended');
    }
  }
  return ended;
}
