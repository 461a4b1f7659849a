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

/** Checkpoint writes still in flight, by checkpoint thread id (see `trackingWrites`). */
export interface InFlightWrites {
  /** Resolves once every write of `threadId` started so far has settled (saved or failed). */
  settled(threadId: string): Promise<void>;
}

/**
 * The saver, counting its `put` / `putWrites` calls in flight per thread. A run stopped by a cancel
 * leaves LangGraph's loop at once, but a checkpoint write it had started can still land after: the
 * executor awaits `settled` before it announces the run's end, so whoever acts on that end (a
 * rollback deleting the run's checkpoints) sees every checkpoint the run will ever write.
 */
export function trackingWrites(saver: BaseCheckpointSaver): { saver: BaseCheckpointSaver; writes: InFlightWrites } {
  const pending = new Map<string, Set<Promise<unknown>>>();
  const track = <T>(threadId: unknown, p: Promise<T>): Promise<T> => {
    if (typeof threadId !== 'string') return p;
    const set = pending.get(threadId) ?? new Set();
    pending.set(threadId, set);
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    set.add(settled);
    void settled.then(() => {
      set.delete(settled);
      if (set.size === 0) pending.delete(threadId);
    });
    return p;
  };
  const proxy = new Proxy(saver, {
    get(target, prop) {
      if (prop === 'put' || prop === 'putWrites') {
        const fn = Reflect.get(target, prop, target) as (...a: unknown[]) => Promise<unknown>;
        return (...args: unknown[]) => {
          const config = args[0] as { configurable?: { thread_id?: unknown } } | undefined;
          return track(config?.configurable?.thread_id, fn.apply(target, args));
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return {
    saver: proxy,
    writes: {
      async settled(threadId) {
        await Promise.all([...(pending.get(threadId) ?? [])]);
      },
    },
  };
}
