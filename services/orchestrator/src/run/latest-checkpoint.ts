/**
 * The checkpoint a run saved last, kept in memory for the one read that follows it: the graph
 * state the run's end takes (run/stream.ts) once its stream is over. That read used to be a query
 * and a deserialization of the whole thread — every message rebuilt by `@langchain/core`'s `load`
 * — for what the run had just written (issue 9, bench/throughput README).
 *
 * What makes the kept tuple the one the saver would return:
 * - the thread is the run's alone while it runs (one active run per thread; the gateway edits a
 *   thread's checkpoints only when no run holds it), so the latest checkpoint saved by this run on
 *   the root namespace is the thread's latest — except that a cancelled run's executor may still be
 *   settling its last writes when the thread's next run starts (the cancel frees the thread at
 *   once). The savers' latest is the greatest checkpoint id (ids are time-ordered), so a put whose
 *   id is below one already seen is never kept: a late put of an older checkpoint does not become
 *   the state the next run ends with;
 * - it is kept only once its `put` has resolved (a failed put forgets it: the database decides), and
 *   LangGraph's stream ends only after every checkpoint write it started has settled;
 * - a checkpoint with pending writes (an interrupt, an error, the writes of a step stopped by
 *   `interrupt_after`) is not served: the saver assembles those, in its own order. Only a checkpoint
 *   nothing was written against — a graph at its end, or stopped by `interrupt_before` — is. Writes
 *   can be started before the put of their checkpoint is (durability "async" chains each put after
 *   the previous one has resolved, and the embedded saver resolves a put only at its group commit),
 *   so the checkpoints written against are remembered for the watch's life;
 * - it is served once, to a read of the latest checkpoint (no `checkpoint_id`) of that thread, and
 *   only after `arm()`: the read at the start of a stream (LangGraph's loop) always queries.
 *
 * The values served are the objects the run holds rather than copies rebuilt from JSON; the run's
 * end turns them into JSON (publicValues, toJsonValue) as it did the rebuilt ones.
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import { copyCheckpoint, type Checkpoint, type CheckpointMetadata, type CheckpointTuple } from '@langchain/langgraph-checkpoint';

/** One run's hold on its thread's latest checkpoint (see `LatestCheckpoints.watch`). */
export interface LatestCheckpointWatch {
  /** The next read of the thread's latest checkpoint is served from memory, if what was saved allows it. */
  arm(): void;
  /** Stops keeping anything for the thread. */
  close(): void;
}

/** What the saver's `watch` offers the run loop. */
export interface LatestCheckpointSource {
  watch(threadId: string): LatestCheckpointWatch;
}

interface Saved {
  config: RunnableConfig;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  /** The put resolved. */
  done: boolean;
}

interface Watch extends LatestCheckpointWatch {
  latest: Saved | undefined;
  armed: boolean;
  /** Ids of the checkpoints writes were started against (one run's steps: a handful). */
  writtenAgainst: Set<string>;
  /** The greatest checkpoint id put on the thread since the watch began (the savers' "latest"). */
  newestId: string;
}

/** The root namespace's thread of a checkpoint config, or undefined for anything else. */
function rootThread(config: RunnableConfig): string | undefined {
  const c = config.configurable;
  const threadId: unknown = c?.thread_id;
  if (typeof threadId !== 'string') return undefined;
  const ns: unknown = c?.checkpoint_ns;
  return ns === undefined || ns === '' ? threadId : undefined;
}

/** The watches of one saver, by checkpoint thread id; the saver reports its puts and writes here. */
export class LatestCheckpoints implements LatestCheckpointSource {
  private readonly watches = new Map<string, Watch>();

  watch(threadId: string): LatestCheckpointWatch {
    const watches = this.watches;
    const w: Watch = {
      latest: undefined,
      armed: false,
      writtenAgainst: new Set(),
      newestId: '',
      arm: () => {
        w.armed = true;
      },
      close: () => {
        if (watches.get(threadId) === w) watches.delete(threadId);
      },
    };
    watches.set(threadId, w);
    return w;
  }

  /** A put of `checkpoint` was started; `saved` settles with it. */
  putting(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, saved: Promise<unknown>): void {
    const threadId = rootThread(config);
    const w = threadId === undefined ? undefined : this.watches.get(threadId);
    if (!w) return;
    if (checkpoint.id < w.newestId) return; // an older checkpoint put late: not the latest
    w.newestId = checkpoint.id;
    if (w.writtenAgainst.has(checkpoint.id)) {
      w.latest = undefined;
      return;
    }
    const entry: Saved = { config, checkpoint, metadata, done: false };
    w.latest = entry;
    saved.then(
      () => {
        entry.done = true;
      },
      () => {
        if (w.latest === entry) w.latest = undefined;
      },
    );
  }

  /** Writes were started against the checkpoint of `config`. */
  writing(config: RunnableConfig): void {
    const threadId = rootThread(config);
    const w = threadId === undefined ? undefined : this.watches.get(threadId);
    const checkpointId: unknown = config.configurable?.checkpoint_id;
    if (!w || typeof checkpointId !== 'string') return;
    w.writtenAgainst.add(checkpointId);
    if (w.latest?.checkpoint.id === checkpointId) w.latest = undefined;
  }

  /** The tuple a read of `config` gets from memory, or undefined when the saver must answer it. */
  take(config: RunnableConfig): CheckpointTuple | undefined {
    const threadId = rootThread(config);
    if (threadId === undefined || config.configurable?.checkpoint_id) return undefined;
    const w = this.watches.get(threadId);
    if (!w?.armed) return undefined;
    w.armed = false;
    const saved = w.latest;
    w.latest = undefined;
    if (!saved?.done) return undefined;
    const checkpointNs = '';
    const parentId: unknown = saved.config.configurable?.checkpoint_id;
    // The shape the savers return for a read without checkpoint_id (SqliteSaver, MySQLSaver).
    return {
      config: { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: saved.checkpoint.id } },
      checkpoint: copyCheckpoint(saved.checkpoint),
      metadata: saved.metadata,
      parentConfig:
        typeof parentId === 'string' && parentId !== ''
          ? { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: parentId } }
          : undefined,
      pendingWrites: [],
    };
  }
}
