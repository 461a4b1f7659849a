import type { MethodImpl, ServiceShape } from '@agentloop/bus';
import type { Logger } from '@agentloop/core';
import type { ToolRunner } from '@agentloop/proto';
import type { McpToolProvider } from '../provider.js';

/**
 * ExecuteTool (`agentloop.mcp.tools.execute`): always replies with an ExecuteToolResponse; a failure (unknown
 * tool, server down, timeout, crash, isError result, malformed request, another tenant) is "Error: ..."
 * content plus `error` (MCP_TOOLS_RPC in @agentloop/bus).
 */
export function executeTool(provider: Pick<McpToolProvider, 'execute'>, logger: Logger): MethodImpl<ServiceShape<typeof ToolRunner>, 'executeTool'> {
  return async (req, call) => {
    const log = logger.child({ tenant: call.tenantId, run_id: req.runId || undefined, tool: req.toolName });
    const input = {
      tenantId: call.tenantId,
      ...(req.threadId ? { threadId: req.threadId } : {}),
      toolName: req.toolName,
      argsJson: req.argsJson,
      signal: call.signal,
      ...(call.deadline !== undefined ? { deadline: call.deadline } : {}),
    };
    const out = await provider.execute(input);
    if (out.error) log.info({ ms: out.durationMs, code: out.error.code, err: out.error.message.slice(0, 300) }, 'MCP tool call failed');
    else log.info({ ms: out.durationMs }, 'MCP tool call');
    return { content: out.content, error: out.error, durationMs: BigInt(out.durationMs), idempotent: out.idempotent };
  };
}
