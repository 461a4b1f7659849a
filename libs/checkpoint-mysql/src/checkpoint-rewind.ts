/**
 * Rewinding a thread (LangGraph's cancel with `action=rollback`): deleting its checkpoints from
 * one checkpoint id on — ids are uuid6, ordered by creation time, so "from the moment the run
 * started" — in every namespace, with their pending writes and the channel values only those
 * checkpoints referenced (what the rolled-back run wrote is gone, not only unreachable).
 */
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import type { PoolConnection, RowDataPacket } from 'mysql2/promise';
import type { CheckpointTables } from './migrations.js';

interface ThreadCheckpointRow extends RowDataPacket {
  checkpoint_ns: Buffer;
  checkpoint_id: Buffer;
  type: string;
  checkpoint: Buffer;
}

const text = (b: Buffer): string => b.toString('utf8');
const blobKey = (ns: string, channel: string, version: string): string => JSON.stringify([ns, channel, version]);

async function blobKeysOf(serde: SerializerProtocol, row: ThreadCheckpointRow): Promise<string[]> {
  const cp = (await serde.loadsTyped(row.type, new Uint8Array(row.checkpoint))) as { channel_versions?: Record<string, string | number> };
  const ns = text(row.checkpoint_ns);
  return Object.entries(cp.channel_versions ?? {}).map(([channel, version]) => blobKey(ns, channel, String(version)));
}

/** Runs inside the saver's transaction; returns how many checkpoints were deleted. */
export async function deleteCheckpointsFrom(
  conn: PoolConnection,
  tables: CheckpointTables,
  serde: SerializerProtocol,
  threadId: string,
  fromCheckpointId: string,
): Promise<number> {
  const [rows] = await conn.query<ThreadCheckpointRow[]>(
    `SELECT checkpoint_ns, checkpoint_id, type, checkpoint FROM ${tables.checkpoints} WHERE thread_id = ? FOR UPDATE`,
    [threadId],
  );
  // Byte order of the VARBINARY ids, as MySQL compares them: uuid6 text sorts by creation time.
  const isDoomed = (r: ThreadCheckpointRow) => text(r.checkpoint_id) >= fromCheckpointId;
  const doomed = rows.filter(isDoomed);
  if (doomed.length === 0) return 0;
  const kept = new Set((await Promise.all(rows.filter((r) => !isDoomed(r)).map((r) => blobKeysOf(serde, r)))).flat());
  const orphaned = new Set((await Promise.all(doomed.map((r) => blobKeysOf(serde, r)))).flat().filter((k) => !kept.has(k)));
  for (const r of doomed) {
    const key = [threadId, r.checkpoint_ns, r.checkpoint_id];
    await conn.execute(`DELETE FROM ${tables.writes} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`, key);
    await conn.execute(`DELETE FROM ${tables.checkpoints} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`, key);
  }
  for (const k of orphaned) {
    const [ns, channel, version] = JSON.parse(k) as [string, string, string];
    await conn.execute(`DELETE FROM ${tables.blobs} WHERE thread_id = ? AND checkpoint_ns = ? AND channel = ? AND version = ?`, [
      threadId,
      ns,
      channel,
      version,
    ]);
  }
  return doomed.length;
}
