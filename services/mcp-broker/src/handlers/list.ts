import type { RequestHandler } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { ListToolsRequestSchema, ListToolsResponseSchema, create, fromBinary, toBinary } from '@agentloop/proto';
import type { McpToolProvider } from '../provider.js';
import { requestTenant } from './tenant.js';

/**
 * `agentloop.mcp.tools.list`: the MCP tools a run may see — always-available ones, plus the tools
 * and servers named in `mentioned` / `allowed` — for the request's tenant. Servers with nothing to
 * show are not started; servers still starting at the request deadline join the next listing.
 */
export function listToolsHandler(provider: McpToolProvider, logger: Logger): RequestHandler {
  return async (msg, ctx) => {
    const req = fromBinary(ListToolsRequestSchema, msg.data);
    const tenantId = requestTenant(msg, req.tenantId);
    try {
      const input = { tenantId, mentioned: req.mentioned, allowed: req.allowed, ...(ctx.deadline !== undefined ? { deadline: ctx.deadline } : {}) };
      const { tools, notFound } = await provider.list(input);
      return toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools, notFound }));
    } catch (err) {
      // An optional provider: a failure lists nothing rather than failing the caller's listing.
      logger.warn({ tenant: tenantId, err: errorMessage(err) }, 'listing MCP tools failed');
      return toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, {}));
    }
  };
}
