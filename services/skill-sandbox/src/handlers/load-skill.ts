import type { Logger } from '@agentloop/core';
import type { WorkspaceManager } from '@agentloop/workspace';
import type { SkillCatalog } from '../catalog.js';
import type { DependencyInstaller } from '../dependencies.js';
import type { SandboxRedaction } from '../redaction.js';
import { loadSkill } from '../loader.js';
import { redactedError, type SkillsMethod } from './common.js';

/**
 * LoadSkill (`agentloop.skills.load`, an @mention or an upload): links the skill into the thread's workspace
 * and installs its dependencies. A failed install is a `warning`, not an error: the document loads.
 */
export function loadSkillMethod(deps: {
  catalog: SkillCatalog;
  workspaces: WorkspaceManager;
  dependencies: DependencyInstaller;
  redaction: SandboxRedaction;
  logger: Logger;
}): SkillsMethod<'loadSkill'> {
  return async (req, call) => {
    let redactor = deps.redaction.base;
    try {
      const tenant = call.tenantId;
      redactor = await deps.redaction.forThread(tenant, req.threadId);
      const skill = deps.catalog.resolve(tenant, req.skillId);
      const ws = await deps.workspaces.ensure(tenant, req.threadId);
      const loaded = await loadSkill(ws, skill, deps.dependencies);
      deps.logger.info({ tenant, thread_id: req.threadId, skill: skill.id, dependencies_installed: loaded.dependencies.installed }, 'skill loaded');
      return {
        docPath: loaded.docPath,
        dependenciesInstalled: loaded.dependencies.installed,
        warning: redactor.redact(loaded.dependencies.warning ?? ''),
      };
    } catch (err) {
      // The thread's own paths too (the server redacts the shared ones).
      throw redactedError(err, (s) => redactor.redact(s));
    }
  };
}
