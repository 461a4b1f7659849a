import type { BusMessage, RequestHandler } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, ErrorSchema, ExecuteToolRequestSchema, ExecuteToolResponseSchema, type ExecuteToolRequest } from '@agentloop/proto';
import type { SkillTools, ToolOutcome } from '../tools.js';
import { tenantOf } from './common.js';

/**
 * `agentloop.skills.tools.execute` (tool protocol): always replies with an ExecuteToolResponse, even
 * for a malformed request; a failure is "Error: ..." content plus `error`, as the tool-runner does.
 */
export function executeToolHandler(tools: SkillTools, logger: Logger): RequestHandler {
  const run = async (msg: BusMessage): Promise<ToolOutcome> => {
    let req: ExecuteToolRequest;
    try {
      req = fromBinary(ExecuteToolRequestSchema, msg.data);
    } catch (err) {
      logger.warn({ err: errorMessage(err) }, 'malformed ExecuteToolRequest');
      return failure('INVALID_ARGUMENT', `Invalid request: ${errorMessage(err)}`);
    }
    let tenantId: string;
    try {
      tenantId = tenantOf(msg, req.tenantId);
    } catch (err) {
      logger.warn({ tenant: req.tenantId }, 'tenant header and request disagree');
      return failure('PERMISSION_DENIED', errorMessage(err));
    }
    return tools.execute({ tenantId, threadId: req.threadId, toolName: req.toolName, argsJson: req.argsJson, subagent: req.subagent });
  };
  return async (msg) => {
    const outcome = await run(msg);
    return toBinary(
      ExecuteToolResponseSchema,
      create(ExecuteToolResponseSchema, {
        content: outcome.content,
        error: outcome.error ? create(ErrorSchema, outcome.error) : undefined,
        durationMs: BigInt(outcome.durationMs),
        idempotent: false,
      }),
    );
  };
}

function failure(code: string, message: string): ToolOutcome {
  return { content: `Error: ${message}`, error: { code, message, retryable: false }, durationMs: 0 };
}
