/**
 * From how an execution stopped to how the run ends: a failure is classified (run-outcome.ts)
 * and either handed back to the queue (thrown: the worker stops or drains, the infrastructure is
 * down for now) or becomes an outcome that ends the run; an ending outcome becomes the status,
 * error and flags of the lifecycle's `end` transition. Every case is handled by one exhaustive
 * `switch`, so a new outcome kind fails to compile until it is handled here.
 */
import { ReleaseJobError } from '@agentloop/queue';
import { assertNever, errorMessage, isTransientInfraError, type Logger } from '@agentloop/core';
import type { RunErrorInfo, TerminalRunStatus } from '@agentloop/store';
import { classifyFailure, terminalStatusOf, type FailureContext, type RunOutcome } from '../run-outcome.js';

/** The outcomes that end the run here (the others are thrown back to the queue or suspend it). */
export type EndingOutcome = Extract<RunOutcome, { kind: 'success' | 'waits_for_human' | 'cancelled' | 'timeout' | 'failed' }>;

/**
 * Classifies what the graph threw. Throws when the run must not end here: the worker is stopping
 * (the error itself), draining (ReleaseJobError: the job goes back to the queue without using an
 * attempt) or the infrastructure is unreachable with attempts left (the error: the queue retries).
 */
export function failureOutcome(err: unknown, c: Omit<FailureContext, 'transient'>, runId: string, log: Logger): EndingOutcome {
  const outcome = classifyFailure(err, { ...c, transient: isTransientInfraError(err) });
  switch (outcome.kind) {
    case 'worker_stopping':
      // Shutdown: leave the run resumable from its last checkpoint; the queue hands it to another worker.
      log.warn('worker stopping; run left resumable');
      throw err;
    case 'handed_back':
      // Graceful shutdown: the step in flight finished and was checkpointed; another worker resumes from there.
      log.info({ err: errorMessage(err) }, 'worker draining: run handed back after its last checkpoint');
      throw new ReleaseJobError(`run ${runId} handed back by a draining worker`, { cause: err });
    case 'retry_later':
      // The store, the checkpoints or the event stream are unreachable for now: the queue retries
      // the job (with backoff) and the next attempt resumes from the last checkpoint.
      log.warn({ err: errorMessage(err), attempt: c.attempt + 1, attempts: c.attempts }, 'infrastructure unavailable; run left resumable for a retry');
      throw err;
    case 'cancelled':
      // The client cancelled (the record is already `interrupted`): stop where the run is.
      log.info({ reason: outcome.reason }, 'run cancelled');
      return outcome;
    case 'timeout':
    case 'failed':
      log.error({ err: outcome.error }, 'run failed');
      return outcome;
    case 'success':
    case 'waits_for_human':
    case 'suspended':
      // classifyFailure never says a throwing graph succeeded or suspended.
      throw new Error(`internal: a failure classified as ${outcome.kind}`, { cause: err });
    default:
      return assertNever(outcome, 'run outcome');
  }
}

/** What the lifecycle's `end` transition records for an ending outcome. */
export interface RunEnd {
  status: TerminalRunStatus;
  error: RunErrorInfo | undefined;
  /** The thread waits for a human (`interrupted`) although the run succeeded. */
  waitsForHuman: boolean;
  /** How this execution ended, for metrics and the span: the status, or `interrupted` when it waits for a human. */
  reported: string;
}

export function runEndOf(outcome: EndingOutcome): RunEnd {
  const status = terminalStatusOf(outcome);
  if (status === undefined) throw new Error(`internal: run outcome ${outcome.kind} reached the end of the run`);
  const error = outcome.kind === 'timeout' || outcome.kind === 'failed' ? outcome.error : undefined;
  const waitsForHuman = outcome.kind === 'waits_for_human';
  return { status, error, waitsForHuman, reported: waitsForHuman ? 'interrupted' : status };
}
