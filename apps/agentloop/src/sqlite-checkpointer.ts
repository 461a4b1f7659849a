/**
 * Embedded mode's checkpointer: LangGraph's SqliteSaver, its tables and rows unchanged, with
 * cached statements (openCheckpointSqlite), the cheaper serializer both savers share
 * (CheckpointSerializer: the same bytes), a task's writes saved by one statement, and the writes
 * of one event-loop turn committed together (SqliteGroupCommit).
 */
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import {
  copyCheckpoint,
  WRITES_IDX_MAP,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { CheckpointSerializer } from '@agentloop/checkpoint-mysql';
import { isSqliteBusy, retryWhileSqliteBusy } from '@agentloop/core';
import { openCheckpointSqlite, SqliteGroupCommit, type GroupCommitSchedule } from '@agentloop/store';

type RunnableConfig = Parameters<SqliteSaver['putWrites']>[0];
/** better-sqlite3's Database, as SqliteSaver types it (this package does not depend on better-sqlite3 itself). */
type Database = SqliteSaver['db'];

const COLUMNS = '(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value)';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?)';

/**
 * Rows per INSERT. Far below SQLite's bound-parameter limit (8 per row; 999 in SQLite before 3.32),
 * and above the writes of any step the agent graph makes, so a step's writes are one statement.
 */
export const WRITES_PER_STATEMENT = 100;

/**
 * The shared serializer (same bytes) with its `dumpsTyped` callable synchronously: the stock one is
 * asynchronous only in name (JsonPlusSerializer: bytes as they are, anything else `_dumps`), and
 * each call of it, with the `Promise.all` and the async closure per write around it, cost a run
 * ~150 promises of its ~2,800 for 13 checkpoint writes (issue 9, bench/throughput README
 * "Store statements without Kysely's executor; checkpoint writes without promises").
 */
export class EmbeddedCheckpointSerializer extends CheckpointSerializer {
  dumpsTypedNow(obj: unknown): [string, Uint8Array] {
    if (obj instanceof Uint8Array) return ['bytes', obj];
    return ['json', this._dumps(obj)];
  }

  // Kept equal to dumpsTypedNow: a saver without the synchronous path writes the same rows.
  override dumpsTyped(obj: unknown): Promise<[string, Uint8Array]> {
    return Promise.resolve(this.dumpsTypedNow(obj));
  }
}

/**
 * SqliteSaver whose `putWrites` inserts a task's writes with one multi-row INSERT instead of one
 * INSERT per write inside BEGIN … COMMIT: a run of the bench's agent made 27 inserts and 6
 * transactions, ~39 of its 83 SQLite statements, for 6 calls (issue 9, bench/throughput README).
 * One statement is atomic by itself, so no transaction is needed; more rows than one statement
 * takes are still written in one transaction.
 *
 * The rows are SqliteSaver's: the same columns and values, idx from WRITES_IDX_MAP for the special
 * channels (`__error__`, `__interrupt__`…) else the write's position, `INSERT OR REPLACE` when every
 * write is to a special channel and `INSERT OR IGNORE` otherwise; within one statement SQLite
 * applies the rows in order, so a repeated key resolves as the separate inserts did.
 */
export class EmbeddedSqliteSaver extends SqliteSaver {
  /** The connection itself: `this.db` is the flushing accessor below. */
  private readonly connection: Database;
  private readonly commits: SqliteGroupCommit;
  /** Serializes without a promise per value when the serializer allows it. */
  private readonly dumpsNow: ((obj: unknown) => [string, Uint8Array]) | undefined;

  /**
   * `put` and `putWrites` go through a group commit: at 32 concurrent runs, the checkpoint writes
   * made in one turn share one COMMIT instead of one each (~13 per run); a write alone in its turn
   * is committed alone, as before. Each call still resolves only after its row is committed, which
   * is what LangGraph waits for (durability "sync" and the end of a run), and the writes keep their
   * call order.
   *
   * `saver.db` is replaced by an accessor that first commits what is pending: SqliteSaver's own uses
   * of it (`list`, `deleteThread`, migrating pending sends), the gateway's checkpoint rewinder and `db.close()` at
   * shutdown then never act on the file behind a write that was already called, and closing cannot
   * drop a batch. `getTuple` reads through statements prepared once, so it flushes itself.
   *
   * The group commit waits for another connection's write lock asynchronously and leaves the
   * connection with `busy_timeout = 0` (issue 9). The accessor gives the connection its busy
   * timeout back (SqliteGroupCommit.forSynchronousUse): its users run their statements
   * synchronously, the rewinder's and `deleteThread`'s writes too, and can only let SQLite wait,
   * as they did before. Use `saver.db` at once, not kept across turns: after the next flush it is
   * back to 0.
   */
  constructor(db: Database, serde?: SerializerProtocol, schedule?: GroupCommitSchedule) {
    super(db, serde);
    this.connection = db;
    this.commits = new SqliteGroupCommit(db, schedule);
    this.dumpsNow = this.serde instanceof EmbeddedCheckpointSerializer ? (obj) => (this.serde as EmbeddedCheckpointSerializer).dumpsTypedNow(obj) : undefined;
    Object.defineProperty(this, 'db', {
      get: () => this.commits.forSynchronousUse(),
      enumerable: true,
      configurable: true,
    });
  }

  /** Commits the pending checkpoint writes now. */
  flush(): void {
    this.commits.flush();
  }

  /**
   * Its SELECTs run on the connection as the group commit left it, usually with `busy_timeout = 0`
   * (issue 9). A WAL read meets SQLITE_BUSY only in rare windows (another connection recovering or
   * restarting the WAL); a read changes nothing, so it is tried again after an asynchronous sleep,
   * up to the busy timeout, rather than given a synchronous busy timeout that would cost two
   * statements per read and stop the thread while it waits.
   */
  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    // The writes called before it are committed first, so that it reads them; awaited, not flushed
    // synchronously: a batch waiting for another thread's lock would make SQLite sleep here with the
    // event loop (every run start reads its checkpoint).
    await this.commits.committed();
    return super.getTuple(config).catch((err: unknown) => {
      if (!isSqliteBusy(err)) throw err;
      return retryWhileSqliteBusy(() => super.getTuple(config), Date.now() + this.commits.busyTimeoutMs);
    });
  }

  /** SqliteSaver's row and statement, committed through the group commit. */
  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    this.setup();
    const c = config.configurable;
    if (!c) throw new Error('Empty configuration supplied.');
    const threadId = c.thread_id as string | undefined;
    const checkpointNs = (c.checkpoint_ns as string | undefined) ?? '';
    if (!threadId) throw new Error('Missing "thread_id" field in passed "config.configurable".');
    const [[type1, serializedCheckpoint], [type2, serializedMetadata]] = this.dumpsNow
      ? [this.dumpsNow(copyCheckpoint(checkpoint)), this.dumpsNow(metadata)]
      : await Promise.all([this.serde.dumpsTyped(copyCheckpoint(checkpoint)), this.serde.dumpsTyped(metadata)]);
    if (type1 !== type2) throw new Error('Failed to serialized checkpoint and metadata to the same type.');
    const row = [threadId, checkpointNs, checkpoint.id, c.checkpoint_id, type1, serializedCheckpoint, serializedMetadata];
    await this.commits.run(() =>
      this.connection
        .prepare(
          'INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(...row),
    );
    return { configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: checkpoint.id } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    this.setup();
    const c = config.configurable;
    if (!c) throw new Error('Empty configuration supplied.');
    if (!c.thread_id) throw new Error('Missing thread_id field in config.configurable.');
    if (!c.checkpoint_id) throw new Error('Missing checkpoint_id field in config.configurable.');
    const allSpecial = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const row = (channel: string, idx: number, [type, serialized]: [string, Uint8Array]): unknown[] => [
      c.thread_id,
      c.checkpoint_ns,
      c.checkpoint_id,
      taskId,
      WRITES_IDX_MAP[channel] ?? idx,
      channel,
      type,
      serialized,
    ];
    const dumpsNow = this.dumpsNow;
    const rows = dumpsNow
      ? writes.map(([channel, value], idx) => row(channel, idx, dumpsNow(value)))
      : await Promise.all(writes.map(async ([channel, value], idx) => row(channel, idx, await this.serde.dumpsTyped(value))));
    if (rows.length === 0) return;
    const insert = (chunk: unknown[][]) =>
      this.connection
        .prepare(`INSERT ${allSpecial ? 'OR REPLACE' : 'OR IGNORE'} INTO writes ${COLUMNS} VALUES ${chunk.map(() => ROW).join(', ')}`)
        .run(...chunk.flat());
    if (rows.length <= WRITES_PER_STATEMENT) {
      await this.commits.run(() => insert(rows));
      return;
    }
    // A savepoint when the group commit runs it inside its transaction: still all or nothing.
    await this.commits.run(
      this.connection.transaction(() => {
        for (let i = 0; i < rows.length; i += WRITES_PER_STATEMENT) insert(rows.slice(i, i + WRITES_PER_STATEMENT));
      }),
    );
  }
}

/**
 * The embedded checkpointer over `file` (`:memory:` for a private in-memory database); `schedule` is
 * for tests; `walAutocheckpointPages` when a WalCheckpointer checkpoints the file (libs/store).
 */
export function openEmbeddedCheckpointer(file: string, schedule?: GroupCommitSchedule, walAutocheckpointPages?: number): EmbeddedSqliteSaver {
  return new EmbeddedSqliteSaver(openCheckpointSqlite(file, undefined, walAutocheckpointPages), new EmbeddedCheckpointSerializer(), schedule);
}
