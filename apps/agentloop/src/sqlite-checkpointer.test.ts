/**
 * Embedded mode's checkpointer is LangGraph's SqliteSaver over a database whose statements are
 * cached (openCheckpointSqlite): LangGraph's official conformance suite proves the cache changes
 * nothing it can observe. Each checkpointer gets its own in-memory database.
 */
import * as vitest from 'vitest';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { openCheckpointSqlite } from '@agentloop/store';

/**
 * SqliteSaver itself (without the cache too) stores every channel value in each checkpoint rather
 * than only the changed ones; the suite's test of that is expected to fail, and says so if the
 * upstream saver ever changes.
 */
const UPSTREAM_GAP = 'should only store channel_values that have changed (based on newVersions)';
const it = new Proxy(vitest.it, {
  apply(target, thisArg, args: Parameters<typeof vitest.it>) {
    return args[0] === UPSTREAM_GAP ? target.fails(...args) : Reflect.apply(target, thisArg, args);
  },
});

// The suite calls describe/it/expect/beforeAll... as globals (jest style).
const { describe, expect, beforeAll, afterAll, beforeEach, afterEach } = vitest;
Object.assign(globalThis, { describe, it, test: it, expect, beforeAll, afterAll, beforeEach, afterEach });
const { validate } = await import('@langchain/langgraph-checkpoint-validation');

validate({
  checkpointerName: 'SqliteSaver (cached statements)',
  async createCheckpointer() {
    return new SqliteSaver(openCheckpointSqlite(':memory:'));
  },
  async destroyCheckpointer(saver: SqliteSaver) {
    saver.db.close();
  },
});
