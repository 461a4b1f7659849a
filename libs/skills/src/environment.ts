import { z } from 'zod';
import { SKILL_ID_PATTERN } from './registry.js';

/**
 * An environment (seed 002 §3.1: "a named set of skills, models and agents", reloaded when a run
 * switches to it) as skills.yaml `environments.<name>` declares it. The seed's folder per
 * environment maps onto one entry: config.jsonc → `system_prompt` and `tools`, models.jsonc →
 * `models`, agents.jsonc → `agents`, skills/ → `skills` (docs/skills-ecosystem.md "Environments").
 */

/**
 * The orchestrator's model slots (services/orchestrator models/registry.ts MODEL_SLOTS, which a
 * test there checks against this list): a lib cannot import a service, and an unknown slot must
 * be refused where skills.yaml is parsed.
 */
export const ENVIRONMENT_MODEL_SLOTS = ['base', 'reasoning', 'vision', 'code', 'chat'] as const;
export type EnvironmentModelSlot = (typeof ENVIRONMENT_MODEL_SLOTS)[number];

/** Names of variables holding an API key: no key itself is ever written in skills.yaml. */
const ENV_VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * One slot's override, in the shape of the global MODEL_<SLOT>_* settings. A string is the model
 * id on the slot's configured endpoint; an object overrides any of its settings, and must name
 * `api_key_env` when the deployment has not configured the slot at all.
 */
export const EnvironmentModel = z.union([
  z.string().min(1).max(256),
  z
    .object({
      /** MODEL_<SLOT>_ID */
      id: z.string().min(1).max(256).optional(),
      /** MODEL_<SLOT>_BASE_URL */
      base_url: z.url().optional(),
      /** The variable (in the orchestrator's environment) holding MODEL_<SLOT>_API_KEY for this endpoint. */
      api_key_env: z.string().regex(ENV_VAR_NAME, 'api_key_env is the NAME of an environment variable, e.g. LEGAL_OPENAI_KEY').optional(),
      /** MODEL_<SLOT>_TEMPERATURE */
      temperature: z.number().min(0).max(2).optional(),
      /** MODEL_<SLOT>_MAX_TOKENS */
      max_tokens: z.number().int().positive().optional(),
    })
    .strict(),
]);
export type EnvironmentModel = z.infer<typeof EnvironmentModel>;

/** `models`: overrides per slot; an unknown slot is an error naming the key. */
export const EnvironmentModels = z
  .object(
    Object.fromEntries(ENVIRONMENT_MODEL_SLOTS.map((s) => [s, EnvironmentModel.optional()])) as Record<
      EnvironmentModelSlot,
      z.ZodOptional<typeof EnvironmentModel>
    >,
  )
  .strict();
export type EnvironmentModels = z.infer<typeof EnvironmentModels>;

/** Agent names are @mentioned (`@researcher`): the same characters as skill ids. */
const AgentName = z.string().regex(SKILL_ID_PATTERN, 'agent names are 1-64 characters of a-z 0-9 _ - starting with a letter or digit');

/** What an environment sets besides its skills: what the orchestrator applies to a run in it. */
export const EnvironmentSettings = z.object({
  /** Model slot overrides (absent slots: the deployment's MODEL_* settings). */
  models: EnvironmentModels.default({}),
  /** The delegated agents a run may @mention; null: the deployment's AGENT_NAMES. */
  agents: z.array(AgentName).max(100).nullable().default(null),
  /** Instructions added to the system prompt of every run in the environment; null: none. */
  system_prompt: z
    .string()
    .max(32 * 1024)
    .nullable()
    .default(null),
  /** Allow-list of tool names offered in the environment (MCP tools excepted, as for assistants); null: every tool. */
  tools: z.array(z.string().min(1).max(256)).max(1000).nullable().default(null),
});
export type EnvironmentSettings = z.infer<typeof EnvironmentSettings>;

/** The settings of an environment that sets nothing beyond its skills. */
export const NO_ENVIRONMENT_SETTINGS: EnvironmentSettings = EnvironmentSettings.parse({});
