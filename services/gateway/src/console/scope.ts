import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

/**
 * Whose data an ops console read covers (issue 16): a tenant key sees its own tenant only; an
 * operator key (AGENTLOOP_ADMIN_KEYS) sees every tenant, or the one its `tenant_id` names.
 * `undefined` = every tenant. Enforced here, server-side: the console's UI only shows what it gets.
 */
export function viewedTenant(request: FastifyRequest, requested: string | undefined): string | undefined {
  if (request.isAdmin) return requested;
  if (requested !== undefined && requested !== request.tenantId) {
    throw new ApiError(
      'PERMISSION_DENIED',
      `query.tenant_id: this API key sees its own tenant (${request.tenantId}) only; other tenants need an operator key.`,
    );
  }
  return request.tenantId;
}

/** Whether a record of `tenantId` is visible to the request (another tenant's object is "not found"). */
export function canSee(request: FastifyRequest, tenantId: string): boolean {
  return request.isAdmin === true || tenantId === request.tenantId;
}
