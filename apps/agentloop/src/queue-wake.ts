/**
 * Queue wake-ups between the two threads of embedded mode with EMBEDDED_THREADS=orchestrator.
 * Both threads open the queues' SQLite file, each with its own connection; a SqliteQueue wakes
 * its workers in process when a job is added, so a job added in one thread for workers in the
 * other (a run the gateway enqueues, a webhook the orchestrator enqueues) is announced across
 * the thread's port, and the other thread's queue looks at once (SqliteQueue.wakeAll).
 */
import type { EnqueueOptions, JobQueue, SqliteQueue } from '@agentloop/queue';

/** Where wake-ups are posted: the worker's parentPort, or the Worker object on the main thread. */
export interface WakePort {
  postMessage(m: WakeMessage): void;
}
/** Where they arrive (the same two). */
export interface WakeListener {
  on(event: 'message', listener: (m: { t?: string; queue?: string }) => void): unknown;
}

export interface WakeMessage {
  t: 'wake';
  queue: string;
}

/** `queue` for the thread that adds jobs; each added (or unparked) job posts a wake-up for `queue.name`. */
export function announcingQueue(queue: JobQueue, port: WakePort): JobQueue {
  const wake = () => port.postMessage({ t: 'wake', queue: queue.name } satisfies WakeMessage);
  const announcing: JobQueue = {
    name: queue.name,
    async enqueue(payload: Uint8Array, opts: EnqueueOptions) {
      const r = await queue.enqueue(payload, opts);
      if (r.added) wake();
      return r;
    },
    process: (handler, opts) => queue.process(handler, opts),
    getState: (jobId) => queue.getState(jobId),
    getPayload: (jobId) => queue.getPayload(jobId),
    stats: () => queue.stats(),
    close: () => queue.close(),
  };
  const { wakeParked } = queue;
  if (wakeParked)
    announcing.wakeParked = async (group, count) => {
      const n = await wakeParked.call(queue, group, count);
      if (n > 0) wake();
      return n;
    };
  return announcing;
}

/** Wakes this thread's workers of the named queues when the other thread announces a job. */
export function wakeOnAnnouncement(port: WakeListener, queues: SqliteQueue[]): void {
  const byName = new Map(queues.map((q) => [q.name, q]));
  port.on('message', (m) => {
    if (m.t === 'wake' && m.queue) byName.get(m.queue)?.wakeAll();
  });
}
