import { AgentLoopError, isTransientInfraError, type ErrorCode } from '@agentloop/core';
import { ERROR_STATUS } from './error-codes.js';

/** One invalid field of a request, as returned in a 422 body. */
export interface FieldIssue {
  /** Dotted location, e.g. "body.assistant_id" or "params.thread_id". */
  path: string;
  message: string;
}

/**
 * An error of the API, by its code: the HTTP status and the gRPC code follow from the code
 * (error-codes.ts), so the same failure reads the same on both APIs. The HTTP body is always
 * `{ detail }` (plus `errors` for validation failures), like the LangGraph API.
 */
export class ApiError extends AgentLoopError {
  override name = 'ApiError';
  /** Seconds a client should wait before retrying (the HTTP `Retry-After` header). */
  readonly retryAfterS: number | undefined;
  /** Fields added to the HTTP body beside `detail` (e.g. which budget refused and when it resets). */
  readonly extra: Readonly<Record<string, unknown>> | undefined;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean; retryAfterS?: number; extra?: Record<string, unknown> }) {
    super(code, message, options);
    this.retryAfterS = options?.retryAfterS;
    this.extra = options?.extra;
  }
  /** The HTTP status of this error's code. */
  get statusCode(): number {
    return ERROR_STATUS[this.code].http;
  }
}

/** 422: the request does not match the schema. */
export class RequestValidationError extends ApiError {
  override name = 'RequestValidationError';
  readonly issues: FieldIssue[];
  constructor(issues: FieldIssue[]) {
    super('INVALID_ARGUMENT', `Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.issues = issues;
  }
}

/** 401: no API key, or an unknown one. */
export class UnauthenticatedError extends ApiError {
  override name = 'UnauthenticatedError';
  constructor(message: string) {
    super('UNAUTHENTICATED', message);
  }
}

export const notFound = (message: string): ApiError => new ApiError('NOT_FOUND', message);
export const conflict = (message: string): ApiError => new ApiError('CONFLICT', message);
export const alreadyExists = (message: string): ApiError => new ApiError('ALREADY_EXISTS', message);
export const invalid = (path: string, message: string): RequestValidationError => new RequestValidationError([{ path, message }]);

/** HTTP status for any error reaching the error handler: by code for ours, else the error's own statusCode (Fastify's), else 500. */
export function statusOf(err: unknown): number {
  if (err instanceof AgentLoopError) return ERROR_STATUS[err.code]?.http ?? 500;
  const sc = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof sc === 'number' && sc >= 400 && sc < 600 ? sc : 500;
}

/**
 * A driver's or socket's error saying a backing service is down for now (the database restarting,
 * a dropped connection: isTransientInfraError) as the 503 it is, so a client retries rather than
 * reading a 500; its own text (hosts, ports) stays in the log. Any other error is returned as is.
 */
export function withTransientAsUnavailable(err: unknown): unknown {
  if (err instanceof AgentLoopError || !isTransientInfraError(err)) return err;
  return new ApiError('UNAVAILABLE', 'A backing service (database or message bus) is unavailable for now; retry shortly.', { cause: err, retryAfterS: 1 });
}
