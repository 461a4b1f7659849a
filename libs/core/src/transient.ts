/**
 * Whether a failure is the infrastructure's (for now) rather than the caller's: the orchestrator
 * retries such a run from its checkpoint instead of ending it as `error`, and the gateway answers
 * 503 (retry) instead of 500 and keeps a long wait going through it.
 */
import { UnavailableError } from './errors.js';

/** Error codes of a database (mysql2) or socket that is down, restarting or dropped the connection. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CON_COUNT_ERROR',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_QUERY_INTERRUPTED',
  'ER_CONNECTION_KILLED',
  'ER_CLIENT_INTERACTION_TIMEOUT',
]);

/**
 * Whether an error (or one of its causes) says the infrastructure is unreachable for now — a
 * server restarting, a dropped connection — rather than that the request or run itself is wrong.
 */
export function isTransientInfraError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof UnavailableError) return true;
    const x = e as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof x.code === 'string' && TRANSIENT_CODES.has(x.code)) return true;
    if (x.name === 'MaxRetriesPerRequestError') return true;
    if (typeof x.message === 'string' && /Connection is closed|Connection lost|server closed the connection|connect ECONNREFUSED/i.test(x.message)) return true;
    e = x.cause;
  }
  return false;
}
