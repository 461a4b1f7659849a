import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { AgentLoopError, errorMessage, type ErrorCode, type Logger } from '@agentloop/core';
import { statusOf, withTransientAsUnavailable } from '../errors.js';
import { ERROR_STATUS } from '../error-codes.js';

/**
 * An error that names its gRPC status itself, for outcomes that only exist on a call (CANCELLED,
 * the call's own DEADLINE_EXCEEDED, UNAVAILABLE while the server stops). Every other error maps
 * by its code through the one table of error-codes.ts.
 */
export class GrpcStatusError extends AgentLoopError {
  override name = 'GrpcStatusError';
  readonly grpcCode: grpc.status;
  constructor(grpcCode: grpc.status, code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.grpcCode = grpcCode;
  }
}

/** Errors that are not ours (a library's, carrying an HTTP status) → gRPC codes. */
const BY_HTTP_STATUS: Readonly<Record<number, grpc.status>> = {
  400: grpc.status.INVALID_ARGUMENT,
  404: grpc.status.NOT_FOUND,
  413: grpc.status.RESOURCE_EXHAUSTED,
  415: grpc.status.INVALID_ARGUMENT,
  429: grpc.status.RESOURCE_EXHAUSTED,
};

export interface GrpcStatus {
  code: grpc.status;
  details: string;
}

/**
 * Any error → the status a gRPC client gets. The details are the error's own message (it says what
 * was wrong and what to do), passed through `redact` (host paths → names, redaction.ts), except for
 * INTERNAL, where they carry only a reference to the log line: an unexpected error's message may
 * name hosts, queries or paths.
 */
export function toGrpcStatus(thrown: unknown, logger: Logger, redact: (text: string) => string = (t) => t): GrpcStatus {
  const err = withTransientAsUnavailable(thrown);
  let code: grpc.status;
  if (err instanceof GrpcStatusError) code = err.grpcCode;
  else if (err instanceof AgentLoopError) code = ERROR_STATUS[err.code]?.grpc ?? grpc.status.INTERNAL;
  else {
    // Not ours: only a 4xx it carries is trusted to say something safe.
    const http = statusOf(err);
    code = http < 500 ? (BY_HTTP_STATUS[http] ?? grpc.status.FAILED_PRECONDITION) : grpc.status.INTERNAL;
  }
  if (code === grpc.status.INTERNAL) {
    const ref = randomUUID();
    logger.error({ err, ref, detail: errorMessage(err) }, 'grpc call failed');
    return { code, details: `Internal server error; the gateway logged it with ref ${ref}.` };
  }
  if (code === grpc.status.UNAVAILABLE) logger.warn({ detail: errorMessage(err) }, 'grpc call unavailable');
  else logger.debug({ code: grpc.status[code], detail: errorMessage(err) }, 'grpc call rejected');
  return { code, details: redact(err instanceof Error ? err.message : String(err)) };
}

/** The status as the error object grpc-js sends (unary callback, `emit('error')` on a stream). */
export function toServiceError(status: GrpcStatus): grpc.ServiceError {
  return Object.assign(new Error(status.details), { code: status.code, details: status.details, metadata: new grpc.Metadata() });
}
