/**
 * What the gateway reads of a thread's checkpoints (history, state at a checkpoint). The
 * orchestrator's `createThreadCheckpointReader` implements it over a checkpoint saver: embedded
 * passes one over the orchestrator's SqliteSaver, the cluster gateway one over a MySQLSaver on
 * the same tables. Without one, history is the latest state only.
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
}
