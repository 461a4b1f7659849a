import { describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { silentLogger, TimeoutError, UnavailableError } from '@agentloop/core';
import { alreadyExists, ApiError, conflict, invalid, notFound, statusOf, UnauthenticatedError } from '../errors.js';
import { ERROR_STATUS } from '../error-codes.js';
import { toGrpcStatus } from './status.js';

const log = silentLogger();
const code = (err: unknown) => grpc.status[toGrpcStatus(err, log).code];

describe('toGrpcStatus', () => {
  it('maps the gateway HTTP errors to gRPC codes', () => {
    expect(code(notFound('Thread x not found.'))).toBe('NOT_FOUND');
    expect(code(invalid('input_json', 'is not valid JSON'))).toBe('INVALID_ARGUMENT');
    expect(code(new ApiError('MALFORMED_REQUEST', 'bad'))).toBe('INVALID_ARGUMENT');
    expect(code(new UnauthenticatedError('Invalid API key.'))).toBe('UNAUTHENTICATED');
    expect(code(new ApiError('RESOURCE_EXHAUSTED', 'quota'))).toBe('RESOURCE_EXHAUSTED');
    expect(code(new ApiError('UNAVAILABLE', 'stopping'))).toBe('UNAVAILABLE');
    expect(code(new ApiError('TIMEOUT', 'slow'))).toBe('DEADLINE_EXCEEDED');
    expect(code(new UnavailableError('queue down'))).toBe('UNAVAILABLE');
    expect(code(new TimeoutError('bus timeout'))).toBe('DEADLINE_EXCEEDED');
  });

  it('maps a conflict to FAILED_PRECONDITION and an existing id to ALREADY_EXISTS, both 409 on HTTP', () => {
    expect(code(conflict('Thread busy.'))).toBe('FAILED_PRECONDITION');
    expect(code(alreadyExists('Thread exists.'))).toBe('ALREADY_EXISTS');
    expect([statusOf(conflict('x')), statusOf(alreadyExists('x'))]).toEqual([409, 409]);
  });

  it('answers every error code with the same outcome on HTTP and gRPC (one table)', () => {
    for (const [errorCode, want] of Object.entries(ERROR_STATUS)) {
      const err = new ApiError(errorCode as keyof typeof ERROR_STATUS, 'x');
      expect([statusOf(err), toGrpcStatus(err, log).code], errorCode).toEqual([want.http, want.grpc]);
    }
    // A 4xx code never reads as a server failure on gRPC, nor a 5xx as a client mistake.
    for (const want of Object.values(ERROR_STATUS)) {
      expect(want.grpc === grpc.status.INTERNAL, JSON.stringify(want)).toBe(want.http === 500);
    }
  });

  it('passes the message of a known error on as the details', () => {
    expect(toGrpcStatus(notFound('Thread 42 not found.'), log).details).toBe('Thread 42 not found.');
  });

  it("answers UNAVAILABLE without the driver's text for a database that is down for now", () => {
    const status = toGrpcStatus(Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:3306'), { code: 'ECONNREFUSED' }), log);
    expect(grpc.status[status.code]).toBe('UNAVAILABLE');
    expect(status.details).not.toContain('10.0.0.7');
  });

  it('answers INTERNAL without the message for an unexpected error', () => {
    const status = toGrpcStatus(new Error('unexpected reply from 10.0.0.7:3306'), log);
    expect(grpc.status[status.code]).toBe('INTERNAL');
    expect(status.details).not.toContain('10.0.0.7');
    expect(status.details).toMatch(/ref [0-9a-f-]{36}/);
  });

  it('redacts host paths from the details with the redactor it is given, and INTERNAL stays opaque', () => {
    const redact = (t: string) => t.replaceAll('/srv/data/workspaces', '<workspace-root>');
    expect(toGrpcStatus(notFound("ENOENT: open '/srv/data/workspaces/acme/t/x'"), log, redact).details).toBe("ENOENT: open '<workspace-root>/acme/t/x'");
    const internal = toGrpcStatus(new Error('at /srv/data/workspaces/acme'), log, redact);
    expect(internal.details).not.toContain('workspace');
  });
});
