import type { RequestHandler } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, ListToolsRequestSchema, ListToolsResponseSchema } from '@agentloop/proto';
import type { SkillTools } from '../tools.js';
import { tenantOf } from './common.js';

/**
 * `agentloop.skills.tools.list` (tool protocol): `skill` and `run_skill_script` when the tenant has
 * skills in its catalog (for a sub-agent: skills available to sub-agents), else nothing. The
 * visibility fields of the request (allowed, mentioned) concern the tool-runner's pool: ignored.
 */
export function listToolsHandler(tools: SkillTools, logger: Logger): RequestHandler {
  return (msg) => {
    let specs: ReturnType<SkillTools['specs']> = [];
    try {
      const req = fromBinary(ListToolsRequestSchema, msg.data);
      specs = tools.specs(tenantOf(msg, req.tenantId), req.subagent);
    } catch (err) {
      // The reply has no error field: offering no tool is the safe answer.
      logger.warn({ err: errorMessage(err) }, 'list tools refused');
    }
    return Promise.resolve(toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools: specs })));
  };
}
