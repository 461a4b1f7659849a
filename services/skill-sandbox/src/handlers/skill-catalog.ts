/**
 * `agentloop.skills.catalog` (JSON over the bus, schemas in @agentloop/skills catalog-wire.ts):
 * the skills of a tenant in an environment with the Agent Skills spec fields the orchestrator needs.
 */
import { Headers, type RequestHandler } from '@agentloop/bus';
import { errorMessage } from '@agentloop/core';
import { SkillCatalogRequest, type SkillCatalogResponse } from '@agentloop/skills';
import type { SkillCatalog } from '../catalog.js';
import { SkillSandboxError } from '../errors.js';

/** The catalog of a tenant in an environment (the environment's skills only); an unknown environment is an INVALID_ARGUMENT naming the known ones. */
export function skillCatalogResponse(catalog: SkillCatalog, tenant: string, req: SkillCatalogRequest): SkillCatalogResponse {
  const { config } = catalog;
  const env = req.environment === undefined ? undefined : config.environment(req.environment);
  if (req.environment !== undefined && !env) {
    const known = config.environmentNames();
    throw new SkillSandboxError(
      'INVALID_ARGUMENT',
      `Unknown environment: ${req.environment}. Configured environments (skills.yaml environments): ${known.join(', ') || '(none)'}`,
    );
  }
  const core = new Set(config.coreFor(env));
  const skills = catalog
    .usable(tenant)
    .filter((s) => !env || env.skills.includes(s.id))
    .filter((s) => !req.subagent || config.availableToSubagent(s.id))
    .map((s) => ({
      id: s.id,
      name: s.name,
      description: catalog.description(s),
      version: s.version,
      in_catalog: config.inCatalog(s.id) || core.has(s.id),
      core: core.has(s.id),
      allowed_tools: s.allowedTools,
      license: s.license,
      compatibility: s.compatibility,
      warnings: s.warnings,
    }));
  return { environment: req.environment ?? null, settings: env ? config.settingsOf(env) : null, skills };
}

/** The bus handler: JSON in, JSON out; errors travel in the error header like every other reply. */
export function skillCatalogHandler(catalog: SkillCatalog): RequestHandler {
  return async (msg) => {
    const tenant = msg.headers[Headers.tenant];
    if (!tenant) throw new SkillSandboxError('INVALID_ARGUMENT', `The ${Headers.tenant} header is required`);
    let raw: unknown;
    try {
      raw = msg.data.length === 0 ? {} : JSON.parse(new TextDecoder().decode(msg.data));
    } catch (err) {
      throw new SkillSandboxError('INVALID_ARGUMENT', `Invalid skill catalog request: not JSON (${errorMessage(err)})`);
    }
    const parsed = SkillCatalogRequest.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new SkillSandboxError('INVALID_ARGUMENT', `Invalid skill catalog request: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
    }
    return new TextEncoder().encode(JSON.stringify(skillCatalogResponse(catalog, tenant, parsed.data)));
  };
}
