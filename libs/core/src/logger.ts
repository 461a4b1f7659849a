import { isMainThread } from 'node:worker_threads';
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export interface LoggerOptions {
  service: string;
  level?: string;
  destination?: DestinationStream;
  /**
   * Fields computed for every line, e.g. `trace_id`/`span_id` of the active span
   * (`traceLogFields` of @agentloop/telemetry: libs/core does not depend on OpenTelemetry).
   */
  mixin?: () => object;
  /**
   * Also hands every line to this function, synchronously inside the logging call (so the active
   * trace context is the caller's): `exportLogLine` of @agentloop/telemetry exports them over OTLP.
   */
  tee?: (line: string) => void;
}

/**
 * JSON-lines logger with the fields every line must carry (`service`, and with `mixin` the
 * trace of the work it is about); callers add `component`, `tenant`, `run_id` through `child()`.
 */
export function createLogger(opts: LoggerOptions): Logger {
  const level = opts.level ?? process.env.LOG_LEVEL ?? 'info';
  const options = { level, base: { service: opts.service }, ...(opts.mixin ? { mixin: opts.mixin } : {}) };
  const out = opts.destination ?? stdout();
  return pino(options, opts.tee ? teeTo(out, opts.tee) : out);
}

let shared: DestinationStream | undefined;

/**
 * Standard output, one destination for every logger of the process (embedded mode has one per
 * service): lines in the order they were logged, and written together when several are logged
 * before the previous write is done. Asynchronous on the main thread (issue 9: a synchronous
 * write(2) per line was ~0.1 ms of every run's CPU): a line is handed to the kernel a moment
 * after the logging call instead of inside it, and pino writes what is still pending
 * synchronously when the process exits — process.exit, a signal handler's exit, an uncaught
 * exception. Lost: the lines of the last instant before a SIGKILL or an abort of V8 itself.
 * A worker thread writes synchronously: pino flushes on exit only on the main thread.
 */
function stdout(): DestinationStream {
  shared ??= pino.destination({ dest: 1, sync: !isMainThread });
  return shared;
}

function teeTo(destination: DestinationStream, tee: (line: string) => void): DestinationStream {
  return {
    write(line: string) {
      destination.write(line);
      tee(line);
    },
  };
}

/** A logger that drops everything, for tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
