import { publishToolProgress, type Bus, type MethodImpl, type ServiceShape } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import type { ToolRunner } from '@agentloop/proto';
import type { ExecuteInput, McpToolProvider } from '../provider.js';

/**
 * ExecuteTool (`agentloop.mcp.tools.execute`): always replies with an ExecuteToolResponse; a failure (unknown
 * tool, server down, timeout, crash, isError result, malformed request, another tenant) is "Error: ..."
 * content plus `error` (MCP_TOOLS_RPC in @agentloop/bus). The server's progress notifications are
 * published for the orchestrator running the call (libs/bus tool-progress.ts) when the request names its run.
 * A call that needs the user's input (the server's elicitation) replies with `elicitation` set and no
 * content; its retry carries the answer in `elicitation_answer_json` (elicitation.ts).
 */
export function executeTool(provider: Pick<McpToolProvider, 'execute'>, logger: Logger, bus?: Bus): MethodImpl<ServiceShape<typeof ToolRunner>, 'executeTool'> {
  return async (req, call) => {
    const log = logger.child({ tenant: call.tenantId, run_id: req.runId || undefined, tool: req.toolName });
    const input: ExecuteInput = {
      tenantId: call.tenantId,
      ...(req.threadId ? { threadId: req.threadId } : {}),
      toolName: req.toolName,
      argsJson: req.argsJson,
      signal: call.signal,
      ...(call.deadline !== undefined ? { deadline: call.deadline } : {}),
      ...(req.runId ? { runId: req.runId } : {}),
      ...(req.toolCallId ? { toolCallId: req.toolCallId } : {}),
      ...(req.elicitationAnswerJson ? { elicitationAnswerJson: req.elicitationAnswerJson } : {}),
    };
    // Published in order; the reply waits for the last one, so no progress follows the result.
    let published: Promise<void> = Promise.resolve();
    if (bus && req.runId && req.toolCallId) {
      input.onProgress = (p) => {
        const progress = { tool_call_id: req.toolCallId, name: req.toolName, ...p };
        published = published
          .then(() => publishToolProgress(bus, call.tenantId, req.runId, progress))
          .catch((err: unknown) => log.debug({ err: errorMessage(err) }, 'MCP progress notification not relayed'));
      };
    }
    const out = await provider.execute(input);
    await published;
    if (out.error) log.info({ ms: out.durationMs, code: out.error.code, err: out.error.message.slice(0, 300) }, 'MCP tool call failed');
    else if (out.elicitation) log.info({ ms: out.durationMs, mcp_server: out.elicitation.server }, "MCP tool call needs the user's input");
    else log.info({ ms: out.durationMs }, 'MCP tool call');
    return {
      content: out.content,
      error: out.error,
      durationMs: BigInt(out.durationMs),
      idempotent: out.idempotent,
      media: out.media ?? [],
      elicitation: out.elicitation,
    };
  };
}
