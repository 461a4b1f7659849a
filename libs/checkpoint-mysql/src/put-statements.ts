/**
 * The statements MySQLSaver.put sends: the checkpoint's new channel values (blobs), then its row.
 * In one round trip when the pool lets a query carry several statements and the values are small,
 * else as two prepared statements (issue 9: a cluster run's checkpointer round trips,
 * bench/throughput/README.md "Checkpoint puts in one round trip").
 */
import type { Pool } from 'mysql2/promise';
import type { CheckpointTables } from './migrations.js';

/** (thread_id, checkpoint_ns, channel, version, type, data): one channel value. */
export type BlobValues = readonly [string, string, string, string, string, Buffer | null];
/** (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata). */
export type CheckpointValues = readonly [string, string, string, string | null, string, Buffer, string];

/**
 * Up to this many bytes of channel values, put is one multi-statement text query; above, two
 * prepared statements. The text protocol sends a value as a hex literal the server then parses:
 * cheaper in CPU than a second round trip for a few KiB, dearer from a few tens of KiB
 * (bench/throughput/README.md, the same subsection).
 */
export const ONE_PACKET_MAX_BYTES = 16 * 1024;

/** `(?, ?, ...), (?, ?, ...)`: `rows` groups of `columns` placeholders, for a multi-row INSERT. */
export function rowPlaceholders(columns: number, rows: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/**
 * Whether the pool's connections accept several statements in one query (mysql2's
 * `multipleStatements`, a flag of the connection handshake, so of the pool). A pool handed to the
 * saver without it gets the two-statement put.
 */
export function allowsMultipleStatements(pool: Pool): boolean {
  const core = (pool as unknown as { pool?: { config?: { connectionConfig?: { multipleStatements?: boolean } } } }).pool;
  return core?.config?.connectionConfig?.multipleStatements === true;
}

export class PutStatements {
  private readonly checkpointSql: string;
  /** Blob INSERTs by row count: a step changes a handful of channels, so a few texts recur. */
  private readonly blobSql = new Map<number, string>();

  constructor(
    private readonly tables: CheckpointTables,
    private readonly multiStatement: boolean,
  ) {
    this.checkpointSql = `INSERT INTO ${tables.checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE type = VALUES(type), checkpoint = VALUES(checkpoint), metadata = VALUES(metadata)`;
  }

  /**
   * Blobs first, then the row, each an autocommit statement rather than BEGIN / INSERT / INSERT /
   * COMMIT. Atomicity is not needed for correctness: a reader only reaches blobs through a
   * checkpoint row that names their versions, and the row is written only after its blobs are
   * committed — in one packet too, since the server runs a multi-statement query in order and stops
   * at the first failing statement. A put that fails in between leaves blobs no checkpoint names
   * (versions are unique per write, MySQLSaver.getNextVersion), which no read returns and
   * deleteThread removes with the thread.
   */
  async send(pool: Pool, blobs: readonly BlobValues[], row: CheckpointValues): Promise<void> {
    if (blobs.length === 0) {
      await pool.execute(this.checkpointSql, [...row]);
      return;
    }
    const blobSql = this.blobInsert(blobs.length);
    if (this.multiStatement && blobBytes(blobs) <= ONE_PACKET_MAX_BYTES) {
      await pool.query(`${blobSql};\n${this.checkpointSql}`, [...blobs.flat(), ...row]);
      return;
    }
    // execute(): the binary protocol sends large values as raw bytes; query() would inline them as
    // hex literals, doubling the bytes on the wire and making the server parse them
    // (bench/checkpoint: ~1.3 ms saved per put with a 64 KiB messages channel).
    await pool.execute(blobSql, blobs.flat());
    await pool.execute(this.checkpointSql, [...row]);
  }

  private blobInsert(n: number): string {
    let sql = this.blobSql.get(n);
    if (sql === undefined) {
      sql = `INSERT INTO ${this.tables.blobs} (thread_id, checkpoint_ns, channel, version, type, data) VALUES ${rowPlaceholders(6, n)}
         ON DUPLICATE KEY UPDATE thread_id = thread_id`;
      if (n <= 16) this.blobSql.set(n, sql);
    }
    return sql;
  }
}

function blobBytes(blobs: readonly BlobValues[]): number {
  let n = 0;
  for (const b of blobs) n += b[5]?.byteLength ?? 0;
  return n;
}
