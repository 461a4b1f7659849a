import type { JobQueue, JobState } from '@agentloop/queue';
import { runJobId, type RunRecord, type Store } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import type { RunExecutor } from './run-executor.js';
import { childRunId, resumeJobId } from './delegation.js';

/**
 * Runs the queue gave up on, or lost, without our handler knowing — every run reaches an end:
 * - a run (pending or running) whose current job (`runJobId`: the run id, or its latest redrive)
 *   is `failed`: the queue failed it itself (its worker died more than RUN_MAX_STALLED times — a
 *   poison run), since a handler that fails its last attempt ends the run first. It is
 *   dead-lettered with the reason (`RunExecutor.deadLetter`);
 * - a `running` run whose job is `unknown` (gone from the queue: removed, or the queue's data
 *   lost) is orphaned: dead-lettered too, from the run record (its job stored with the run);
 * - a run that delegated: while a child's answer is missing it is suspended on purpose (its own
 *   job completed) and left alone — its children's ends wake it, whichever way they end; once
 *   every answer is in, its current job is its latest resume job, judged as above;
 * - a pending run whose job was lost between its transition's commit and the enqueue (the process
 *   died in between), or a deferred run whose thread no run holds, is enqueued
 *   (`RunLifecycle.recoverPending`).
 * Only runs untouched for `olderThanMs`. Safe on several replicas at once (transitions are
 * guarded; announcements and enqueues are idempotent). Returns the run ids it ended or enqueued.
 */
export async function sweepOrphanedRuns(deps: {
  store: Store;
  runs: JobQueue;
  executor: Pick<RunExecutor, 'deadLetter' | 'lifecycle'>;
  logger: Logger;
  olderThanMs: number;
  limit?: number;
}): Promise<string[]> {
  // Untouched for at least olderThanMs: updated at or before now − olderThanMs (the store's bound is
  // exclusive, and milliseconds are its resolution — a run updated this very millisecond counts for 0).
  const before = new Date(Date.now() - deps.olderThanMs + 1);
  const limit = deps.limit ?? 100;
  const stale: RunRecord[] = [
    ...(await deps.store.listRunsInStatus('running', before, limit)),
    ...(await deps.store.listRunsInStatus('pending', before, limit)),
  ];
  const swept: string[] = [];
  for (const run of stale) {
    if (run.deferred) continue;
    try {
      const verdict = await judge(deps, run);
      if (!verdict) continue;
      const payload = await deps.runs.getPayload(verdict.jobId).catch(() => undefined);
      if (await deps.executor.deadLetter(run, verdict.reason, payload)) {
        swept.push(run.runId);
        deps.logger.warn({ run_id: run.runId, tenant: run.tenantId, job_id: verdict.jobId, reason: verdict.reason }, 'orphaned run dead-lettered');
      }
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

const LIVE: ReadonlySet<JobState> = new Set(['waiting', 'delayed', 'active']);

/** Why a run is orphaned and which job says so; undefined when it is not (or may not be). */
async function judge(deps: { store: Store; runs: JobQueue }, run: RunRecord): Promise<{ jobId: string; reason: string } | undefined> {
  const effects = (await deps.store.listToolEffects(run.tenantId, run.runId)).filter((e) => e.toolName === 'delegate_task');
  let jobIds = [runJobId(run)];
  if (effects.length > 0 && run.status === 'running') {
    // Suspended on its children: their ends (any path, the dead letter included) wake it.
    if (effects.some((e) => e.state !== 'completed')) return undefined;
    const steps = new Set<string>();
    for (const e of effects) {
      const child = await deps.store.getRun(run.tenantId, childRunId(run.runId, e.toolCallId));
      const id = child?.metadata.delegation_id;
      if (typeof id === 'string') steps.add(id);
    }
    jobIds = [runJobId(run), ...[...steps].map((id) => resumeJobId(run.runId, id))];
  }
  const states = await Promise.all(jobIds.map(async (jobId) => ({ jobId, state: await deps.runs.getState(jobId) })));
  if (states.some((s) => LIVE.has(s.state))) return undefined;
  const failed = states.find((s) => s.state === 'failed');
  if (failed) {
    return {
      jobId: failed.jobId,
      reason: `its queue job ${failed.jobId} failed without the run recording an outcome (its worker stopped while running it more often than RUN_MAX_STALLED allows)`,
    };
  }
  // A run that delegated completes its own job when it suspends: only its resume jobs tell.
  const current = effects.length > 0 ? states.slice(1) : states;
  if (run.status === 'running' && current.length > 0 && current.every((s) => s.state === 'unknown')) {
    return { jobId: current[0]!.jobId, reason: `its queue job ${current[0]!.jobId} is gone while the run was running` };
  }
  return undefined;
}
