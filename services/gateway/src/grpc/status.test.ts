import { describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { silentLogger, TimeoutError, UnavailableError } from '@agentloop/core';
import { conflict, HttpError, invalid, notFound, UnauthenticatedError } from '../errors.js';
import { alreadyExists, toGrpcStatus } from './status.js';

const log = silentLogger();
const code = (err: unknown) => grpc.status[toGrpcStatus(err, log).code];

describe('toGrpcStatus', () => {
  it('maps the gateway HTTP errors to gRPC codes', () => {
    expect(code(notFound('Thread x not found.'))).toBe('NOT_FOUND');
    expect(code(invalid('input_json', 'is not valid JSON'))).toBe('INVALID_ARGUMENT');
    expect(code(new HttpError(400, 'INVALID_ARGUMENT', 'bad'))).toBe('INVALID_ARGUMENT');
    expect(code(new UnauthenticatedError('Invalid API key.'))).toBe('UNAUTHENTICATED');
    expect(code(new HttpError(429, 'UNAVAILABLE', 'quota'))).toBe('RESOURCE_EXHAUSTED');
    expect(code(new HttpError(503, 'UNAVAILABLE', 'stopping'))).toBe('UNAVAILABLE');
    expect(code(new HttpError(504, 'TIMEOUT', 'slow'))).toBe('DEADLINE_EXCEEDED');
    expect(code(new UnavailableError('queue down'))).toBe('UNAVAILABLE');
    expect(code(new TimeoutError('bus timeout'))).toBe('DEADLINE_EXCEEDED');
  });

  it('maps a conflict to FAILED_PRECONDITION, and to ALREADY_EXISTS when the handler says so', () => {
    expect(code(conflict('Thread busy.'))).toBe('FAILED_PRECONDITION');
    expect(code(alreadyExists('Thread exists.'))).toBe('ALREADY_EXISTS');
  });

  it('passes the message of a known error on as the details', () => {
    expect(toGrpcStatus(notFound('Thread 42 not found.'), log).details).toBe('Thread 42 not found.');
  });

  it('answers INTERNAL without the message for an unexpected error', () => {
    const status = toGrpcStatus(new Error('connect ECONNREFUSED 10.0.0.7:3306'), log);
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
