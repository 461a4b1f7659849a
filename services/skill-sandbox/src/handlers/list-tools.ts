import { errorMessage, type Logger } from '@agentloop/core';
import type { SkillTools } from '../tools.js';
import type { ToolsMethod } from './common.js';

/**
 * ListTools (`agentloop.skills.tools.list`, tool protocol): `skill` and `run_skill_script` when the tenant has
 * skills in its catalog (for a sub-agent: skills available to sub-agents), else nothing. The
 * visibility fields of the request (allowed, mentioned) concern the tool-runner's pool: ignored.
 */
export function listTools(tools: SkillTools, logger: Logger): ToolsMethod<'listTools'> {
  return (req, call) => {
    try {
      return { tools: tools.specs(call.tenantId, req.subagent) };
    } catch (err) {
      // The reply has no error field: offering no tool is the safe answer.
      logger.warn({ err: errorMessage(err) }, 'list tools refused');
      return { tools: [] };
    }
  };
}
