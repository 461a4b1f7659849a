import type { RequestHandler } from '@agentloop/bus';
import { AgentLoopError, errorMessage, type Logger } from '@agentloop/core';
import { ErrorSchema, ExecuteToolRequestSchema, ExecuteToolResponseSchema, create, fromBinary, toBinary } from '@agentloop/proto';
import type { ExecuteOutput, McpToolProvider } from '../provider.js';
import { requestTenant } from './tenant.js';

/**
 * `agentloop.mcp.tools.execute`: always replies with an ExecuteToolResponse; a failure (unknown
 * tool, server down, timeout, crash, isError result) is "Error: ..." content plus `error`.
 */
export function executeToolHandler(provider: McpToolProvider, logger: Logger): RequestHandler {
  return async (msg, ctx) => {
    let out: ExecuteOutput;
    let log = logger;
    try {
      const req = fromBinary(ExecuteToolRequestSchema, msg.data);
      const tenantId = requestTenant(msg, req.tenantId);
      log = logger.child({ tenant: tenantId, run_id: req.runId || undefined, tool: req.toolName });
      const input = { tenantId, toolName: req.toolName, argsJson: req.argsJson, signal: ctx.signal, ...(ctx.deadline !== undefined ? { deadline: ctx.deadline } : {}) };
      out = await provider.execute(input);
    } catch (err) {
      const message = err instanceof AgentLoopError ? err.message : `Invalid request: ${errorMessage(err)}`;
      const code = err instanceof AgentLoopError ? err.code : 'INVALID_ARGUMENT';
      out = { content: `Error: ${message}`, error: { code, message, retryable: false }, durationMs: 0, idempotent: false };
    }
    if (out.error) log.info({ ms: out.durationMs, code: out.error.code, err: out.error.message.slice(0, 300) }, 'MCP tool call failed');
    else log.info({ ms: out.durationMs }, 'MCP tool call');
    return toBinary(
      ExecuteToolResponseSchema,
      create(ExecuteToolResponseSchema, {
        content: out.content,
        error: out.error ? create(ErrorSchema, out.error) : undefined,
        durationMs: BigInt(out.durationMs),
        idempotent: out.idempotent,
      }),
    );
  };
}
