import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteQueueDatabase } from './sqlite-database.js';
import { SqliteScheduler } from './sqlite-scheduler.js';
import { schedulerContract } from './testing/index.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-scheduler-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Each scheduler opens the file as a process of its own would (its own database, its own owner).
schedulerContract('SqliteScheduler', async (name) => {
  const database = new SqliteQueueDatabase({ path: join(dir, 'queues.db') });
  const scheduler = new SqliteScheduler(name, { database, pollMs: 100 });
  return {
    upsert: (s) => scheduler.upsert(s),
    remove: (id) => scheduler.remove(id),
    nextAt: (id) => scheduler.nextAt(id),
    process: (h, o) => scheduler.process(h, o),
    close: async () => {
      await scheduler.close();
      await database.close();
    },
  };
});
