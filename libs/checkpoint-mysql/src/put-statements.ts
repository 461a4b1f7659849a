/**
 * The statements MySQLSaver.put sends — the task writes parked for it (write-parking.ts), the
 * checkpoint's new channel values (blobs), then its row — in one round trip when the pool lets a
 * query carry several statements and the values are small, else as prepared statements one after
 * the other (issue 9: a cluster run's checkpointer round trips, bench/throughput/README.md
 * "Checkpoint writes in one round trip per step").
 */
import type { Pool } from 'mysql2/promise';
import type { CheckpointTables } from './migrations.js';

/** (thread_id, checkpoint_ns, channel, version, type, data): one channel value. */
export type BlobValues = readonly [string, string, string, string, string, Buffer | null];
/** (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata). */
export type CheckpointValues = readonly [string, string, string, string | null, string, Buffer, string];

/**
 * Up to this many bytes of values (Buffers: channel values, writes, the checkpoint), the
 * statements go as one multi-statement text query; above, as prepared statements. The text protocol sends a value as a hex literal the server then parses:
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
 * saver without it gets one prepared statement per round trip.
 */
export function allowsMultipleStatements(pool: Pool): boolean {
  const core = (pool as unknown as { pool?: { config?: { connectionConfig?: { multipleStatements?: boolean } } } }).pool;
  return core?.config?.connectionConfig?.multipleStatements === true;
}

/** A statement and its placeholders' values. */
export interface Statement {
  sql: string;
  values: unknown[];
}

/**
 * Sends `statements` in order: as one multi-statement text query when the pool allows it and their
 * byte values are small, else one prepared statement after the other. Either way each statement
 * is its own autocommit transaction, run only after the ones before it succeeded: the server runs a
 * multi-statement query in order and stops at the first failing statement.
 */
export async function sendInOrder(pool: Pool, statements: readonly Statement[], multiStatement: boolean): Promise<void> {
  if (multiStatement && statements.length > 1 && valueBytes(statements) <= ONE_PACKET_MAX_BYTES) {
    await pool.query(
      statements.map((st) => st.sql).join(';\n'),
      statements.flatMap((st) => st.values),
    );
    return;
  }
  // execute(): the binary protocol sends large values as raw bytes; query() would inline them as
  // hex literals, doubling the bytes on the wire and making the server parse them
  // (bench/checkpoint: ~1.3 ms saved per put with a 64 KiB messages channel).
  for (const st of statements) await pool.execute(st.sql, st.values as never);
}

function valueBytes(statements: readonly Statement[]): number {
  let n = 0;
  for (const st of statements) for (const v of st.values) if (Buffer.isBuffer(v)) n += v.byteLength;
  return n;
}

/**
 * The statements of a put: the checkpoint's new channel values (blobs), then its row, each an
 * autocommit statement rather than BEGIN / INSERT / INSERT / COMMIT. Atomicity is not needed for
 * correctness: a reader only reaches blobs through a checkpoint row that names their versions, and
 * the row is written only after its blobs are committed (sendInOrder). A put that fails in between
 * leaves blobs no checkpoint names (versions are unique per write, MySQLSaver.getNextVersion),
 * which no read returns and deleteThread removes with the thread.
 */
export class PutStatements {
  private readonly checkpointSql: string;
  /** Blob INSERTs by row count: a step changes a handful of channels, so a few texts recur. */
  private readonly blobSql = new Map<number, string>();

  constructor(private readonly tables: CheckpointTables) {
    this.checkpointSql = `INSERT INTO ${tables.checkpoints} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE type = VALUES(type), checkpoint = VALUES(checkpoint), metadata = VALUES(metadata)`;
  }

  statements(blobs: readonly BlobValues[], row: CheckpointValues): Statement[] {
    const out: Statement[] = blobs.length > 0 ? [{ sql: this.blobInsert(blobs.length), values: blobs.flat() }] : [];
    out.push({ sql: this.checkpointSql, values: [...row] });
    return out;
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
