import { Headers, type BusMessage } from '@agentloop/bus';
import { AgentLoopError, errorMessage, type Logger } from '@agentloop/core';
import { create, ErrorSchema, type WireError } from '@agentloop/proto';
import { SkillSandboxError } from '../errors.js';

/**
 * The tenant of a request: the body's tenant_id, else the tenant header. When both are set they
 * must agree (a caller cannot act for another tenant by editing the body).
 */
export function tenantOf(msg: BusMessage, bodyTenant: string): string {
  const header = msg.headers[Headers.tenant];
  if (bodyTenant && header && bodyTenant !== header) {
    throw new SkillSandboxError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
  }
  return bodyTenant || header || '';
}

/**
 * A local error as the proto Error; an unexpected one is logged and reported as INTERNAL. The
 * message goes through `redact` (host paths → logical names, redaction.ts) either way.
 */
export function toWire(err: unknown, logger: Logger, what: string, redact: (s: string) => string): WireError {
  if (err instanceof AgentLoopError) return create(ErrorSchema, { code: err.code, message: redact(err.message), retryable: err.retryable });
  logger.error({ err: errorMessage(err) }, `${what} failed`);
  return create(ErrorSchema, { code: 'INTERNAL', message: `The skill sandbox failed: ${redact(errorMessage(err))}`, retryable: false });
}
