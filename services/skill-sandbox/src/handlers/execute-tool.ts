import type { SkillTools } from '../tools.js';
import type { ToolsMethod } from './common.js';

/**
 * ExecuteTool (`agentloop.skills.tools.execute`, tool protocol): always replies with an ExecuteToolResponse, even
 * for a malformed request; a failure is "Error: ..." content plus `error`, as the tool-runner does (SKILL_TOOLS_RPC).
 */
export function executeTool(tools: SkillTools): ToolsMethod<'executeTool'> {
  return async (req, call) => {
    const outcome = await tools.execute({
      tenantId: call.tenantId,
      threadId: req.threadId,
      toolName: req.toolName,
      argsJson: req.argsJson,
      subagent: req.subagent,
    });
    return { content: outcome.content, error: outcome.error, durationMs: BigInt(outcome.durationMs), idempotent: false };
  };
}
