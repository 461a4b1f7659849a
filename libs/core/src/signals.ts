import type { Logger } from './logger.js';

/** The part of `process` that `exitOnSignals` uses (a test passes its own). */
export interface SignalTarget {
  on(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  exit(code: number): never | void;
}

/**
 * How every service process ends (cluster mode): on SIGTERM or SIGINT it logs `shutting down`
 * once, runs `stop` — the service's own order (stop taking work, let what is in flight finish,
 * close connections, flush telemetry) — and exits 0; a second signal while stopping is ignored.
 * A `stop` that throws is logged and the process exits 1, so an orchestrator (Kubernetes, the
 * local supervisor) sees the failure instead of a hang.
 */
export function exitOnSignals(logger: Logger, stop: () => Promise<void>, target: SignalTarget = process): void {
  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await stop();
    } catch (err) {
      logger.error({ err: err instanceof Error ? err.message : String(err) }, 'shutdown failed');
      target.exit(1);
      return;
    }
    target.exit(0);
  };
  target.on('SIGTERM', () => void shutdown('SIGTERM'));
  target.on('SIGINT', () => void shutdown('SIGINT'));
}
