import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export interface LoggerOptions {
  service: string;
  level?: string;
  destination?: DestinationStream;
}

/**
 * JSON-lines logger with the fields every line must carry (`service`); callers
 * add `component`, `tenant`, `run_id`, `trace_id` through `child()`.
 */
export function createLogger(opts: LoggerOptions): Logger {
  const level = opts.level ?? process.env.LOG_LEVEL ?? 'info';
  const base = { service: opts.service };
  return opts.destination ? pino({ level, base }, opts.destination) : pino({ level, base });
}

/** A logger that drops everything, for tests. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
