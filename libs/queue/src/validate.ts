import { InvalidArgumentError } from '@agentloop/core';
import type { EnqueueOptions, WorkerOptions } from './types.js';

/** Both implementations accept the same job ids: BullMQ rejects integers and ':' in custom ids. */
export function assertJobId(jobId: string): void {
  if (jobId === '' || `${parseInt(jobId, 10)}` === jobId || jobId.includes(':')) {
    throw new InvalidArgumentError(`Invalid job id "${jobId}": use a non-numeric id without ':' (a UUID works)`);
  }
}

export function assertQueueName(name: string): void {
  if (name === '' || name.includes(':')) throw new InvalidArgumentError(`Invalid queue name "${name}": it must be non-empty and contain no ':'`);
}

export interface ResolvedEnqueue {
  attempts: number;
  backoffMs: number;
  delayMs: number;
}

export function resolveEnqueue(opts: EnqueueOptions): ResolvedEnqueue {
  assertJobId(opts.jobId);
  const attempts = opts.attempts ?? 1;
  const backoffMs = opts.backoffMs ?? 1_000;
  const delayMs = opts.delayMs ?? 0;
  if (!Number.isInteger(attempts) || attempts < 1)
    throw new InvalidArgumentError(`Invalid attempts ${attempts} for job ${opts.jobId}: it must be an integer >= 1`);
  if (!(backoffMs >= 0)) throw new InvalidArgumentError(`Invalid backoffMs ${backoffMs} for job ${opts.jobId}: it must be >= 0`);
  if (!(delayMs >= 0)) throw new InvalidArgumentError(`Invalid delayMs ${delayMs} for job ${opts.jobId}: it must be >= 0`);
  return { attempts, backoffMs, delayMs };
}

export function assertWorkerOptions(opts: WorkerOptions): void {
  if (!Number.isInteger(opts.concurrency) || opts.concurrency < 1) {
    throw new InvalidArgumentError(`Invalid worker concurrency ${opts.concurrency}: it must be an integer >= 1`);
  }
}

/** Exponential backoff after the n-th failed attempt (1-based): base * 2^(n-1). */
export const backoffDelay = (baseMs: number, failedAttempts: number): number => baseMs * 2 ** (failedAttempts - 1);

/** Default time that completed and failed jobs are kept (and their ids deduplicated). */
export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
/** Default grace for `QueueWorker.close()`. */
export const DEFAULT_CLOSE_GRACE_MS = 30_000;

/** True when `p` settles within ms (its outcome is not inspected). */
export async function settledWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
