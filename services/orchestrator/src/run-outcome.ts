import { assertNever, errorMessage } from '@agentloop/core';
import type { RunErrorInfo, TerminalRunStatus } from '@agentloop/store';

/**
 * How one execution of a run ended — every case, so the executor's handling is one exhaustive
 * `switch` (ending in `assertNever`) instead of a chain of `catch` branches.
 */
export type RunOutcome =
  /** The graph ran to its end. */
  | { kind: 'success' }
  /** The graph stopped to wait for a human (tool approval, ask_human): the thread becomes `interrupted`. */
  | { kind: 'waits_for_human' }
  /** The graph is suspended on delegated agents: the run stays `running` without a worker slot. */
  | { kind: 'suspended' }
  /** A client cancelled the run (its record already says `interrupted`). */
  | { kind: 'cancelled'; reason: string }
  | { kind: 'timeout'; error: RunErrorInfo }
  /** The worker is stopping: the run stays resumable from its last checkpoint; the queue hands it to another worker. */
  | { kind: 'worker_stopping'; cause: unknown }
  /** Graceful drain: the step in flight was checkpointed; the job is handed back. */
  | { kind: 'handed_back'; cause: unknown }
  /** The store, checkpoints or event stream are unreachable for now: the queue retries the job. */
  | { kind: 'retry_later'; cause: unknown }
  | { kind: 'failed'; error: RunErrorInfo };

export interface FailureContext {
  cancel: AbortSignal;
  timeout: AbortSignal;
  timeoutMs: number;
  workerSignal: AbortSignal;
  draining: boolean;
  /** Whether the error says the infrastructure is unreachable for now (`isTransientInfraError`). */
  transient: boolean;
  /** Earlier attempts of this job, and how many the queue allows. */
  attempt: number;
  attempts: number;
}

/** Classifies what the graph threw, in priority order (a cancel wins over a timeout, and so on). */
export function classifyFailure(err: unknown, c: FailureContext): RunOutcome {
  if (c.cancel.aborted) return { kind: 'cancelled', reason: errorMessage(c.cancel.reason) };
  if (c.timeout.aborted) return { kind: 'timeout', error: { error: 'TimeoutError', message: `The run exceeded its time limit of ${c.timeoutMs} ms.` } };
  if (c.workerSignal.aborted) return { kind: 'worker_stopping', cause: err };
  if (c.draining) return { kind: 'handed_back', cause: err };
  if (c.transient && c.attempt + 1 < c.attempts) return { kind: 'retry_later', cause: err };
  return { kind: 'failed', error: { error: err instanceof Error ? err.name : 'Error', message: errorMessage(err) } };
}

/** The terminal status an outcome records, or undefined when the run does not end here. */
export function terminalStatusOf(o: RunOutcome): TerminalRunStatus | undefined {
  switch (o.kind) {
    case 'success':
    case 'waits_for_human':
      return 'success';
    case 'cancelled':
      return 'interrupted';
    case 'timeout':
      return 'timeout';
    case 'failed':
      return 'error';
    case 'suspended':
    case 'worker_stopping':
    case 'handed_back':
    case 'retry_later':
      return undefined;
    default:
      return assertNever(o, 'run outcome');
  }
}
