import { Headers, type RequestHandler } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, ErrorSchema, ExecuteToolRequestSchema, ExecuteToolResponseSchema } from '@agentloop/proto';
import type { ToolExecutor, ToolResult } from '../executor.js';
import type { ReplayLog, ReplayReply } from '../replay-log.js';

/**
 * `agentloop.tools.execute`: always replies with an ExecuteToolResponse, even
 * for a malformed request; a failed tool is an "Error: ..." content plus `error`.
 */
export function executeToolHandler(executor: ToolExecutor, logger: Logger, replay?: ReplayLog): RequestHandler {
  return async (msg, ctx) => {
    let result: ToolResult;
    try {
      const req = fromBinary(ExecuteToolRequestSchema, msg.data);
      const headerTenant = msg.headers[Headers.tenant];
      if (req.tenantId && headerTenant && req.tenantId !== headerTenant) {
        logger.warn({ tenant: headerTenant, body_tenant: req.tenantId }, 'tenant header and request disagree');
        result = failure('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
      } else {
        const tenantId = req.tenantId || headerTenant || '';
        const key = msg.headers[Headers.idempotencyKey];
        const input = {
          tenantId,
          threadId: req.threadId,
          runId: req.runId,
          toolCallId: req.toolCallId,
          toolName: req.toolName,
          argsJson: req.argsJson,
          onDemand: req.onDemand,
          subagent: req.subagent,
        };
        const run = () => executor.execute(input, { signal: ctx.signal, deadline: ctx.deadline });
        // The replay log (two file writes and a rename per call) exists so a side effect never runs
        // twice; an idempotent call is simply run again, so it skips the log (issue 9). Asked later
        // what became of it, the log answers "never received" and the caller re-runs it — harmless.
        if (!key || !replay || executor.isIdempotentCall(input)) {
          result = await run();
        } else if (msg.headers[Headers.replayOnly] === '1') {
          // Asked what became of an earlier call; never executes.
          const entry = await replay.get(tenantId, req.threadId, key);
          result = !entry
            ? failure('NOT_EXECUTED', `Tool call ${key} never reached a tool-runner`)
            : entry.state === 'completed'
              ? fromEntry(entry)
              : failure('IN_PROGRESS', `Tool call ${key} was started and has not completed`);
        } else {
          const existing = msg.headers[Headers.reexecute] === '1' ? undefined : await replay.begin(tenantId, req.threadId, key, req.toolName);
          if (existing?.state === 'completed') result = fromEntry(existing);
          else if (existing) result = failure('IN_PROGRESS', `Tool call ${key} is already running (or its tool-runner stopped mid-way); it is not started twice`);
          else {
            result = await run();
            const reply = { content: result.content, error: result.error, durationMs: result.durationMs, idempotent: result.idempotent };
            await replay
              .complete(tenantId, req.threadId, key, req.toolName, reply)
              .catch((err: unknown) => logger.warn({ err: errorMessage(err), key }, 'could not record the reply of a tool call'));
          }
        }
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
        idempotent: result.idempotent,
      }),
    );
  };
}

function fromEntry(e: ReplayReply): ToolResult {
  return { content: e.content, error: e.error, durationMs: e.durationMs, idempotent: e.idempotent };
}

function failure(code: string, message: string): ToolResult {
  return { content: `Error: ${message}`, error: { code, message, retryable: false }, durationMs: 0, idempotent: false };
}
