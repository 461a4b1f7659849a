/**
 * Removing runs: `DELETE /threads/{id}/runs/{run_id}` (an ended run's record and event log), and
 * LangGraph's rollback — cancel with `action=rollback`, multitask_strategy "rollback" — which
 * cancels the run, waits for its worker to stop, deletes the checkpoints it wrote and the run
 * itself, and puts the thread record back to the state of its latest remaining checkpoint.
 */
import type { RunEventStream } from '@agentloop/bus';
import type { JsonObject, RunLifecycle, RunRecord, Store } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import type { ThreadCheckpoints } from '../checkpoints.js';
import { conflict, ApiError, notFound } from '../errors.js';
import { isTerminal, type RunCancellation } from './cancellation.js';
import { EventCursor } from './event-cursor.js';

/** Deletes a thread's checkpoints made since a time (the orchestrator's ThreadCheckpointRewinder fits). */
export interface CheckpointRewinder {
  rewind(tenantId: string, threadId: string, since: Date): Promise<number>;
}

/** How long a rollback waits for the worker of a cancelled run to stop writing checkpoints. */
export const WORKER_STOP_WAIT_MS = 30_000;

export interface RollbackDeps {
  store: Store;
  lifecycle: RunLifecycle;
  events: RunEventStream;
  log: Logger;
  cancellation: RunCancellation;
  /** Without it (no checkpoint access), rollback answers 501. */
  rewinder?: CheckpointRewinder | undefined;
  /** The thread's latest state once the run's checkpoints are gone. */
  checkpoints?: ThreadCheckpoints | undefined;
  workerStopWaitMs?: number;
}

export class RunRemoval {
  constructor(private readonly deps: RollbackDeps) {}

  /** `DELETE /threads/{id}/runs/{run_id}`: an ended run's record and event log; 409 while it is pending or running. */
  async delete(tenantId: string, run: RunRecord): Promise<void> {
    const res = await this.deps.lifecycle.deleteRun(tenantId, run.runId);
    if (res.kind === 'missing') throw notFound(`Run ${run.runId} not found on thread ${run.threadId}.`);
    if (res.kind === 'active') {
      throw conflict(`Run ${run.runId} is ${res.run.status}; cancel it first (POST /threads/${run.threadId}/runs/${run.runId}/cancel), then delete it.`);
    }
    await this.purgeEvents(run.runId);
  }

  /**
   * Cancel with rollback: the run stops, then it and every checkpoint it wrote are deleted, so the
   * thread is back to where it was before the run. Only the thread's latest run that ran (a later
   * run built on its checkpoints: 409), and not while runs wait behind it (they would start on
   * what is being rolled back: 409). A run that never started has no checkpoints to delete.
   */
  async rollback(tenantId: string, run: RunRecord, reason: string): Promise<void> {
    const rewinder = this.requireRewinder();
    await this.assertRollbackable(tenantId, run);
    await this.stopAndRemove(tenantId, run, reason, rewinder);
  }

  /** multitask_strategy "rollback": every run in flight on the thread is rolled back (the deferred ones first). */
  async rollbackThread(tenantId: string, threadId: string, reason: string): Promise<void> {
    const rewinder = this.requireRewinder();
    for (const r of await this.deps.cancellation.inflight(tenantId, threadId)) await this.stopAndRemove(tenantId, r, reason, rewinder);
  }

  private requireRewinder(): CheckpointRewinder {
    if (this.deps.rewinder) return this.deps.rewinder;
    throw new ApiError('UNIMPLEMENTED', 'Rollback needs access to the checkpoints, which this gateway was started without; cancel with action "interrupt".');
  }

  private async assertRollbackable(tenantId: string, run: RunRecord): Promise<void> {
    const newest = await this.deps.store.listRuns(tenantId, run.threadId, { limit: 1000 });
    for (const other of newest) {
      if (other.runId === run.runId) break;
      if (other.deferred) {
        throw conflict(`Run ${other.runId} is queued behind run ${run.runId} on thread ${run.threadId}; cancel it first, then roll back run ${run.runId}.`);
      }
      if (other.startedAt) {
        throw conflict(
          `Run ${run.runId} is not the latest run of thread ${run.threadId} (run ${other.runId} ran after it); only the latest run can be rolled back.`,
        );
      }
    }
  }

  private async stopAndRemove(tenantId: string, run: RunRecord, reason: string, rewinder: CheckpointRewinder): Promise<void> {
    const { store, lifecycle } = this.deps;
    const running = run.status === 'running';
    // Subscribed before the cancel: its `end` and the stopping worker's `end` are both seen.
    const cursor = running
      ? new EventCursor(this.deps.events, run.runId, 0, AbortSignal.timeout(this.deps.workerStopWaitMs ?? WORKER_STOP_WAIT_MS))
      : undefined;
    try {
      const after = await this.deps.cancellation.cancel(tenantId, run, reason);
      // The cancel's own `end`, then the worker's once it has stopped writing (or the wait ends).
      if (cursor && after.status === 'interrupted') await waitForEnds(cursor, 2);
    } finally {
      cursor?.close();
    }
    const current = (await store.getRun(tenantId, run.runId)) ?? run;
    if (!isTerminal(current.status)) throw conflict(`Run ${run.runId} is still ${current.status}; try the rollback again.`);
    // Deleted first: a worker that is still finishing finds no record and writes nothing to the thread.
    await lifecycle.deleteRun(tenantId, run.runId);
    if (current.startedAt) {
      const deleted = await rewinder.rewind(tenantId, run.threadId, current.startedAt);
      this.deps.log.info({ run_id: run.runId, thread_id: run.threadId, checkpoints: deleted }, 'run rolled back');
    }
    await this.restoreThread(tenantId, run.threadId);
    await this.purgeEvents(run.runId);
  }

  /** The thread record takes the values and status of its latest remaining checkpoint (none: empty and idle). */
  private async restoreThread(tenantId: string, threadId: string): Promise<void> {
    const state = this.deps.checkpoints ? await this.deps.checkpoints.state(tenantId, threadId, null) : null;
    const { __interrupt__: _marker, ...values } = (state?.values ?? {}) as JsonObject;
    const interrupted = (state?.interrupts.length ?? 0) > 0;
    const restored = await this.deps.lifecycle.restoreThread(tenantId, threadId, {
      status: interrupted ? 'interrupted' : 'idle',
      values: state ? values : null,
    });
    if (!restored) this.deps.log.info({ thread_id: threadId }, 'thread not restored after a rollback: a new run holds it');
  }

  private async purgeEvents(runId: string): Promise<void> {
    await this.deps.events.purge(runId).catch((err: unknown) => this.deps.log.warn({ run_id: runId, err: errorMessage(err) }, 'could not purge run events'));
  }
}

/** Reads until `count` `end` events were seen, the stream closes or the cursor's signal aborts. */
async function waitForEnds(cursor: EventCursor, count: number): Promise<void> {
  let seen = 0;
  for (;;) {
    const ev = await cursor.next();
    if (ev === undefined || ev === 'idle') return;
    if (ev.event === 'end' && ++seen >= count) return;
  }
}
