import path from 'node:path';
import { ConfigError } from '@agentloop/core';
import { BACKGROUND_AUTOCHECKPOINT_PAGES } from '@agentloop/store';

/** Embedded mode's SQLite files, under DATA_DIR (the records file is SQLITE_PATH). */
export function embeddedSqliteFiles(dataDir: string, sqlitePath: string): { queue: string; checkpoints: string; records: string } {
  return { queue: path.join(dataDir, 'queue.sqlite'), checkpoints: path.join(dataDir, 'checkpoints.sqlite'), records: sqlitePath };
}

/**
 * SQLITE_WAL_CHECKPOINTS: who copies the WAL back into embedded mode's SQLite files.
 * - unset, empty or `thread` (the default): a thread of its own (libs/store wal-checkpointer.ts),
 *   so the threads that run requests and runs do not stop for it; their connections then
 *   checkpoint only past BACKGROUND_AUTOCHECKPOINT_PAGES;
 * - `inline`: SQLite's default, the connection whose commit fills the WAL past 1,000 pages.
 */
export function walCheckpointsInThread(env: NodeJS.ProcessEnv): boolean {
  const v = (env.SQLITE_WAL_CHECKPOINTS ?? '').trim();
  if (v === '' || v === 'thread') return true;
  if (v === 'inline') return false;
  throw new ConfigError(`SQLITE_WAL_CHECKPOINTS must be "thread" or "inline", not "${v}"`);
}

/** The `walAutocheckpointPages` option of this process's SQLite connections (undefined: SQLite's default). */
export function writerAutocheckpointPages(env: NodeJS.ProcessEnv): number | undefined {
  return walCheckpointsInThread(env) ? BACKGROUND_AUTOCHECKPOINT_PAGES : undefined;
}
