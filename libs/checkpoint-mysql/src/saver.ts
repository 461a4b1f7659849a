/**
 * MySQLSaver: LangGraph's checkpoint saver over MySQL/MariaDB (the cluster's checkpoints). Slightly
 * over 400 lines: every method of BaseCheckpointSaver lives on the one class.
 */
import { createHash } from 'node:crypto';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { createPool, type Pool, type PoolConnection, type PoolOptions, type RowDataPacket } from 'mysql2/promise';
import { deleteCheckpointsFrom } from './checkpoint-rewind.js';
import { CheckpointSerializer } from './serde.js';
import { PutStatements, allowsMultipleStatements, rowPlaceholders, sendInOrder, type BlobValues } from './put-statements.js';
import { WriteParking } from './write-parking.js';
import { MAX_CHECKPOINT_ID_BYTES, MAX_KEY_BYTES, MAX_TASK_PATH_BYTES, MAX_VERSION_BYTES, getMigrations, type CheckpointTables } from './migrations.js';

export interface MySQLSaverOptions {
  /**
   * Database (MySQL's word for a schema) holding the tables; created by
   * `setup()` when missing. Default: the connection's database.
   */
  schema?: string;
  /** Prefix for the table names, e.g. `lg_` → `lg_checkpoints` (default none). */
  tablePrefix?: string;
  /** How long `setup()` waits for another process's migration lock (default 60 s). */
  setupLockTimeoutSeconds?: number;
}

interface CheckpointRow extends RowDataPacket {
  thread_id: Buffer;
  checkpoint_ns: Buffer;
  checkpoint_id: Buffer;
  parent_checkpoint_id: Buffer | null;
  type: string;
  checkpoint: Buffer;
  metadata: string;
}

/** A row of loadValuesAndWrites: a channel value (kind 0) or a pending write (kind 1). */
interface ValueOrWriteRow extends RowDataPacket {
  kind: number | string;
  channel: Buffer;
  type: string;
  data: Buffer | null;
  task_id: Buffer;
}

interface WriteRow extends RowDataPacket {
  task_id: Buffer;
  channel: Buffer;
  type: string;
  data: Buffer;
}

const IDENT = /^[A-Za-z0-9_]*$/;
const text = (b: Buffer): string => b.toString('utf8');
/** mysql2 hands out Buffers; serde consumers compare against plain Uint8Arrays. */
const bytes = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength).slice();

/** Parked task writes are keyed by thread and namespace: a put takes those of its own. */
const parkingKey = (threadId: string, checkpointNs: string): string => `${threadId}\u0000${checkpointNs}`;

/** An id from a config as a string (numbers are accepted, as LangGraph users pass them), bounded by its column size. */
function checkBytes(what: string, value: unknown, max: number): string {
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw new Error(`Missing or invalid ${what}: expected a string, got ${value === null ? 'null' : typeof value}`);
  }
  const s = String(value);
  if (Buffer.byteLength(s, 'utf8') > max) throw new Error(`Invalid ${what}: longer than ${max} bytes (UTF-8)`);
  return s;
}

/**
 * LangGraph checkpointer over MySQL 8 / MariaDB 10.6+ through a `mysql2` pool,
 * shaped like the official `PostgresSaver`: `fromConnString`, `setup()`, `end()`.
 *
 * A checkpoint row holds the checkpoint without its channel values; each
 * channel value is stored once per (channel, version) in the blobs table, so a
 * step that changes one channel stores one value. Pending writes live in the
 * writes table and come back in `writesSortKey` order (task path, task id, idx).
 * Everything is serialized with `this.serde` into LONGBLOB columns; metadata is
 * kept as JSON text so `list({ filter })` runs in SQL (JSON_CONTAINS).
 */
export class MySQLSaver extends BaseCheckpointSaver {
  private readonly pool: Pool;
  private readonly tables: CheckpointTables;
  private readonly schema: string | undefined;
  private readonly lockTimeoutSeconds: number;
  private readonly lockName: string;
  private readonly puts: PutStatements;
  /** Set when the pool takes multi-statement queries: task writes travel with the thread's next put. */
  private readonly parking: WriteParking | undefined;
  private ended: Promise<void> | undefined;

  constructor(pool: Pool, serde?: SerializerProtocol, options: MySQLSaverOptions = {}) {
    // LangGraph's format, written for less CPU (serde.ts).
    super(serde ?? new CheckpointSerializer());
    const prefix = options.tablePrefix ?? '';
    if (!IDENT.test(prefix)) throw new Error(`Invalid tablePrefix "${prefix}": use letters, digits and _ only`);
    if (options.schema !== undefined && (!options.schema || !IDENT.test(options.schema))) {
      throw new Error(`Invalid schema "${options.schema}": use letters, digits and _ only`);
    }
    this.pool = pool;
    this.schema = options.schema;
    const q = (name: string) => (this.schema ? `\`${this.schema}\`.\`${prefix}${name}\`` : `\`${prefix}${name}\``);
    this.tables = { migrations: q('checkpoint_migrations'), checkpoints: q('checkpoints'), blobs: q('checkpoint_blobs'), writes: q('checkpoint_writes') };
    this.puts = new PutStatements(this.tables);
    this.parking = allowsMultipleStatements(pool) ? new WriteParking((statements) => sendInOrder(pool, statements, true)) : undefined;
    this.lockTimeoutSeconds = options.setupLockTimeoutSeconds ?? 60;
    this.lockName = `agentloop_ckpt_${createHash('sha256')
      .update(`${this.schema ?? ''}.${prefix}`)
      .digest('hex')
      .slice(0, 24)}`;
  }

  /**
   * A saver on its own pool. The URL is `mysql://user:password@host:port/database`.
   * Call `setup()` once before use and `end()` when done.
   */
  static fromConnString(connString: string, options?: MySQLSaverOptions & { pool?: Omit<PoolOptions, 'uri'> }): MySQLSaver {
    const { pool: poolOptions, ...saverOptions } = options ?? {};
    // trace: false — mysql2's promise API otherwise captures a stack trace on every query in case it
    // fails (~2.5% of a cluster orchestrator's CPU, bench/throughput "Cluster mode"); a failed
    // query's error keeps its message and the server's code. multipleStatements: a step's writes and
    // checkpoint in one round trip (put-statements.ts, write-parking.ts); every value the saver sends
    // is a placeholder's, escaped by mysql2.
    const pool = createPool({
      connectionLimit: 10,
      trace: false,
      multipleStatements: true,
      ...poolOptions,
      uri: connString,
      charset: 'utf8mb4',
      supportBigNumbers: true,
    });
    // mysql2 escapes with backslashes: under a server sql_mode with NO_BACKSLASH_ESCAPES a quote in a
    // value would end its string (with multipleStatements, the start of another statement). Each
    // connection turns the flag off before its first query (queued ahead of it), or is destroyed.
    // The store's pool does the same (libs/store mysql.ts).
    pool.pool.on('connection', (conn) => {
      conn.query("SET SESSION sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), ',NO_BACKSLASH_ESCAPES,', ','))", (err) => {
        if (err) conn.destroy();
      });
    });
    return new MySQLSaver(pool, undefined, saverOptions);
  }

  /**
   * The next version of a channel: the next integer plus a random fraction. Blobs are keyed by
   * (channel, version) and insert-if-absent, so integer versions collide when a run forks the
   * thread at an older checkpoint (edit, regenerate): the new branch's values would be read back
   * as the old branch's. Still numbers, increasing, and comparable with the integer versions of
   * checkpoints written before.
   */
  override getNextVersion(current: number | undefined): number {
    const base = typeof current === 'number' ? Math.floor(current) : typeof current === 'string' ? Number.parseInt(current, 10) || 0 : 0;
    return base + 1 + Math.random();
  }

  /**
   * Creates or upgrades the tables. Idempotent; concurrent callers (several
   * workers booting at once) serialize on a server-side named lock.
   */
  async setup(): Promise<void> {
    const conn = await this.pool.getConnection();
    try {
      if (this.schema) await conn.query(`CREATE DATABASE IF NOT EXISTS \`${this.schema}\` CHARACTER SET utf8mb4`);
      const [lock] = await conn.query<RowDataPacket[]>('SELECT GET_LOCK(?, ?) AS ok', [this.lockName, this.lockTimeoutSeconds]);
      if (lock[0]?.ok !== 1) throw new Error(`MySQLSaver.setup(): another process held the migration lock for ${this.lockTimeoutSeconds} s`);
      try {
        const migrations = getMigrations(this.tables);
        await conn.query(migrations[0]!);
        const [rows] = await conn.query<RowDataPacket[]>(`SELECT COALESCE(MAX(v), -1) AS v FROM ${this.tables.migrations}`);
        const current = Number(rows[0]?.v ?? -1);
        for (let v = Math.max(current + 1, 0); v < migrations.length; v++) {
          await conn.query(migrations[v]!);
          await conn.query(`INSERT INTO ${this.tables.migrations} (v) VALUES (?) ON DUPLICATE KEY UPDATE v = v`, [v]);
        }
      } finally {
        await conn.query('SELECT RELEASE_LOCK(?)', [this.lockName]);
      }
    } finally {
      conn.release();
    }
  }

  // -------------------------------------------------------------------------
  // Reads

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const rawThreadId: unknown = config.configurable?.thread_id;
    const checkpointNs = String(config.configurable?.checkpoint_ns ?? '');
    const checkpointId: unknown = config.configurable?.checkpoint_id;
    if (rawThreadId === undefined || rawThreadId === null) return undefined;
    const threadId = String(rawThreadId);
    const [rows] = checkpointId
      ? await this.pool.query<CheckpointRow[]>(`SELECT * FROM ${this.tables.checkpoints} WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?`, [
          threadId,
          checkpointNs,
          String(checkpointId),
        ])
      : await this.pool.query<CheckpointRow[]>(
          `SELECT * FROM ${this.tables.checkpoints} WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC LIMIT 1`,
          [threadId, checkpointNs],
        );
    const row = rows[0];
    return row ? this.toTuple(row) : undefined;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const { filter, before, limit } = options ?? {};
    const where: string[] = [];
    const args: unknown[] = [];
    const c = config.configurable ?? {};
    if (c.thread_id) {
      where.push('thread_id = ?');
      args.push(String(c.thread_id));
    }
    if (c.checkpoint_ns !== undefined && c.checkpoint_ns !== null) {
      where.push('checkpoint_ns = ?');
      args.push(String(c.checkpoint_ns));
    }
    if (c.checkpoint_id) {
      where.push('checkpoint_id = ?');
      args.push(String(c.checkpoint_id));
    }
    for (const [key, value] of Object.entries(filter ?? {})) {
      // Top-level key whose value contains (for scalars: equals) the given JSON value.
      where.push('JSON_CONTAINS(metadata, ?, ?) = 1');
      args.push(JSON.stringify(value ?? null), `$.${JSON.stringify(key)}`);
    }
    if (before?.configurable?.checkpoint_id !== undefined) {
      where.push('checkpoint_id < ?');
      args.push(String(before.configurable.checkpoint_id));
    }
    let query = `SELECT * FROM ${this.tables.checkpoints}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY checkpoint_id DESC`;
    if (limit !== undefined) {
      const n = Math.floor(Number(limit));
      if (!Number.isFinite(n) || n < 0) throw new Error(`Invalid list limit: ${String(limit)}`);
      query += ` LIMIT ${n}`;
    }
    const [rows] = await this.pool.query<CheckpointRow[]>(query, args);
    for (const row of rows) yield await this.toTuple(row);
  }

  private async toTuple(row: CheckpointRow): Promise<CheckpointTuple> {
    const threadId = text(row.thread_id);
    const checkpointNs = text(row.checkpoint_ns);
    const checkpointId = text(row.checkpoint_id);
    const parentId = row.parent_checkpoint_id ? text(row.parent_checkpoint_id) : undefined;
    const stored = (await this.serde.loadsTyped(row.type, bytes(row.checkpoint))) as Omit<Checkpoint, 'channel_values'>;
    const [[channelValues, pendingWrites], metadata] = await Promise.all([
      this.loadValuesAndWrites(threadId, checkpointNs, checkpointId, stored.channel_versions ?? {}),
      this.serde.loadsTyped('json', row.metadata) as Promise<CheckpointMetadata>,
    ]);
    const checkpoint: Checkpoint = {
      ...stored,
      channel_versions: { ...(stored.channel_versions ?? {}) },
      versions_seen: stored.versions_seen ?? {},
      channel_values: channelValues,
    };
    if (checkpoint.v < 4 && parentId !== undefined) await this.migratePendingSends(checkpoint, threadId, checkpointNs, parentId);
    return {
      config: { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpointId } },
      checkpoint,
      metadata,
      ...(parentId !== undefined ? { parentConfig: { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: parentId } } } : {}),
      pendingWrites,
    };
  }

  /**
   * A checkpoint's channel values and its pending writes in one statement (UNION ALL): one round
   * trip per read instead of two (issue 9, bench/throughput "Cluster mode"). Writes come in
   * `writesSortKey` order, after the values.
   */
  private async loadValuesAndWrites(
    threadId: string,
    checkpointNs: string,
    checkpointId: string,
    versions: ChannelVersions,
  ): Promise<[Record<string, unknown>, CheckpointPendingWrite[]]> {
    const entries = Object.entries(versions);
    if (entries.length === 0) return [{}, await this.loadWrites(threadId, checkpointNs, checkpointId)];
    const [rows] = await this.pool.query<ValueOrWriteRow[]>(
      `(SELECT 0 AS kind, channel, type, data, CAST('' AS BINARY) AS task_id, CAST('' AS BINARY) AS task_path, 0 AS idx FROM ${this.tables.blobs}
         WHERE thread_id = ? AND checkpoint_ns = ? AND (channel, version) IN (${entries.map(() => '(?, ?)').join(', ')}))
       UNION ALL
       (SELECT 1, channel, type, data, task_id, task_path, idx FROM ${this.tables.writes}
         WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?)
       ORDER BY kind, task_path, task_id, idx`,
      [threadId, checkpointNs, ...entries.flatMap(([channel, version]) => [channel, String(version)]), threadId, checkpointNs, checkpointId],
    );
    const values: Record<string, unknown> = {};
    const writes: CheckpointPendingWrite[] = [];
    for (const r of rows) {
      if (Number(r.kind) === 1) {
        writes.push([text(r.task_id), text(r.channel), await this.serde.loadsTyped(r.type, bytes(r.data as Buffer))]);
      } else if (r.type !== 'empty' && r.data !== null) {
        values[text(r.channel)] = await this.serde.loadsTyped(r.type, bytes(r.data));
      }
    }
    return [values, writes];
  }

  private async loadWrites(threadId: string, checkpointNs: string, checkpointId: string, channel?: string): Promise<CheckpointPendingWrite[]> {
    const [rows] = await this.pool.query<WriteRow[]>(
      `SELECT task_id, channel, type, data FROM ${this.tables.writes}
       WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?${channel !== undefined ? ' AND channel = ?' : ''}
       ORDER BY task_path, task_id, idx`,
      channel !== undefined ? [threadId, checkpointNs, checkpointId, channel] : [threadId, checkpointNs, checkpointId],
    );
    return Promise.all(
      rows.map(async (r): Promise<CheckpointPendingWrite> => [text(r.task_id), text(r.channel), await this.serde.loadsTyped(r.type, bytes(r.data))]),
    );
  }

  /**
   * Checkpoints before format v4 kept `Send` packets as writes to TASKS on the
   * parent checkpoint; v4 keeps them in channel_values. Rows written by older
   * LangGraph versions are upgraded on read, as the official savers do.
   */
  private async migratePendingSends(checkpoint: Checkpoint, threadId: string, checkpointNs: string, parentId: string): Promise<void> {
    const sends = await this.loadWrites(threadId, checkpointNs, parentId, TASKS);
    if (sends.length === 0) return;
    checkpoint.channel_values[TASKS] = sends.map(([, , value]) => value);
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  // -------------------------------------------------------------------------
  // Writes

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error('Missing "configurable" field in "config" param');
    const threadId = checkBytes('thread_id', config.configurable.thread_id, MAX_KEY_BYTES);
    const checkpointNs = checkBytes('checkpoint_ns', config.configurable.checkpoint_ns ?? '', MAX_KEY_BYTES);
    const parentId = config.configurable.checkpoint_id
      ? checkBytes('parent checkpoint_id', config.configurable.checkpoint_id, MAX_CHECKPOINT_ID_BYTES)
      : undefined;
    checkBytes('checkpoint.id', checkpoint.id, MAX_CHECKPOINT_ID_BYTES);

    const { channel_values: values, ...rest } = checkpoint;
    const [[type, serialized], [metadataType, metadataBytes], blobs] = await Promise.all([
      this.serde.dumpsTyped(rest),
      this.serde.dumpsTyped(metadata),
      Promise.all(
        Object.entries(newVersions).map(async ([channel, version]): Promise<BlobValues> => {
          checkBytes('channel name', channel, MAX_KEY_BYTES);
          checkBytes('channel version', String(version), MAX_VERSION_BYTES);
          const [t, data] = channel in values ? await this.serde.dumpsTyped((values as Record<string, unknown>)[channel]) : ['empty', null];
          return [threadId, checkpointNs, channel, String(version), t, data === null ? null : Buffer.from(data)];
        }),
      ),
    ]);
    if (metadataType !== 'json') throw new Error(`MySQLSaver needs a serializer that writes metadata as JSON (got "${metadataType}")`);
    const row = [threadId, checkpointNs, checkpoint.id, parentId ?? null, type, Buffer.from(serialized), Buffer.from(metadataBytes).toString('utf8')] as const;
    const statements = this.puts.statements(blobs, row);
    if (this.parking) {
      // The thread's task writes parked since its last put go first, in the same round trip.
      const parked = this.parking.take(parkingKey(threadId, checkpointNs));
      await parked.sent(sendInOrder(this.pool, [...parked.statements, ...statements], true));
    } else {
      await sendInOrder(this.pool, statements, false);
    }
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  /**
   * Writes of one task against a checkpoint. A regular write (idx ≥ 0) is kept
   * the first time it is stored (a retried task must not replace it); special
   * writes (errors, interrupts, resume: negative idx) replace the previous one.
   */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ''): Promise<void> {
    const threadId = checkBytes('thread_id', config.configurable?.thread_id, MAX_KEY_BYTES);
    const checkpointId = checkBytes('checkpoint_id', config.configurable?.checkpoint_id, MAX_CHECKPOINT_ID_BYTES);
    const checkpointNs = checkBytes('checkpoint_ns', config.configurable?.checkpoint_ns ?? '', MAX_KEY_BYTES);
    checkBytes('task_id', taskId, MAX_KEY_BYTES);
    checkBytes('task path', taskPath, MAX_TASK_PATH_BYTES);
    const rows = await Promise.all(
      writes.map(async ([channel, value], i) => {
        checkBytes('channel name', channel, MAX_KEY_BYTES);
        const [t, data] = await this.serde.dumpsTyped(value);
        const idx = WRITES_IDX_MAP[channel] ?? i;
        return [threadId, checkpointNs, checkpointId, taskId, idx, channel, t, Buffer.from(data), taskPath] as const;
      }),
    );
    if (rows.length === 0) return;
    const regular = rows.filter((r) => r[4] >= 0);
    const special = rows.filter((r) => r[4] < 0);
    const insert = (n: number) =>
      `INSERT INTO ${this.tables.writes} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, data, task_path) VALUES ${rowPlaceholders(9, n)}`;
    const keepFirst = ' ON DUPLICATE KEY UPDATE thread_id = thread_id';
    const replace = ' ON DUPLICATE KEY UPDATE channel = VALUES(channel), type = VALUES(type), data = VALUES(data), task_path = VALUES(task_path)';
    // One statement is atomic on its own: a task's writes are all regular (or all special) in
    // practice, so they take one round trip instead of BEGIN / INSERT / COMMIT.
    if (special.length === 0 || regular.length === 0) {
      const statement = { sql: insert(rows.length) + (special.length === 0 ? keepFirst : replace), values: rows.flat() };
      // With a multi-statement pool the INSERT waits for the thread's next put (write-parking.ts).
      if (this.parking) await this.parking.park(parkingKey(threadId, checkpointNs), statement);
      else await this.pool.execute(statement.sql, statement.values);
      return;
    }
    await this.transaction(async (conn) => {
      await conn.execute(insert(regular.length) + keepFirst, regular.flat());
      await conn.execute(insert(special.length) + replace, special.flat());
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    await this.transaction(async (conn) => {
      await conn.query(`DELETE FROM ${this.tables.writes} WHERE thread_id = ?`, [threadId]);
      await conn.query(`DELETE FROM ${this.tables.blobs} WHERE thread_id = ?`, [threadId]);
      await conn.query(`DELETE FROM ${this.tables.checkpoints} WHERE thread_id = ?`, [threadId]);
    });
  }

  /**
   * Deletes the thread's checkpoints from `fromCheckpointId` on (uuid6 order: those created since
   * then), every namespace, with their writes and the channel values only they used: the thread
   * reads as it did before (a run's rollback). Returns how many checkpoints were deleted.
   */
  deleteCheckpointsFrom(threadId: string, fromCheckpointId: string): Promise<number> {
    return this.transaction((conn) => deleteCheckpointsFrom(conn, this.tables, this.serde, threadId, fromCheckpointId));
  }

  /** Stores the task writes still parked, then closes the pool; the saver is unusable afterwards. */
  end(): Promise<void> {
    return (this.ended ??= (this.parking?.flushAll() ?? Promise.resolve()).then(() => this.pool.end()));
  }

  private async transaction<T>(fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    const conn = await this.pool.getConnection();
    try {
      await conn.beginTransaction();
      const result = await fn(conn);
      await conn.commit();
      return result;
    } catch (err) {
      await conn.rollback().catch(() => undefined);
      throw err;
    } finally {
      conn.release();
    }
  }
}
