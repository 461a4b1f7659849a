/**
 * Ends for runs that never recorded an outcome themselves: a job that failed for good before the
 * run could end (abandon), and a queue job that is poison or gone (dead-letter, by the sweeper).
 * Both publish the `error` event first, then one lifecycle transition whose `run.ended`
 * subscribers send `end`, the webhook and a delegation parent's notice. A run that already ended
 * is left alone.
 */
import { fromBinary, RunJobSchema, type RunJob } from '@agentloop/proto';
import type { RunEventStream } from '@agentloop/bus';
import { TERMINAL_RUN_STATUSES, type RunLifecycle, type RunRecord, type Store } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import type { EndContext } from '../run-end.js';

export interface DeadLetterDeps {
  store: Pick<Store, 'getRun'>;
  events: Pick<RunEventStream, 'publish'>;
  lifecycle: Pick<RunLifecycle<EndContext>, 'end' | 'replayEnd' | 'deadLetter' | 'storedJob'>;
  logger: Logger;
  /** Attempts and backoff of a re-driven job (the delegation job settings; default 3 × 1000 ms). */
  redrive?: { attempts?: number; backoffMs?: number } | undefined;
}

/**
 * The job failed for good without the run recording an outcome (e.g. the store or the event
 * stream was unreachable before the run could start, on its last attempt): record the run as
 * failed and announce it — `end`, webhook, and a delegated run's parent, which would otherwise
 * stay suspended. Best effort; a run that already ended is left alone.
 */
export async function abandonRun(deps: DeadLetterDeps, job: RunJob, cause: unknown): Promise<void> {
  const log = deps.logger.child({ run_id: job.runId, thread_id: job.threadId, tenant: job.tenantId });
  const existing = await deps.store.getRun(job.tenantId, job.runId);
  if (!existing || TERMINAL_RUN_STATUSES.includes(existing.status)) return;
  const error = { error: 'Error', message: `The run could not be executed: ${errorMessage(cause)}` };
  log.error({ err: error.message }, 'run abandoned after its last attempt');
  await deps.events.publish(job.runId, job.threadId, 'error', error);
  const ended = await deps.lifecycle.end({ tenantId: job.tenantId, runId: job.runId, status: 'error', error, cause: 'abandoned' }, { job, model: null });
  if (ended.kind === 'already_ended') await deps.lifecycle.replayEnd(ended.run, { job, model: null }, null);
}

/**
 * The run's queue job failed for good at queue level (a poison run: its worker died more than
 * RUN_MAX_STALLED times) or is gone, without the run recording an outcome (the sweeper):
 * dead-letter it with the reason — an `error` event, then the lifecycle's `deadLetter`
 * transition, whose `run.ended` subscribers send the webhook and notify a delegation parent.
 * `payload` is the job as the queue still has it; else the job stored with the run is used.
 * Returns whether this call ended the run.
 */
export async function deadLetterRun(deps: DeadLetterDeps, run: RunRecord, reason: string, payload: Uint8Array | undefined): Promise<boolean> {
  const log = deps.logger.child({ run_id: run.runId, thread_id: run.threadId, tenant: run.tenantId });
  const stored = await deps.lifecycle.storedJob(run.tenantId, run.runId);
  let job: RunJob | undefined;
  for (const bytes of [stored?.payload, payload]) {
    if (job || !bytes) continue;
    try {
      job = fromBinary(RunJobSchema, bytes);
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'unreadable run job');
    }
  }
  // Keep the queue's copy with the run when none is stored, so the dead-lettered run can be re-driven.
  const keep = !stored && payload ? { payload, attempts: deps.redrive?.attempts ?? 3, backoffMs: deps.redrive?.backoffMs ?? 1000 } : undefined;
  const current = await deps.store.getRun(run.tenantId, run.runId);
  if (!current || TERMINAL_RUN_STATUSES.includes(current.status)) return false;
  log.error({ reason }, 'run dead-lettered');
  // Before the transition, whose `run.ended` subscriber publishes `end`.
  await deps.events
    .publish(run.runId, run.threadId, 'error', { error: 'DeadLetterError', message: `The run was dead-lettered: ${reason}` })
    .catch(() => undefined);
  const ended = await deps.lifecycle.deadLetter({ tenantId: run.tenantId, runId: run.runId, reason, job: keep }, job ? { job, model: null } : undefined);
  return ended.kind === 'ended';
}
