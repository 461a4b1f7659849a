import type { ServiceImpl, ServiceShape } from '@agentloop/bus';
import { InvalidArgumentError } from '@agentloop/core';
import type { McpOAuth } from '@agentloop/proto';
import type { TenantAuthorizations } from '../oauth-flows.js';

function tenantOf(tenantId: string): string {
  if (!tenantId) throw new InvalidArgumentError('tenant_id is required');
  return tenantId;
}

/**
 * McpOAuth (`agentloop.mcp.oauth.*`): the authorization code flow of remote MCP servers per
 * tenant (oauth-flows.ts). Authorize, Status and Revoke act for the caller's tenant; Callback for
 * the tenant its `state` was issued to (the gateway's callback carries no API key).
 */
export function oauthHandlers(flows: () => TenantAuthorizations): ServiceImpl<ServiceShape<typeof McpOAuth>> {
  return {
    async authorize(req, call) {
      const res = await flows().authorize(tenantOf(call.tenantId), req.server, req.redirectUri, req.scopes);
      return { authorized: res.authorized, authorizationUrl: res.authorizationUrl ?? '' };
    },
    async callback(req) {
      return await flows().callback(req.state, req.code, req.error, req.errorDescription);
    },
    async status(_req, call) {
      const servers = await flows().status(tenantOf(call.tenantId));
      return { servers: servers.map((s) => ({ ...s, expiresAtMs: BigInt(s.expiresAtMs) })) };
    },
    async revoke(req, call) {
      return { removed: await flows().revoke(tenantOf(call.tenantId), req.server) };
    },
  };
}
