import { isMainThread } from 'node:worker_threads';
import { pino, type DestinationStream } from 'pino';

/** Pending bytes (UTF-16 units, an upper bound for ASCII lines) past which lines are written without waiting for the turn's end. */
const MAX_PENDING = 64 * 1024;

/**
 * Standard output for log lines, one per process (embedded mode has a logger per service): the
 * lines logged during one turn of the event loop are handed to one asynchronous destination
 * together, in one write, when the turn ends (setImmediate). Before (issue 9), each service's
 * logger had its own `pino.destination(1)`: nearly every line became its own fs.write through the
 * thread pool and its callback, ~0.3 ms of every run's main-thread CPU for five lines. Lines keep
 * the order they were logged in, across loggers.
 *
 * What a crash leaves: the lines not written yet are written on process exit — process.exit, a
 * signal handler's exit, an uncaught exception all emit 'exit' — so a SIGKILL or an abort of V8
 * itself loses the lines still pending, as before. A worker thread writes each line at once
 * (before: asynchronously, with no flush at its exit, which pino registers on the main thread only).
 */
export function stdoutLines(): DestinationStream {
  if (!isMainThread) return pino.destination({ dest: 1, sync: true });
  let pending = '';
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === '') return;
    const lines = pending;
    pending = '';
    out.write(lines);
  };
  // Registered before the destination, so it runs before pino's own exit hook ends it (process
  // 'exit' listeners run in order): the turn's lines join the destination's buffer, then that hook
  // writes the buffer synchronously.
  process.on('exit', () => {
    flush();
    try {
      out.flushSync();
    } catch {
      // stdout already closed (EPIPE) or not writable now: nothing more can be done at exit.
    }
  });
  // Asynchronous (sonic-boom): a stdout reader that falls behind (a full pipe) makes lines wait in
  // memory rather than blocking this process's event loop.
  const out = pino.destination({ dest: 1, sync: false });
  return {
    write(line: string) {
      pending += line;
      if (pending.length >= MAX_PENDING) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    /** What `logger.flush()` calls: the pending lines, written now. */
    flush(cb?: (err?: Error) => void) {
      flush();
      cb?.();
    },
  } as DestinationStream;
}
