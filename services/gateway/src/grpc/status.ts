import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { AgentLoopError, errorMessage, type ErrorCode, type Logger } from '@agentloop/core';
import { statusOf } from '../errors.js';

/**
 * An error that names its gRPC status itself, for outcomes HTTP has no distinct status for
 * (ALREADY_EXISTS vs FAILED_PRECONDITION are both 409 there) or that only exist on a call
 * (CANCELLED, the call's own DEADLINE_EXCEEDED).
 */
export class GrpcStatusError extends AgentLoopError {
  override name = 'GrpcStatusError';
  readonly grpcCode: grpc.status;
  constructor(grpcCode: grpc.status, code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.grpcCode = grpcCode;
  }
}

export const alreadyExists = (message: string): GrpcStatusError => new GrpcStatusError(grpc.status.ALREADY_EXISTS, 'CONFLICT', message);

/** The gateway's HTTP statuses (errors.ts `statusOf`) → gRPC codes. 409 is FAILED_PRECONDITION unless the handler said ALREADY_EXISTS. */
const BY_HTTP_STATUS: Readonly<Record<number, grpc.status>> = {
  400: grpc.status.INVALID_ARGUMENT,
  401: grpc.status.UNAUTHENTICATED,
  403: grpc.status.PERMISSION_DENIED,
  404: grpc.status.NOT_FOUND,
  408: grpc.status.DEADLINE_EXCEEDED,
  409: grpc.status.FAILED_PRECONDITION,
  413: grpc.status.RESOURCE_EXHAUSTED,
  415: grpc.status.INVALID_ARGUMENT,
  422: grpc.status.INVALID_ARGUMENT,
  429: grpc.status.RESOURCE_EXHAUSTED,
  501: grpc.status.UNIMPLEMENTED,
  503: grpc.status.UNAVAILABLE,
  504: grpc.status.DEADLINE_EXCEEDED,
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
export function toGrpcStatus(err: unknown, logger: Logger, redact: (text: string) => string = (t) => t): GrpcStatus {
  let code: grpc.status;
  if (err instanceof GrpcStatusError) code = err.grpcCode;
  else {
    const http = statusOf(err);
    code = BY_HTTP_STATUS[http] ?? (http < 500 ? grpc.status.FAILED_PRECONDITION : grpc.status.INTERNAL);
    // Only the gateway's own errors (and 4xx-carrying ones) are trusted to say something safe.
    if (code !== grpc.status.INTERNAL && !(err instanceof AgentLoopError) && http >= 500) code = grpc.status.INTERNAL;
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
