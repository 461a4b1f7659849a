/**
 * Embedded mode's checkpointer is LangGraph's SqliteSaver over a database whose statements are
 * cached, with its writes batched and a cheaper serializer (sqlite-checkpointer.ts): LangGraph's
 * official conformance suite proves none of it changes anything it can observe. Each checkpointer
 * gets its own in-memory database.
 */
import * as vitest from 'vitest';
import { openEmbeddedCheckpointer, type EmbeddedSqliteSaver } from './sqlite-checkpointer.js';

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
  checkpointerName: 'EmbeddedSqliteSaver',
  async createCheckpointer() {
    return openEmbeddedCheckpointer(':memory:');
  },
  async destroyCheckpointer(saver: EmbeddedSqliteSaver) {
    saver.db.close();
  },
});
