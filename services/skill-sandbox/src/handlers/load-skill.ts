import type { RequestHandler } from '@agentloop/bus';
import type { Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, LoadSkillRequestSchema, LoadSkillResponseSchema } from '@agentloop/proto';
import type { WorkspaceManager } from '@agentloop/workspace';
import type { SkillCatalog } from '../catalog.js';
import type { DependencyInstaller } from '../dependencies.js';
import type { SandboxRedaction } from '../redaction.js';
import { loadSkill } from '../loader.js';
import { tenantOf, toWire } from './common.js';

/**
 * `agentloop.skills.load` (an @mention or an upload): links the skill into the thread's workspace
 * and installs its dependencies. A failed install is a `warning`, not an error: the document loads.
 */
export function loadSkillHandler(deps: {
  catalog: SkillCatalog;
  workspaces: WorkspaceManager;
  dependencies: DependencyInstaller;
  redaction: SandboxRedaction;
  logger: Logger;
}): RequestHandler {
  return async (msg) => {
    let redactor = deps.redaction.base;
    try {
      const req = fromBinary(LoadSkillRequestSchema, msg.data);
      const tenant = tenantOf(msg, req.tenantId);
      redactor = await deps.redaction.forThread(tenant, req.threadId);
      const skill = deps.catalog.resolve(tenant, req.skillId);
      const ws = await deps.workspaces.ensure(tenant, req.threadId);
      const loaded = await loadSkill(ws, skill, deps.dependencies);
      deps.logger.info({ tenant, thread_id: req.threadId, skill: skill.id, dependencies_installed: loaded.dependencies.installed }, 'skill loaded');
      return toBinary(
        LoadSkillResponseSchema,
        create(LoadSkillResponseSchema, {
          docPath: loaded.docPath,
          dependenciesInstalled: loaded.dependencies.installed,
          warning: redactor.redact(loaded.dependencies.warning ?? ''),
        }),
      );
    } catch (err) {
      const error = toWire(err, deps.logger, 'load skill', (s) => redactor.redact(s));
      return toBinary(LoadSkillResponseSchema, create(LoadSkillResponseSchema, { error }));
    }
  };
}
