/**
 * The checkpointer of a draining executor: how a worker that shuts down lets the steps in flight
 * finish and starts no more, so each run is handed back at a persisted step boundary.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
} from '@langchain/langgraph-checkpoint';
import { LatestCheckpoints, type LatestCheckpointSource, type LatestCheckpointWatch, type ResumePoint } from './latest-checkpoint.js';

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
  return new DrainingSaver(saver, stop);
}

/** Checkpoint writes still in flight, by checkpoint thread id (see `trackingWrites`). */
export interface InFlightWrites extends LatestCheckpointSource {
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
  const tracked = new DrainingSaver(saver, () => false);
  return { saver: tracked, writes: tracked };
}

/**
 * Both of the above in one object, built once per executor: `put` and `putWrites` are counted in
 * flight per thread, and `put` fails after saving once `stop()` is true. A plain delegating
 * subclass, not a Proxy: LangGraph calls the checkpointer several times per step, and a Proxy that
 * binds the method on every property access cost a closure per call (issue 9, bench/throughput).
 * It also keeps, for a run that asks (`watch`), the checkpoint the run saved last, for the read of
 * the run's final state (run/latest-checkpoint.ts).
 */
export class DrainingSaver extends BaseCheckpointSaver implements InFlightWrites {
  private readonly pending = new Map<string, Set<Promise<void>>>();
  private readonly latest = new LatestCheckpoints();

  constructor(
    private readonly inner: BaseCheckpointSaver,
    private readonly stop: () => boolean,
  ) {
    super(inner.serde);
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const kept = this.latest.take(config);
    return kept ? Promise.resolve(kept) : this.inner.getTuple(config);
  }

  watch(threadId: string, from?: ResumePoint): LatestCheckpointWatch {
    return this.latest.watch(threadId, from);
  }

  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    return this.inner.list(config, options);
  }

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    const putting = this.track(config, this.inner.put(config, checkpoint, metadata, newVersions));
    this.latest.putting(config, checkpoint, metadata, putting);
    const saved = await putting;
    if (this.stop()) throw new WorkerDrainingError('The worker is shutting down: the run stops after this checkpoint');
    return saved;
  }

  putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    this.latest.writing(config);
    return this.track(config, this.inner.putWrites(config, writes, taskId, taskPath));
  }

  deleteThread(threadId: string): Promise<void> {
    return this.inner.deleteThread(threadId);
  }

  override getNextVersion(current: number | undefined): number {
    return this.inner.getNextVersion(current);
  }

  override getDeltaChannelHistory(options: Parameters<BaseCheckpointSaver['getDeltaChannelHistory']>[0]) {
    return this.inner.getDeltaChannelHistory(options);
  }

  async settled(threadId: string): Promise<void> {
    await Promise.all([...(this.pending.get(threadId) ?? [])]);
  }

  private track<T>(config: RunnableConfig, p: Promise<T>): Promise<T> {
    const threadId: unknown = config.configurable?.thread_id;
    if (typeof threadId !== 'string') return p;
    const set = this.pending.get(threadId) ?? new Set();
    this.pending.set(threadId, set);
    const settled = p.then(
      () => undefined,
      () => undefined,
    );
    set.add(settled);
    void settled.then(() => {
      set.delete(settled);
      if (set.size === 0) this.pending.delete(threadId);
    });
    return p;
  }
}
