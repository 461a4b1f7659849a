import { pino, type Logger, type DestinationStream } from 'pino';
import { stdoutLines } from './stdout-lines.js';

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

/** Standard output, shared by every logger of the process (stdout-lines.ts). */
function stdout(): DestinationStream {
  shared ??= stdoutLines();
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
