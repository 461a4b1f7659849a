import { allowedSkills } from '../agent-config.js';
import { runPolicy } from '../environments.js';
import { mentionsOf } from '../mentions.js';
import { activeSkills, skillRefusal, toolAllowed, toolRestriction } from '../skill-policy.js';
import type { RunContext } from './state.js';
import type { AgentGraphDeps, AgentStateType } from './state.js';

/** The skill sandbox's tools and the argument naming the skill each one uses. */
const SKILL_ARGS: Readonly<Record<string, string>> = { skill: 'skill', run_skill_script: 'skill_id' };

/** The skills policy of one tools step: refuses what the model was not offered (skill-policy.ts). */
export interface SkillGate {
  /** The "Error: ..." content refusing the call, or null to let it through. */
  refusal(call: { name: string; args?: unknown }): string | null;
}

const OPEN: SkillGate = { refusal: () => null };

/**
 * The gate of a tools step: a tool outside the `allowed-tools` of an active skill is refused with
 * the reason, and with an environment (seed 002) a skill outside it is refused like an unknown one.
 * The catalog is the one the agent step read (SkillsClient caches it briefly).
 */
export async function skillGate(deps: Pick<AgentGraphDeps, 'skills'>, ctx: RunContext, state: AgentStateType): Promise<SkillGate> {
  if (!deps.skills) return OPEN;
  const policy = runPolicy(ctx);
  const subagent = state.parent_context !== null;
  const { skills: catalog } = await deps.skills.catalog(ctx.tenantId, { ...(policy.environment ? { environment: policy.environment } : {}), subagent });
  // The same skills the agent step offered: the environment's, narrowed by the assistant's `skills`.
  const usable = allowedSkills(new Set(catalog.map((s) => s.id)), policy);
  const core = catalog.filter((s) => s.core && usable.has(s.id)).map((s) => s.id);
  const mentioned = mentionsOf(state.messages).filter((m) => usable.has(m));
  const restriction = toolRestriction(activeSkills(state.messages, { core, mentioned }), catalog);
  return {
    refusal(call) {
      if (!toolAllowed(call.name, restriction)) return skillRefusal(call.name, restriction!);
      const arg = SKILL_ARGS[call.name];
      if (arg === undefined || policy.environment === null) return null;
      const id = (call.args as Record<string, unknown> | null | undefined)?.[arg];
      if (typeof id === 'string' && usable.has(id.trim())) return null;
      return `Error: Skill not found: ${typeof id === 'string' ? id : '(none)'}. Available skills in environment ${policy.environment}: ${[...usable].join(', ') || '(none)'}`;
    },
  };
}
