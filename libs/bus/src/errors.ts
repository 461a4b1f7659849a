import { AgentLoopError, type ErrorCode } from '@agentloop/core';
import { toWireError } from '@agentloop/proto';

const KNOWN_CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'INVALID_ARGUMENT',
  'NOT_FOUND',
  'CONFLICT',
  'TIMEOUT',
  'UNAVAILABLE',
  'PERMISSION_DENIED',
  'PATH_OUTSIDE_WORKSPACE',
  'TOOL_FAILED',
  'CONFIG',
  'INTERNAL',
]);

/**
 * A request handler on the other side threw. `code` is the remote error code
 * when it is one of ours (otherwise INTERNAL, with the original in
 * `remoteCode`); `retryable` is what the remote side said.
 */
export class RemoteError extends AgentLoopError {
  override name = 'RemoteError';
  /** The code exactly as the remote side sent it. */
  readonly remoteCode: string;
  /** Subject of the request that failed. */
  readonly subject: string;
  constructor(subject: string, remoteCode: string, message: string, retryable: boolean) {
    super(KNOWN_CODES.has(remoteCode) ? (remoteCode as ErrorCode) : 'INTERNAL', message, { retryable });
    this.remoteCode = remoteCode;
    this.subject = subject;
  }
}

interface ErrorHeaderJson {
  code: string;
  message: string;
  retryable: boolean;
}

/** The `agentloop-error` header value for a thrown value: JSON {code,message,retryable}. */
export function encodeErrorHeader(err: unknown): string {
  const w = toWireError(err);
  const body: ErrorHeaderJson = { code: w.code, message: w.message, retryable: w.retryable };
  return JSON.stringify(body);
}

/** Parses an `agentloop-error` header; a malformed value still yields an INTERNAL RemoteError. */
export function decodeErrorHeader(subject: string, value: string): RemoteError {
  try {
    const v = JSON.parse(value) as Partial<ErrorHeaderJson>;
    return new RemoteError(
      subject,
      typeof v.code === 'string' ? v.code : 'INTERNAL',
      typeof v.message === 'string' ? v.message : 'remote handler failed',
      v.retryable === true,
    );
  } catch {
    return new RemoteError(subject, 'INTERNAL', value, false);
  }
}
