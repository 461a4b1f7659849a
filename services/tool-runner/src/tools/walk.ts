import { promises as fs, type Dir, type Dirent } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { errnoCode } from '@agentloop/workspace';

export interface WalkEntry {
  /** Host path: never show it. */
  abs: string;
  /** Names from the walk's root down to this entry. */
  names: readonly string[];
  /** The same names as arrays of code points (what glob matching works on). */
  segments: readonly (readonly string[])[];
  dirent: Dirent;
}

export interface WalkOptions {
  /** Levels read: 1 reads the root's entries only. */
  maxDepth: number;
  /** Directory entries read in all (hidden ones included); the walk stops there and says so. */
  maxEntries: number;
  signal: AbortSignal;
  /** Whether to descend into this folder. */
  enter(entry: WalkEntry): boolean;
  /** Called for every entry that is not a folder (files, symlinks, others). */
  visit(entry: WalkEntry): Promise<void> | void;
}

export interface WalkOutcome {
  examined: number;
  /** maxEntries was reached before the walk ended. */
  truncated: boolean;
}

/** Synchronous work after which the walk lets the event loop run (other calls, timers, the deadline). */
const SLICE_MS = 10;
/** Entries per read of a directory handle. */
const DIR_BUFFER = 256;

/**
 * Walks a folder tree without following symlinks and skipping hidden entries
 * (names starting with "."): iterative (an explicit stack, no recursion),
 * bounded in depth and in entries read, reading each folder through a handle so
 * a folder of millions of entries is never loaded whole, stopping when `signal`
 * aborts and yielding to the event loop every few milliseconds of work.
 */
export async function walkTree(root: string, opts: WalkOptions): Promise<WalkOutcome> {
  const stack: { abs: string; names: string[]; segments: string[][] }[] = [{ abs: root, names: [], segments: [] }];
  let examined = 0;
  let sliceStart = performance.now();
  const breathe = async () => {
    if (performance.now() - sliceStart < SLICE_MS) return;
    await nextTurn();
    opts.signal.throwIfAborted();
    sliceStart = performance.now();
  };

  while (stack.length > 0) {
    opts.signal.throwIfAborted();
    const dirInfo = stack.pop() as (typeof stack)[number];
    let dir: Dir;
    try {
      dir = await fs.opendir(dirInfo.abs, { bufferSize: DIR_BUFFER });
    } catch (err) {
      const code = errnoCode(err);
      // Gone or replaced since it was listed; the root itself was checked by the caller.
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES') continue;
      throw err;
    }
    try {
      for (let d = await dir.read(); d !== null; d = await dir.read()) {
        opts.signal.throwIfAborted();
        if (examined >= opts.maxEntries) return { examined, truncated: true };
        examined++;
        if (d.name.startsWith('.')) continue;
        const names = [...dirInfo.names, d.name];
        const segments = [...dirInfo.segments, Array.from(d.name)];
        const entry: WalkEntry = { abs: path.join(dirInfo.abs, d.name), names, segments, dirent: d };
        if (d.isDirectory()) {
          if (names.length < opts.maxDepth && opts.enter(entry)) stack.push({ abs: entry.abs, names, segments });
        } else {
          await opts.visit(entry);
        }
        await breathe();
      }
    } finally {
      await dir.close().catch(() => undefined);
    }
  }
  return { examined, truncated: false };
}
