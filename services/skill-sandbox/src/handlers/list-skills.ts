import type { RequestHandler } from '@agentloop/bus';
import type { Logger, PathRedactor } from '@agentloop/core';
import { create, fromBinary, toBinary, ListSkillsRequestSchema, ListSkillsResponseSchema, SkillInfoSchema } from '@agentloop/proto';
import type { SkillCatalog } from '../catalog.js';
import { tenantOf, toWire } from './common.js';

/** `agentloop.skills.list`: the skills the tenant may use (catalog or not), with their settings. */
export function listSkillsHandler(catalog: SkillCatalog, logger: Logger, redactor: PathRedactor): RequestHandler {
  return (msg) => {
    try {
      const req = fromBinary(ListSkillsRequestSchema, msg.data);
      const tenant = tenantOf(msg, req.tenantId);
      const { config } = catalog;
      const skills = catalog.usable(tenant).map((s) =>
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
      return Promise.resolve(toBinary(ListSkillsResponseSchema, create(ListSkillsResponseSchema, { skills })));
    } catch (err) {
      return Promise.resolve(toBinary(ListSkillsResponseSchema, create(ListSkillsResponseSchema, { error: toWire(err, logger, 'list skills', (t) => redactor.redact(t)) })));
    }
  };
}
