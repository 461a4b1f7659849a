/**
 * Rewinding a thread's checkpoints to before a run (LangGraph's cancel with `action=rollback`, and
 * multitask_strategy "rollback"), for the gateway of either mode: embedded over the orchestrator's
 * SqliteSaver, the cluster gateway over a MySQLSaver on the orchestrators' tables. LangGraph JS
 * does not put the run id into checkpoint metadata, so a run's checkpoints are found by time:
 * checkpoint ids are uuid6 (creation time first), and a run writes on its thread from the moment
 * it starts (`started_at`, stamped by the orchestrator on the clock that stamps the ids) while no
 * other run writes there — the thread is held by one run at a time.
 */
import type { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import type { MySQLSaver } from '@agentloop/checkpoint-mysql';

export interface ThreadCheckpointRewinder {
  /** Deletes the thread's checkpoints created at or after `since` (every namespace) and their writes; returns how many. */
  rewind(tenantId: string, threadId: string, since: Date): Promise<number>;
}

/** The checkpoint thread of a public thread (the same as run-executor's checkpointThreadId). */
const cpThreadId = (tenantId: string, threadId: string): string => `${tenantId}:${threadId}`;

/** 100-ns intervals between the Gregorian epoch (1582-10-15), which uuid v6 counts from, and the Unix epoch. */
const GREGORIAN_OFFSET = 122_192_928_000_000_000n;

/**
 * The smallest uuid6 of millisecond `ms`: every checkpoint id made at or after `ms` sorts at or
 * after it (uuid6 text puts the timestamp first, most significant bits first).
 */
export function checkpointIdFloor(ms: number): string {
  const ticks = (BigInt(Math.max(0, Math.floor(ms))) * 10_000n + GREGORIAN_OFFSET).toString(16).padStart(15, '0');
  return `${ticks.slice(0, 8)}-${ticks.slice(8, 12)}-6${ticks.slice(12, 15)}-0000-000000000000`;
}

/** Over the embedded SqliteSaver's tables (checkpoint values are stored inline: no blobs). */
export function sqliteCheckpointRewinder(saver: SqliteSaver): ThreadCheckpointRewinder {
  return {
    rewind(tenantId, threadId, since) {
      const tid = cpThreadId(tenantId, threadId);
      const from = checkpointIdFloor(since.getTime());
      const db = saver.db;
      // The saver creates its tables on first use; a thread nobody ran has nothing to rewind.
      const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'").get();
      if (!exists) return Promise.resolve(0);
      const deleted = db.transaction(() => {
        db.prepare('DELETE FROM writes WHERE thread_id = ? AND checkpoint_id >= ?').run(tid, from);
        return db.prepare('DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id >= ?').run(tid, from).changes;
      })();
      return Promise.resolve(deleted);
    },
  };
}

/** Over a MySQLSaver (the cluster gateway's, on the orchestrators' tables). */
export function mysqlCheckpointRewinder(saver: MySQLSaver): ThreadCheckpointRewinder {
  return {
    rewind: (tenantId, threadId, since) => saver.deleteCheckpointsFrom(cpThreadId(tenantId, threadId), checkpointIdFloor(since.getTime())),
  };
}
