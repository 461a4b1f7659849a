/**
 * WAL checkpoints of embedded mode's SQLite files, run by a thread of their own (issue 9).
 *
 * In WAL mode every commit appends the pages it changed to the `-wal` file, and a *checkpoint*
 * copies them back into the database file so the WAL can start over. By default the connection
 * whose commit takes the WAL past 1,000 pages runs that checkpoint inside its COMMIT: on the
 * embedded main thread (or an orchestrator thread) that is the event loop copying pages and
 * syncing the file, about 0.75–1.1 ms of each run's ~18 ms of wall time measured with
 * bench/throughput/embedded-cost.ts (bench/throughput README, "WAL checkpoints off the event
 * loop"). Here a worker thread does it instead, on its own connection to each file, every
 * `intervalMs`, in SQLite's PASSIVE mode: it never waits for, or blocks, a reader or a writer.
 *
 * What stays with the writers: a checkpoint that runs while writers append cannot copy the frames
 * they append meanwhile, and SQLite starts the WAL over only after a checkpoint that copied every
 * frame. So the writers' connections keep an automatic checkpoint at a higher threshold
 * (`BACKGROUND_AUTOCHECKPOINT_PAGES`, set with `walAutocheckpointPages` of each opener): when the
 * WAL reaches it, the writer's own checkpoint copies only what the thread has not copied yet (the
 * last interval's pages) and the WAL starts over. If the thread stops or falls behind, the writers
 * checkpoint as before, at that threshold, so the WAL stays bounded either way.
 *
 * Durability is SQLite's own: the same checkpoint, the same `synchronous` setting, only another
 * connection and thread running it. A crash at any point leaves what a crash during an automatic
 * checkpoint leaves.
 */
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import type { Logger } from '@agentloop/core';

/**
 * The writers' automatic checkpoint threshold while a WalCheckpointer runs (SQLite's default is
 * 1,000 pages): 4,000 pages of 4 KiB is a WAL of at most ~16 MiB per file.
 */
export const BACKGROUND_AUTOCHECKPOINT_PAGES = 4000;

/** How often the thread checkpoints each file by default. */
export const DEFAULT_WAL_CHECKPOINT_INTERVAL_MS = 100;

export interface WalCheckpointerOptions {
  /** The SQLite files (WAL mode) to checkpoint; each must exist before its first checkpoint. */
  files: readonly string[];
  intervalMs?: number;
  /** Where a file that cannot be checkpointed is reported (once until it can be again). */
  logger?: Pick<Logger, 'warn'>;
}

/** What the thread did, per file, for tests and the bench. */
export interface WalCheckpointStats {
  file: string;
  /** Checkpoints run. */
  checkpoints: number;
  /** WAL frames (pages) copied into the database file. */
  pagesCopied: number;
}

type FromThread = { t: 'error'; file: string; message: string } | { t: 'ok'; file: string } | { t: 'stats'; stats: WalCheckpointStats[] };

// CommonJS run with `eval: true`, so it needs no build step and no TypeScript loader (embedded
// mode runs from sources too). The SQLite driver is resolved by the parent and passed in.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const open = new Map();
const stats = new Map(workerData.files.map((file) => [file, { file, checkpoints: 0, pagesCopied: 0 }]));
const failing = new Set();
let stopping = false;
function checkpoint(file) {
  try {
    let db = open.get(file);
    if (!db) {
      db = new Database(file, { fileMustExist: true });
      // PASSIVE never waits for a lock; nothing this connection runs needs SQLite to wait.
      db.pragma('busy_timeout = 0');
      open.set(file, db);
    }
    const row = db.pragma('wal_checkpoint(PASSIVE)')[0];
    const s = stats.get(file);
    s.checkpoints += 1;
    // "checkpointed" counts the frames copied since the WAL last started over (a smaller count: it did).
    const copied = row && row.checkpointed > 0 ? row.checkpointed : 0;
    s.pagesCopied += copied >= s.lastCheckpointed ? copied - s.lastCheckpointed : copied;
    s.lastCheckpointed = copied;
    if (failing.delete(file)) parentPort.postMessage({ t: 'ok', file });
  } catch (err) {
    if (!failing.has(file)) parentPort.postMessage({ t: 'error', file, message: String((err && err.message) || err) });
    failing.add(file);
  }
}
function tick() {
  if (stopping) return;
  for (const file of workerData.files) checkpoint(file);
  timer = setTimeout(tick, workerData.intervalMs);
}
for (const s of stats.values()) s.lastCheckpointed = 0;
let timer = setTimeout(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m === 'stats') parentPort.postMessage({ t: 'stats', stats: [...stats.values()].map(({ file, checkpoints, pagesCopied }) => ({ file, checkpoints, pagesCopied })) });
  if (m !== 'stop') return;
  stopping = true;
  clearTimeout(timer);
  for (const db of open.values()) { try { db.close(); } catch {} }
  parentPort.close();
});
`;

/** A running checkpoint thread; `stop()` ends it (idempotent). */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  private statsWaiters: Array<(s: WalCheckpointStats[]) => void> = [];

  private constructor(opts: WalCheckpointerOptions) {
    const files = opts.files.filter((f) => f !== ':memory:' && f !== '');
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { files, driver, intervalMs: Math.max(1, Math.floor(opts.intervalMs ?? DEFAULT_WAL_CHECKPOINT_INTERVAL_MS)) },
      // Its own small heap: it holds a few connections and numbers.
      resourceLimits: { maxOldGenerationSizeMb: 16 },
    });
    // It never keeps the process alive: a process that forgets stop() still exits.
    this.worker.unref();
    this.worker.on('message', (m: FromThread) => {
      if (m.t === 'error') opts.logger?.warn({ file: m.file, err: m.message }, 'WAL checkpoint failed; the writers checkpoint this file themselves meanwhile');
      if (m.t === 'stats') for (const w of this.statsWaiters.splice(0)) w(m.stats);
    });
    this.exited = new Promise<void>((resolve) => {
      this.worker.once('exit', () => resolve());
      // A thread that cannot start (or dies) leaves the writers' own checkpoints: log, never throw.
      this.worker.once('error', (err) => opts.logger?.warn({ err: err.message }, 'WAL checkpoint thread stopped; the writers checkpoint the files themselves'));
    });
  }

  /** Starts the thread; its first checkpoint runs after `intervalMs`. */
  static start(opts: WalCheckpointerOptions): WalCheckpointer {
    return new WalCheckpointer(opts);
  }

  /** What the thread did so far (undefined once it has stopped). */
  async stats(): Promise<WalCheckpointStats[] | undefined> {
    const got = new Promise<WalCheckpointStats[]>((resolve) => this.statsWaiters.push(resolve));
    this.worker.postMessage('stats');
    return Promise.race([got, this.exited.then(() => undefined)]);
  }

  /** Closes the thread's connections (the last one to close a file checkpoints it) and ends it. */
  async stop(): Promise<void> {
    this.worker.postMessage('stop');
    await this.exited;
  }
}
