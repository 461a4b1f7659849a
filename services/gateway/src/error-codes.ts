/**
 * One table from an error's code to what each transport answers (issue 10: errors are
 * transport-neutral). Code throws `AgentLoopError(code, message)` (or the helpers of errors.ts);
 * the HTTP error handler and the gRPC status mapping both read this table, so a code means the
 * same outcome on either API.
 */
import { status as GrpcCode } from '@grpc/grpc-js';
import type { ErrorCode } from '@agentloop/core';

export interface TransportStatus {
  http: number;
  grpc: GrpcCode;
}

export const ERROR_STATUS: Readonly<Record<ErrorCode, TransportStatus>> = {
  INVALID_ARGUMENT: { http: 422, grpc: GrpcCode.INVALID_ARGUMENT },
  PATH_OUTSIDE_WORKSPACE: { http: 422, grpc: GrpcCode.INVALID_ARGUMENT },
  MALFORMED_REQUEST: { http: 400, grpc: GrpcCode.INVALID_ARGUMENT },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, grpc: GrpcCode.INVALID_ARGUMENT },
  NOT_FOUND: { http: 404, grpc: GrpcCode.NOT_FOUND },
  ALREADY_EXISTS: { http: 409, grpc: GrpcCode.ALREADY_EXISTS },
  CONFLICT: { http: 409, grpc: GrpcCode.FAILED_PRECONDITION },
  UNAUTHENTICATED: { http: 401, grpc: GrpcCode.UNAUTHENTICATED },
  PERMISSION_DENIED: { http: 403, grpc: GrpcCode.PERMISSION_DENIED },
  RESOURCE_EXHAUSTED: { http: 429, grpc: GrpcCode.RESOURCE_EXHAUSTED },
  TOO_LARGE: { http: 413, grpc: GrpcCode.RESOURCE_EXHAUSTED },
  STORAGE_FULL: { http: 507, grpc: GrpcCode.RESOURCE_EXHAUSTED },
  WAIT_TIMEOUT: { http: 408, grpc: GrpcCode.DEADLINE_EXCEEDED },
  TIMEOUT: { http: 504, grpc: GrpcCode.DEADLINE_EXCEEDED },
  UNAVAILABLE: { http: 503, grpc: GrpcCode.UNAVAILABLE },
  UNIMPLEMENTED: { http: 501, grpc: GrpcCode.UNIMPLEMENTED },
  TOOL_FAILED: { http: 500, grpc: GrpcCode.INTERNAL },
  CONFIG: { http: 500, grpc: GrpcCode.INTERNAL },
  INTERNAL: { http: 500, grpc: GrpcCode.INTERNAL },
};
