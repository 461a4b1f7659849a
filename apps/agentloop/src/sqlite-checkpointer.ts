/**
 * Embedded mode's checkpointer: LangGraph's SqliteSaver, its tables and rows unchanged, with
 * cached statements (openCheckpointSqlite), the cheaper serializer both savers share
 * (CheckpointSerializer: the same bytes) and a task's writes saved by one statement.
 */
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { WRITES_IDX_MAP, type PendingWrite } from '@langchain/langgraph-checkpoint';
import { CheckpointSerializer } from '@agentloop/checkpoint-mysql';
import { openCheckpointSqlite } from '@agentloop/store';

type RunnableConfig = Parameters<SqliteSaver['putWrites']>[0];

const COLUMNS = '(thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value)';
const ROW = '(?, ?, ?, ?, ?, ?, ?, ?)';

/**
 * Rows per INSERT. Far below SQLite's bound-parameter limit (8 per row; 999 in SQLite before 3.32),
 * and above the writes of any step the agent graph makes, so a step's writes are one statement.
 */
export const WRITES_PER_STATEMENT = 100;

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
  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    this.setup();
    const c = config.configurable;
    if (!c) throw new Error('Empty configuration supplied.');
    if (!c.thread_id) throw new Error('Missing thread_id field in config.configurable.');
    if (!c.checkpoint_id) throw new Error('Missing checkpoint_id field in config.configurable.');
    const allSpecial = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, serialized] = await this.serde.dumpsTyped(value);
        return [c.thread_id, c.checkpoint_ns, c.checkpoint_id, taskId, WRITES_IDX_MAP[channel] ?? idx, channel, type, serialized] as unknown[];
      }),
    );
    if (rows.length === 0) return;
    const insert = (chunk: unknown[][]) =>
      this.db
        .prepare(`INSERT ${allSpecial ? 'OR REPLACE' : 'OR IGNORE'} INTO writes ${COLUMNS} VALUES ${chunk.map(() => ROW).join(', ')}`)
        .run(...chunk.flat());
    if (rows.length <= WRITES_PER_STATEMENT) {
      insert(rows);
      return;
    }
    this.db.transaction(() => {
      for (let i = 0; i < rows.length; i += WRITES_PER_STATEMENT) insert(rows.slice(i, i + WRITES_PER_STATEMENT));
    })();
  }
}

/** The embedded checkpointer over `file` (`:memory:` for a private in-memory database). */
export function openEmbeddedCheckpointer(file: string): EmbeddedSqliteSaver {
  return new EmbeddedSqliteSaver(openCheckpointSqlite(file), new CheckpointSerializer());
}
