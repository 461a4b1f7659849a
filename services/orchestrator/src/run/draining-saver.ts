/**
 * The checkpointer of a draining executor: how a worker that shuts down lets the steps in flight
 * finish and starts no more, so each run is handed back at a persisted step boundary.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';

/** Thrown by the checkpointer of a draining executor once a step's checkpoint is saved. */
export class WorkerDrainingError extends Error {
  override name = 'WorkerDrainingError';
}

/**
 * The saver, except that once `stop()` is true each `put` fails *after* saving: LangGraph
 * (durability "sync") then ends the run at that step boundary, with that step persisted and the
 * next one not started. That is how a draining worker lets in-flight steps finish and no more.
 */
export function stopAfterCheckpointWhen(saver: BaseCheckpointSaver, stop: () => boolean): BaseCheckpointSaver {
  return new Proxy(saver, {
    get(target, prop) {
      if (prop === 'put') {
        return async (...args: Parameters<BaseCheckpointSaver['put']>) => {
          const saved = await target.put(...args);
          if (stop()) throw new WorkerDrainingError('The worker is shutting down: the run stops after this checkpoint');
          return saved;
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
