/**
 * The executor's side of suspending a run while its model thinks (models/model-suspension.ts,
 * docs/adr/0010-suspend-while-the-model-thinks.md): which runs may suspend, and the loop that
 * streams the graph again from its checkpoint once the pending model call has settled. The run
 * keeps its queue job, its cancel switch and its `running` status throughout; what it gives up
 * while it waits is its LangGraph invocation and its CPU slot.
 */
import type { Logger } from '@agentloop/core';
import { ModelCallSuspendedError, ModelSuspension } from '../models/model-suspension.js';
import type { StepLease } from '../step-gate.js';
import type { StoppedGraph, StreamJob } from './stream.js';

/**
 * Stream modes whose events are the same whether the agent step ran once or ran again after a
 * suspension: the step's `updates` are only published when it completes, and the repeated state at
 * the restart is not published again (stream.ts `resumed`). Not in the list: `messages` /
 * `messages-tuple` (the tokens come from callbacks of the graph invocation, which a suspended call
 * no longer has), `events`, `debug`, `tasks`, `checkpoints` (they would show the step start twice).
 */
const SUSPENDABLE_MODES = new Set(['values', 'updates', 'custom']);

/**
 * Whether this execution may suspend while its model thinks: not a replay (its model answers at
 * once anyway), no interrupt_before / interrupt_after (a restart at the agent step would stop there
 * again), and only stream modes a restart does not change.
 */
export function suspendable(job: StreamJob, graceMs: number, replay: boolean): boolean {
  if (graceMs <= 0 || replay) return false;
  if ((job.interruptBefore?.length ?? 0) > 0 || (job.interruptAfter?.length ?? 0) > 0) return false;
  return (job.streamMode ?? []).every((m) => SUSPENDABLE_MODES.has(m));
}

/** Runs of this process suspended on their model right now (a gauge for tests and logs). */
export class SuspendedRuns {
  private n = 0;
  get count(): number {
    return this.n;
  }
  /** @internal */
  add(d: 1 | -1): void {
    this.n += d;
  }
}

export interface SuspendDeps {
  suspension: ModelSuspension | undefined;
  /** The run's signal (cancel, timeout, worker stopping): it ends the wait. */
  signal: AbortSignal;
  lease?: Pick<StepLease, 'idle'> | undefined;
  /** Resolves when the checkpoint writes of the ended invocation have landed (run/draining-saver.ts). */
  settled: () => Promise<unknown>;
  suspended: SuspendedRuns;
  log: Logger;
}

/**
 * Streams the graph (`stream(false)`), and after each suspension waits — without the CPU slot —
 * for the model call to settle, then streams it again from the checkpoint (`stream(true)`). Throws
 * the run signal's reason when the run is cancelled, times out or its worker stops meanwhile, as
 * the graph would have (run/outcome.ts classifies it).
 */
export async function streamSuspending(stream: (resumed: boolean) => Promise<StoppedGraph>, deps: SuspendDeps): Promise<StoppedGraph> {
  for (let resumed = false; ; resumed = true) {
    try {
      return await stream(resumed);
    } catch (err) {
      const waitingOn = deps.suspension?.waitingOn;
      if (!(err instanceof ModelCallSuspendedError) || !waitingOn) throw err;
      deps.log.debug({ grace_ms: deps.suspension?.graceMs }, 'run suspended while its model thinks');
      deps.suspended.add(1);
      try {
        const wait = (): Promise<void> => settledOrAborted(waitingOn, deps.signal);
        await (deps.lease ? deps.lease.idle(wait) : wait());
      } finally {
        deps.suspended.add(-1);
      }
      deps.signal.throwIfAborted();
      // The next stream reads the thread's head: the writes of the ended invocation land first.
      await deps.settled();
    }
  }
}

function settledOrAborted(p: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    p.then(done, done);
  });
}
