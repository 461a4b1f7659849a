import type { MethodImpl, ServiceShape } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import type { ToolRunner } from '@agentloop/proto';
import type { McpToolProvider } from '../provider.js';

/**
 * ListTools (`agentloop.mcp.tools.list`): the MCP tools a run may see — always-available ones, plus the tools
 * and servers named in `mentioned` / `allowed` — for the request's tenant. Servers with nothing to
 * show are not started; servers still starting at the request deadline join the next listing.
 */
export function listTools(provider: Pick<McpToolProvider, 'list'>, logger: Logger): MethodImpl<ServiceShape<typeof ToolRunner>, 'listTools'> {
  return async (req, call) => {
    try {
      const input = {
        tenantId: call.tenantId,
        mentioned: req.mentioned,
        allowed: req.allowed,
        ...(call.deadline !== undefined ? { deadline: call.deadline } : {}),
      };
      return await provider.list(input);
    } catch (err) {
      // An optional provider: a failure lists nothing rather than failing the caller's listing.
      logger.warn({ tenant: call.tenantId, err: errorMessage(err) }, 'listing MCP tools failed');
      return {};
    }
  };
}
