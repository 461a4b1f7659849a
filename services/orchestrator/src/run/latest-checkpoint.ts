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
 *
 * The same tuple also serves the read that starts the stream of a run resumed after it suspended
 * while its model thought (run/model-suspend.ts): the suspended invocation's watch becomes a
 * `ResumePoint` (`suspend()`), and the resumed stream's watch (`watch(threadId, from)`) serves it
 * to LangGraph's first read of the thread's latest checkpoint, instead of a query and a revive of
 * the whole thread per suspended turn (issue 9: a run in flight read its checkpoint 4 times, 1 ms of
 * its ~28 ms of CPU, bench/throughput README). The same rules decide: the put resolved, nothing
 * written against it (the suspended agent task leaves no write), the thread's newest; the thread is
 * still the run's alone, since the run stays `running` while suspended. The resumed invocation then
 * starts from the objects the suspended one ended with — what an unsuspended run's next step gets.
 * While suspended, the point holds the checkpoint and metadata only, not the put's config (which
 * refers to the ended invocation: its callbacks, its signal).
 */
import type { RunnableConfig } from '@langchain/core/runnables';
import { copyCheckpoint, type Checkpoint, type CheckpointMetadata, type CheckpointTuple } from '@langchain/langgraph-checkpoint';

/** One run's hold on its thread's latest checkpoint (see `LatestCheckpoints.watch`). */
export interface LatestCheckpointWatch {
  /** The next read of the thread's latest checkpoint is served from memory, if what was saved allows it. */
  arm(): void;
  /** Stops keeping anything for the thread. */
  close(): void;
  /**
   * The stream ended suspended on its model: returns what the resumed stream starts from
   * (`watch(threadId, from)`). The watch goes on seeing the ended invocation's writes settle until
   * then; whether the point is served is decided when it would be.
   */
  suspend(): ResumePoint;
}

/** The checkpoint a suspended run resumes from, kept between its two streams (see the header). */
export interface ResumePoint {
  /** @internal the tuple, if what was saved allows serving it; undefined leaves the read to the saver. */
  tuple(): CheckpointTuple | undefined;
  /** The run does not resume (cancelled, timed out, its worker stopping): drops it. */
  close(): void;
}

/** What the saver's `watch` offers the run loop. */
export interface LatestCheckpointSource {
  /** `from`: the resume point of the run's previous stream, served to this stream's first read. */
  watch(threadId: string, from?: ResumePoint): LatestCheckpointWatch;
}

interface Saved {
  /** The put's config while the stream runs; only the parent checkpoint id once it suspended. */
  config: RunnableConfig;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  /** The put resolved. */
  done: boolean;
}

interface Watch extends LatestCheckpointWatch {
  latest: Saved | undefined;
  armed: boolean;
  /** The resume point the stream's first read of the latest checkpoint gets. */
  from: ResumePoint | undefined;
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

  watch(threadId: string, from?: ResumePoint): LatestCheckpointWatch {
    const watches = this.watches;
    const w: Watch = {
      latest: undefined,
      armed: false,
      from,
      writtenAgainst: new Set(),
      newestId: '',
      arm: () => {
        w.armed = true;
        // The run's final read never gets the point its stream started from.
        w.from = undefined;
      },
      close: () => {
        if (watches.get(threadId) === w) watches.delete(threadId);
      },
      suspend: () => {
        w.armed = false;
        w.from = undefined;
        const saved = w.latest;
        // Nothing of the ended invocation stays reachable from here but its checkpoint's values.
        if (saved) saved.config = { configurable: { checkpoint_id: saved.config.configurable?.checkpoint_id } };
        return {
          tuple: () => {
            // The ended invocation's writes have settled (the executor awaits them before it resumes).
            const kept = w.latest;
            w.latest = undefined;
            return kept?.done && !w.writtenAgainst.has(kept.checkpoint.id) ? tupleOf(threadId, kept) : undefined;
          },
          close: () => {
            w.latest = undefined;
            w.close();
          },
        };
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
    if (!w) return undefined;
    if (w.from) {
      // The stream's first read of the thread's latest: LangGraph's loop starting a resumed run.
      const from = w.from;
      w.from = undefined;
      return from.tuple();
    }
    if (!w.armed) return undefined;
    w.armed = false;
    const saved = w.latest;
    w.latest = undefined;
    if (!saved?.done) return undefined;
    return tupleOf(threadId, saved);
  }
}

/** The shape the savers return for a read without checkpoint_id (SqliteSaver, MySQLSaver). */
function tupleOf(threadId: string, saved: Saved): CheckpointTuple {
  const checkpointNs = '';
  const parentId: unknown = saved.config.configurable?.checkpoint_id;
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
