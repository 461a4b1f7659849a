/**
 * Environments (seed 002: "a named set of skills, models and agents", reloaded on switching): a run
 * with `config.configurable.environment` reads its environment's settings once, at the start of the
 * execution, from the skill sandbox that owns skills.yaml (the catalog reply carries them). The
 * next run reads them afresh, so switching environment — or editing one and reloading — needs no
 * restart. Its models replace the deployment's slots (models/environment-slots.ts); its agents,
 * system prompt and tools narrow the run's policy here.
 */
import type { EnvironmentSettings } from '@agentloop/skills';
import type { JsonObject } from '@agentloop/store';
import { agentPolicyOf, type AgentPolicy } from './agent-config.js';
import type { SkillsClient } from './skills-client.js';

/**
 * The settings of the run's environment; null when the run names none. An unknown environment is
 * the run's input error naming the configured ones (SkillsClient). Without a skill sandbox there
 * are no environments to read, as there are no skills: the run goes on with the deployment's.
 */
export async function runEnvironment(
  skills: Pick<SkillsClient, 'catalog'> | undefined,
  tenantId: string,
  runConfig: JsonObject,
  subagent: boolean,
): Promise<{ name: string; settings: EnvironmentSettings } | null> {
  const name = agentPolicyOf(runConfig).environment;
  if (name === null || !skills) return null;
  const catalog = await skills.catalog(tenantId, { environment: name, subagent });
  return catalog.settings ? { name, settings: catalog.settings } : null;
}

/**
 * A run's policy: its agent configuration (an assistant's `config.configurable`, agent-config.ts)
 * with its environment's on top. The environment's system prompt comes before the assistant's
 * (the assistant's is the more specific); tools allowed by both are allowed; its agents are the
 * ones a run may @mention.
 */
export function runPolicy(ctx: { runConfig?: JsonObject | undefined; environment?: EnvironmentSettings | null | undefined }): AgentPolicy {
  const policy = agentPolicyOf(ctx.runConfig);
  const env = ctx.environment;
  if (!env) return policy;
  const instructions = [env.system_prompt?.trim() ? env.system_prompt : null, policy.instructions].filter((s): s is string => s !== null);
  const envTools = env.tools === null ? null : new Set(env.tools);
  const tools = envTools === null ? policy.tools : policy.tools === null ? envTools : new Set([...policy.tools].filter((t) => envTools.has(t)));
  return {
    ...policy,
    instructions: instructions.length > 0 ? instructions.join('\n\n') : null,
    tools,
    agents: env.agents === null ? policy.agents : new Set(env.agents),
  };
}
