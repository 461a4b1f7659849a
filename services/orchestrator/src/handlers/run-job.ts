import { fromBinary, RunJobSchema } from '@agentloop/proto';
import type { Job } from '@agentloop/queue';
import { UnrecoverableJobError } from '@agentloop/queue';
import type { RunExecutor } from '../run-executor.js';

/** Handler of the `runs` queue: decodes the proto RunJob and executes it. */
export function runJobHandler(executor: RunExecutor) {
  return async (job: Job, signal: AbortSignal): Promise<void> => {
    let decoded;
    try {
      decoded = fromBinary(RunJobSchema, job.payload);
    } catch (err) {
      throw new UnrecoverableJobError(`runs job ${job.id} is not a valid RunJob: ${(err as Error).message}`);
    }
    await executor.execute(decoded, job.attemptsMade, signal);
  };
}
