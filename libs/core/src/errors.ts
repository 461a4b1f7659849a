/**
 * Local error classes. They never cross the wire as-is: `toWireError` in
 * @agentloop/proto maps them to the proto `Error` (code, message, retryable).
 */
export type ErrorCode =
  /** A field is invalid (the message names it). */
  | 'INVALID_ARGUMENT'
  /** The request itself cannot be read (not JSON, malformed multipart, nested too deep). */
  | 'MALFORMED_REQUEST'
  | 'NOT_FOUND'
  /** What the request would create exists already (a thread or assistant id). */
  | 'ALREADY_EXISTS'
  /** The target's state does not allow it (busy thread, finished run). */
  | 'CONFLICT'
  /** A request over the bus (or a tool) got no answer before its deadline. */
  | 'TIMEOUT'
  /** A client's wait (runs/wait, join) reached the server's limit; the work goes on. */
  | 'WAIT_TIMEOUT'
  | 'UNAVAILABLE'
  /** No API key, or an unknown one. */
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  /** A rate limit or quota: retry later. */
  | 'RESOURCE_EXHAUSTED'
  /** A body or file over a size limit. */
  | 'TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  /** This deployment does not offer it (e.g. rollback without checkpoint access). */
  | 'UNIMPLEMENTED'
  /** No space left to store what was sent. */
  | 'STORAGE_FULL'
  | 'PATH_OUTSIDE_WORKSPACE'
  | 'TOOL_FAILED'
  | 'CONFIG'
  | 'INTERNAL';

export class AgentLoopError extends Error {
  override name = 'AgentLoopError';
  readonly code: ErrorCode;
  readonly retryable: boolean;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options?.retryable ?? (code === 'TIMEOUT' || code === 'UNAVAILABLE');
  }
}

/** A request over the bus got no reply before its deadline. */
export class TimeoutError extends AgentLoopError {
  override name = 'TimeoutError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('TIMEOUT', message, { ...options, retryable: true });
  }
}

/** Nobody serves a subject, or a server/connection is down. */
export class UnavailableError extends AgentLoopError {
  override name = 'UnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('UNAVAILABLE', message, { ...options, retryable: true });
  }
}

/** A configuration value is missing or invalid; the process must not start. */
export class ConfigError extends AgentLoopError {
  override name = 'ConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG', message, { ...options, retryable: false });
  }
}

export class NotFoundError extends AgentLoopError {
  override name = 'NotFoundError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('NOT_FOUND', message, { ...options, retryable: false });
  }
}

export class InvalidArgumentError extends AgentLoopError {
  override name = 'InvalidArgumentError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, { ...options, retryable: false });
  }
}

/** Exhaustive-switch guard. */
export function assertNever(value: never, what = 'value'): never {
  throw new AgentLoopError('INTERNAL', `Unexpected ${what}: ${JSON.stringify(value)}`);
}

/** Message of an unknown thrown value, without a stack trace. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : JSON.stringify(err);
}
