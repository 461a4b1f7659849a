import { fromBinary, RunJobSchema } from '@agentloop/proto';
import type { Job } from '@agentloop/queue';
import { DeferJobError, ReleaseJobError, UnrecoverableJobError } from '@agentloop/queue';
import { errorMessage, silentLogger, type Logger } from '@agentloop/core';
import type { RunExecutor } from '../run-executor.js';
import { deferDelayMs, TenantSlots } from '../tenant-slots.js';
import type { StepGate, StepLease } from '../step-gate.js';

/**
 * Handler of the `runs` queue: decodes the proto RunJob and executes it.
 * Logs `job started` / `job ended` at debug level with `active`, the jobs this
 * worker is executing at that moment (what a worker slot is: a suspended run
 * waiting on delegated agents holds none). A job whose tenant already has `slots`' cap of runs
 * executing here is deferred (DeferJobError), so other tenants' jobs go first. With a `gate`, the
 * run then waits for a slot of the worker's CPU gate (step-gate.ts) and holds it except while it
 * waits on its model.
 */
export function runJobHandler(executor: RunExecutor, logger: Logger = silentLogger(), slots: TenantSlots = new TenantSlots(0), gate?: StepGate) {
  let active = 0;
  return async (job: Job, signal: AbortSignal): Promise<void> => {
    let decoded;
    try {
      decoded = fromBinary(RunJobSchema, job.payload);
    } catch (err) {
      throw new UnrecoverableJobError(`runs job ${job.id} is not a valid RunJob: ${(err as Error).message}`);
    }
    if (!slots.tryTake(decoded.tenantId)) {
      logger.debug(
        { job_id: job.id, run_id: decoded.runId, tenant: decoded.tenantId, running: slots.count(decoded.tenantId) },
        'tenant at its concurrency cap; job deferred',
      );
      throw new DeferJobError(`tenant ${decoded.tenantId} is at its concurrency cap`, deferDelayMs());
    }
    let lease: StepLease | undefined;
    try {
      lease = await gate?.enter(decoded.tenantId, signal);
    } catch (err) {
      slots.release(decoded.tenantId);
      throw err;
    }
    active++;
    const fields = { job_id: job.id, run_id: decoded.runId, attempt: job.attemptsMade };
    logger.debug({ ...fields, active }, 'job started');
    try {
      await executor.execute(decoded, job.attemptsMade, signal, job.attempts, lease);
    } catch (err) {
      // The queue will not try again: make sure the run does not stay `running` forever.
      const last = job.attemptsMade + 1 >= job.attempts;
      if (last && !signal.aborted && !(err instanceof ReleaseJobError)) {
        await executor.abandon(decoded, err).catch((e: unknown) => logger.error({ ...fields, err: errorMessage(e) }, 'could not record the abandoned run'));
      }
      throw err;
    } finally {
      lease?.release();
      slots.release(decoded.tenantId);
      active--;
      logger.debug({ ...fields, active }, 'job ended');
    }
  };
}
