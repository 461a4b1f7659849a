import { z } from 'zod';
import { EnvironmentSettings } from './environment.js';

/** The skill sandbox's JSON catalog subject (queue group skill-sandbox). */
export const SKILL_CATALOG_SUBJECT = 'agentloop.skills.catalog';

/**
 * Subject `agentloop.skills.catalog` (JSON over the bus: the proto's SkillInfo has no room for the Agent
 * Skills spec fields, and this only feeds the orchestrator's prompt and tool policy). Request:
 * `{environment?, subagent?}`, the tenant from the `agentloop-tenant` header.
 */
export const SkillCatalogRequest = z
  .object({
    /** `config.configurable.environment` of the run (skills.yaml `environments.<name>`). */
    environment: z.string().min(1).max(64).optional(),
    /** A delegated agent: only skills available to sub-agents. */
    subagent: z.boolean().default(false),
  })
  .strict();
export type SkillCatalogRequest = z.infer<typeof SkillCatalogRequest>;

/** One skill the tenant may use in the environment, as the orchestrator needs it. */
export const SkillCatalogEntry = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  version: z.string(),
  /** Listed in the system prompt's catalog (skills.yaml `enabled` or core). */
  in_catalog: z.boolean(),
  /** Preloaded into every run (skills.yaml `core`, or the environment's). */
  core: z.boolean(),
  /** `allowed-tools`: the tools a run may use while the skill is active; null: no restriction. */
  allowed_tools: z.array(z.string()).nullable(),
  license: z.string(),
  compatibility: z.string(),
  /** Deviations from the Agent Skills spec (the skill loads anyway). */
  warnings: z.array(z.string()),
});
export type SkillCatalogEntry = z.infer<typeof SkillCatalogEntry>;

export const SkillCatalogResponse = z.object({
  environment: z.string().nullable(),
  /** The environment's models, agents, system prompt and tools; null without an environment (or from a sandbox that predates them). */
  settings: EnvironmentSettings.nullable().default(null),
  skills: z.array(SkillCatalogEntry),
});
export type SkillCatalogResponse = z.infer<typeof SkillCatalogResponse>;
