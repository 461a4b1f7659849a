/**
 * EMBEDDED_THREADS=orchestrator:N (issue 9, bench/throughput/README.md "Several orchestrator
 * threads"): N orchestrator threads (orchestrator-thread.ts), each with the services that execute
 * runs and its own SQLite connections, taking runs from the one durable queue as the cluster's
 * orchestrator replicas take them from theirs. The main thread sees them as one:
 *
 * - a run the gateway adds wakes every thread; the first whose event loop is free takes it (a
 *   take is a `BEGIN IMMEDIATE` transaction, so exactly one does) — a thread busy with a step
 *   answers later, which is what spreads the runs over the threads;
 * - bus requests from the gateway go to one thread per queue group (round-robin of the main
 *   thread's MemoryBus, as NATS queue groups spread them over replicas); cancel broadcasts
 *   reach every thread, and the one executing the run aborts it;
 * - every thread's run events land in the main thread's event log.
 *
 * Every thread knows every other thread's queue owner id before any of them takes a job: a
 * thread that did not would count a sibling's active runs as left by a dead previous life of the
 * process and run them a second time.
 */
import { randomUUID } from 'node:crypto';
import { startOrchestratorThread, type OrchestratorThread, type OrchestratorThreadDeps } from './orchestrator-thread.js';
import type { ThreadTelemetryReceiver } from '@agentloop/telemetry';
import type { WakeMessage, WakePort } from './queue-wake.js';

export interface OrchestratorPool {
  threadIds: number[];
  /** Where the main thread's wake-ups go: every thread. */
  port: WakePort;
  /** Each thread's telemetry, received by the main thread's. */
  telemetry: ThreadTelemetryReceiver[];
  /** Rejects when any thread fails; never resolves. */
  failed: Promise<never>;
  /** Stops every thread, each draining its runs, at once. */
  stop(): Promise<void>;
}

export type OrchestratorPoolDeps = Omit<OrchestratorThreadDeps, 'queueOwner' | 'liveQueueOwners'> & {
  threads: number;
  /** The main thread's queue owner id. */
  mainQueueOwner: string;
  /** Starts one thread (tests replace it); default startOrchestratorThread. */
  start?: (d: OrchestratorThreadDeps) => Promise<OrchestratorThread>;
};

export async function startOrchestratorPool(d: OrchestratorPoolDeps): Promise<OrchestratorPool> {
  const { threads: count, mainQueueOwner, start = startOrchestratorThread, ...deps } = d;
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`an orchestrator pool needs at least one thread, not ${count}`);
  const owners = Array.from({ length: count }, () => randomUUID());
  const started = await Promise.allSettled(
    owners.map((queueOwner) => start({ ...deps, queueOwner, liveQueueOwners: [mainQueueOwner, ...owners.filter((o) => o !== queueOwner)] })),
  );
  const threads = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failure = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    // The ones that did start must not keep the process alive (nor take runs) behind a failed start.
    await Promise.allSettled(threads.map((t) => t.stop()));
    throw failure.reason;
  }
  const failed = Promise.race(threads.map((t) => t.failed));
  failed.catch(() => undefined);
  return {
    threadIds: threads.map((t) => t.threadId),
    port: { postMessage: (m: WakeMessage) => threads.forEach((t) => t.port.postMessage(m)) },
    telemetry: threads.map((t) => t.telemetry),
    failed,
    async stop() {
      await Promise.all(threads.map((t) => t.stop()));
    },
  };
}
