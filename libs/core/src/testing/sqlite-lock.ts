/**
 * Test helpers shared by the libraries whose SQLite connections wait for another thread's write
 * lock (issue 9: libs/store's group commit, libs/queue's queue database). Not part of the runtime.
 */
import { Worker } from 'node:worker_threads';

export interface LockHeldElsewhere {
  /** Lets the other thread commit, `holdMs` after this call. */
  release(): void;
  /** Settles when the other thread has committed and exited. */
  done: Promise<void>;
}

/**
 * Another thread holding `file`'s write lock (BEGIN IMMEDIATE) until `release()`, then for `holdMs`
 * more, then committing: the one way a synchronous wait in this thread can see the lock released.
 * The thread loads better-sqlite3 as the calling test's package does (from the working directory).
 */
export async function lockedByAnotherThread(file: string, holdMs: number): Promise<LockHeldElsewhere> {
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     const db = new (require('better-sqlite3'))(workerData.file);
     db.exec('BEGIN IMMEDIATE');
     parentPort.postMessage('locked');
     Atomics.wait(workerData.signal, 0, 0);
     Atomics.wait(workerData.signal, 0, 1, workerData.holdMs);
     db.exec('COMMIT');
     db.close();`,
    { eval: true, workerData: { file, signal, holdMs } },
  );
  await new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject));
  const done = new Promise<void>((resolve, reject) => worker.once('exit', () => resolve()).once('error', reject));
  return {
    release: () => {
      Atomics.store(signal, 0, 1);
      Atomics.notify(signal, 0);
    },
    done,
  };
}
