import { fromBinary, RunJobSchema } from '@agentloop/proto';
import type { Job } from '@agentloop/queue';
import { DeferJobError, ReleaseJobError, UnrecoverableJobError } from '@agentloop/queue';
import { errorMessage, silentLogger, type Logger } from '@agentloop/core';
import type { RunExecutor } from '../run-executor.js';
import { deferDelayMs, parkDelayMs, TenantSlots } from '../tenant-slots.js';
import type { StepGate, StepLease } from '../step-gate.js';

/**
 * Handler of the `runs` queue: decodes the proto RunJob and executes it.
 * Logs `job started` / `job ended` at debug level with `active`, the jobs this
 * worker is executing at that moment (what a worker slot is: a suspended run
 * waiting on delegated agents holds none). A job whose tenant already has `slots`' cap of runs
 * executing here is deferred (DeferJobError), so other tenants' jobs go first; with `parking` (the
 * queue's `wakeParked`) it is parked under its tenant and woken when one of the tenant's runs here
 * ends (tenant-slots.ts). With a `gate`, the run then waits for a slot of the worker's CPU gate
 * (step-gate.ts) and holds it except while it waits on its model.
 */
export function runJobHandler(
  executor: RunExecutor,
  logger: Logger = silentLogger(),
  slots: TenantSlots = new TenantSlots(0),
  gate?: StepGate,
  parking?: { wakeParked(group: string, count: number): Promise<number> },
) {
  const wake = (tenantId: string): void => {
    if (!parking || !slots.hasParked(tenantId)) return;
    void parking.wakeParked(tenantId, 1).then(
      (woken) => woken === 0 && slots.clearParked(tenantId),
      (err: unknown) => logger.warn({ tenant: tenantId, err: errorMessage(err) }, 'could not wake a parked job; it comes back after its park delay'),
    );
  };
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
        { job_id: job.id, run_id: decoded.runId, tenant: decoded.tenantId, running: slots.count(decoded.tenantId), parked: parking !== undefined },
        'tenant at its concurrency cap; job deferred',
      );
      if (!parking) throw new DeferJobError(`tenant ${decoded.tenantId} is at its concurrency cap`, deferDelayMs());
      slots.notePark(decoded.tenantId);
      throw new DeferJobError(`tenant ${decoded.tenantId} is at its concurrency cap`, parkDelayMs(), decoded.tenantId);
    }
    let lease: StepLease | undefined;
    try {
      lease = await gate?.enter(decoded.tenantId, signal);
    } catch (err) {
      slots.release(decoded.tenantId);
      wake(decoded.tenantId);
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
      wake(decoded.tenantId);
      active--;
      logger.debug({ ...fields, active }, 'job ended');
    }
  };
}
