import { Headers, type RequestHandler } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, ErrorSchema, ExecuteToolRequestSchema, ExecuteToolResponseSchema } from '@agentloop/proto';
import type { ToolExecutor, ToolResult } from '../executor.js';

/**
 * `agentloop.tools.execute`: always replies with an ExecuteToolResponse, even
 * for a malformed request; a failed tool is an "Error: ..." content plus `error`.
 */
export function executeToolHandler(executor: ToolExecutor, logger: Logger): RequestHandler {
  return async (msg, ctx) => {
    let result: ToolResult;
    try {
      const req = fromBinary(ExecuteToolRequestSchema, msg.data);
      const headerTenant = msg.headers[Headers.tenant];
      if (req.tenantId && headerTenant && req.tenantId !== headerTenant) {
        logger.warn({ tenant: headerTenant, body_tenant: req.tenantId }, 'tenant header and request disagree');
        result = failure('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
      } else {
        result = await executor.execute(
          {
            tenantId: req.tenantId || headerTenant || '',
            threadId: req.threadId,
            runId: req.runId,
            toolCallId: req.toolCallId,
            toolName: req.toolName,
            argsJson: req.argsJson,
          },
          { signal: ctx.signal, deadline: ctx.deadline },
        );
      }
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'malformed ExecuteToolRequest');
      result = failure('INVALID_ARGUMENT', `Invalid request: ${errorMessage(err)}`);
    }
    return toBinary(
      ExecuteToolResponseSchema,
      create(ExecuteToolResponseSchema, {
        content: result.content,
        error: result.error ? create(ErrorSchema, result.error) : undefined,
        durationMs: BigInt(result.durationMs),
      }),
    );
  };
}

function failure(code: string, message: string): ToolResult {
  return { content: `Error: ${message}`, error: { code, message, retryable: false }, durationMs: 0 };
}
