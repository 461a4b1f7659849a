/**
 * What the gateway reads of a thread's checkpoints (history, state at a checkpoint). The
 * orchestrator's `createThreadCheckpointReader` implements it over a checkpoint saver: embedded
 * passes one over the orchestrator's SqliteSaver, the cluster gateway one over a MySQLSaver on
 * the same tables. It also edits them (update state, copy, prune). Without one, history is the
 * latest state only and edits are refused.
 */
import type { JsonObject } from '@agentloop/store';

export interface CheckpointRef {
  checkpoint_id?: string | null;
  checkpoint_ns?: string | null;
}

/** A ThreadState as LangGraph Platform returns it, with the public thread id. */
export interface CheckpointState {
  values: JsonObject;
  next: string[];
  tasks: unknown[];
  checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string | null };
  parent_checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string | null } | null;
  metadata: JsonObject;
  created_at: string | null;
  interrupts: unknown[];
}

export interface ThreadCheckpoints {
  history(
    tenantId: string,
    threadId: string,
    opts: { limit?: number; before?: CheckpointRef | null; metadata?: JsonObject | null; checkpoint?: CheckpointRef | null },
  ): Promise<CheckpointState[]>;
  state(tenantId: string, threadId: string, checkpoint: CheckpointRef | null): Promise<CheckpointState | null>;

  // --- edits (the gateway calls them only while no run holds the thread) ---------------------

  /** Applies `values` as if `asNode` wrote them, at `checkpoint` (the latest without one). */
  update(tenantId: string, threadId: string, update: StateUpdate, checkpoint: CheckpointRef | null): Promise<UpdatedCheckpoint>;
  /** Applies supersteps of updates in order (threads.create({supersteps})). */
  applySupersteps(tenantId: string, threadId: string, supersteps: StateUpdate[][]): Promise<UpdatedCheckpoint>;
  /** Merges into the latest checkpoint's metadata; false when the thread has no checkpoint. */
  patchMetadata(tenantId: string, threadId: string, metadata: JsonObject): Promise<boolean>;
  /** Copies every checkpoint (and pending write) to another thread; its latest state, null when there was none. */
  copy(tenantId: string, fromThreadId: string, toThreadId: string): Promise<CheckpointState | null>;
  /** Keeps only the latest checkpoint; false when the thread has none. */
  keepLatest(tenantId: string, threadId: string): Promise<boolean>;
}

/** One state update: values as if the node `asNode` had returned them. */
export interface StateUpdate {
  values: unknown;
  asNode?: string | null;
}

/** What `POST /threads/{id}/state` answers, and the state the thread record must now show. */
export interface UpdatedCheckpoint {
  checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string; checkpoint_map: Record<string, string> | null };
  state: CheckpointState;
}
