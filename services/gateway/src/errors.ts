import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/** One invalid field of a request, as returned in a 422 body. */
export interface FieldIssue {
  /** Dotted location, e.g. "body.assistant_id" or "params.thread_id". */
  path: string;
  message: string;
}

/**
 * An error with the HTTP status the gateway answers with. The body is always
 * `{ detail }` (plus `errors` for validation failures), like the LangGraph API.
 */
export class HttpError extends AgentLoopError {
  override name = 'HttpError';
  readonly statusCode: number;
  constructor(statusCode: number, code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.statusCode = statusCode;
  }
}

/** 422: the request does not match the schema. */
export class RequestValidationError extends HttpError {
  override name = 'RequestValidationError';
  readonly issues: FieldIssue[];
  constructor(issues: FieldIssue[]) {
    super(422, 'INVALID_ARGUMENT', `Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`);
    this.issues = issues;
  }
}

/** 401: no API key, or an unknown one. */
export class UnauthenticatedError extends HttpError {
  override name = 'UnauthenticatedError';
  constructor(message: string) {
    super(401, 'PERMISSION_DENIED', message);
  }
}

export const notFound = (message: string): HttpError => new HttpError(404, 'NOT_FOUND', message);
export const conflict = (message: string): HttpError => new HttpError(409, 'CONFLICT', message);
export const invalid = (path: string, message: string): RequestValidationError => new RequestValidationError([{ path, message }]);

/** HTTP status for any error reaching the error handler. */
export function statusOf(err: unknown): number {
  if (err instanceof HttpError) return err.statusCode;
  if (err instanceof AgentLoopError) {
    switch (err.code) {
      case 'INVALID_ARGUMENT':
      case 'PATH_OUTSIDE_WORKSPACE':
        return 422;
      case 'NOT_FOUND':
        return 404;
      case 'CONFLICT':
        return 409;
      case 'PERMISSION_DENIED':
        return 403;
      case 'TIMEOUT':
        return 504;
      case 'UNAVAILABLE':
        return 503;
      case 'TOOL_FAILED':
      case 'CONFIG':
      case 'INTERNAL':
        return 500;
    }
  }
  const sc = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof sc === 'number' && sc >= 400 && sc < 600 ? sc : 500;
}
