import { create, SkillInfoSchema } from '@agentloop/proto';
import type { SkillCatalog } from '../catalog.js';
import type { SkillsMethod } from './common.js';

/** ListSkills (`agentloop.skills.list`): the skills the tenant may use (catalog or not), with their settings. */
export function listSkills(catalog: SkillCatalog): SkillsMethod<'listSkills'> {
  return (_req, call) => {
    const { config } = catalog;
    const skills = catalog.usable(call.tenantId).map((s) =>
      create(SkillInfoSchema, {
        id: s.id,
        name: s.name,
        description: catalog.description(s),
        version: s.version,
        enabled: config.inCatalog(s.id),
        availableToSubagent: config.availableToSubagent(s.id),
        autoLoadOnFileTypes: config.settings(s.id).auto_load_on_file_types.map((t) => t.replace(/^\./, '').toLowerCase()),
        scripts: s.scripts,
        hasRequirements: s.hasRequirements,
        core: config.core.includes(s.id),
      }),
    );
    return { skills };
  };
}
