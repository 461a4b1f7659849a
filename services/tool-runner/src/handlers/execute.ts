import { Headers, type MethodImpl, type ServiceShape } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import type { ToolRunner } from '@agentloop/proto';
import type { ToolExecutor, ToolResult } from '../executor.js';
import type { ReplayLog, ReplayReply } from '../replay-log.js';

/**
 * ExecuteTool (`agentloop.tools.execute`): a failed tool is an "Error: ..." content plus `error`
 * (a malformed request or another tenant's too: see TOOL_RUNNER_RPC in @agentloop/bus).
 */
export function executeTool(executor: ToolExecutor, logger: Logger, replay?: ReplayLog): MethodImpl<ServiceShape<typeof ToolRunner>, 'executeTool'> {
  return async (req, ctx) => {
    let result: ToolResult;
    const tenantId = ctx.tenantId;
    const key = ctx.headers[Headers.idempotencyKey];
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
    } else if (ctx.headers[Headers.replayOnly] === '1') {
      // Asked what became of an earlier call; never executes.
      const entry = await replay.get(tenantId, req.threadId, key);
      result = !entry
        ? failure('NOT_EXECUTED', `Tool call ${key} never reached a tool-runner`)
        : entry.state === 'completed'
          ? fromEntry(entry)
          : failure('IN_PROGRESS', `Tool call ${key} was started and has not completed`);
    } else {
      const existing = ctx.headers[Headers.reexecute] === '1' ? undefined : await replay.begin(tenantId, req.threadId, key, req.toolName, req.runId);
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
    return { content: result.content, error: result.error, durationMs: BigInt(result.durationMs), idempotent: result.idempotent };
  };
}

function fromEntry(e: ReplayReply): ToolResult {
  return { content: e.content, error: e.error, durationMs: e.durationMs, idempotent: e.idempotent };
}

function failure(code: string, message: string): ToolResult {
  return { content: `Error: ${message}`, error: { code, message, retryable: false }, durationMs: 0, idempotent: false };
}
