/**
 * How a run honours its agent configuration (an assistant's `config.configurable`, merged with the
 * run's own by the gateway; schema: agent-config-schema.ts): the instructions added to the system
 * prompt, the allow-lists that narrow what the model is offered, and `require_approval`, which can
 * only tighten the approval service's verdicts. Pure functions over the run config, so the agent
 * and approve nodes stay readable and this stays testable alone.
 */
import type { ToolSpec } from '@agentloop/proto';
import type { JsonObject } from '@agentloop/store';
import { AgentConfigurable } from './agent-config-schema.js';
import type { ApprovalVerdict } from './approval-client.js';
import { RunInputError } from './errors.js';

/** The tools of the skill sandbox and the argument naming the skill each one uses. */
const SKILL_TOOL_ARGS: Readonly<Record<string, string>> = { skill: 'skill', run_skill_script: 'skill_id' };
/** The category the MCP broker gives its tools; their first tag is the server id. */
const MCP_CATEGORY = 'mcp';
/** The rule name verdicts changed here carry, so the audit trail says where they came from. */
export const ASSISTANT_RULE = 'assistant:require_approval';

/** What a run's agent configuration asks of the graph; null allow-lists allow everything. */
export interface AgentPolicy {
  /** The agent's instructions (`system_prompt`), or null. */
  instructions: string | null;
  tools: ReadonlySet<string> | null;
  skills: ReadonlySet<string> | null;
  mcpServers: ReadonlySet<string> | null;
  requireApproval: ReadonlySet<string>;
  /** `max_tokens_total`: the run's own token budget (issue 17); null = none. */
  maxTokensTotal: number | null;
  /** `environment` (seed 002): the skills.yaml environment whose skills the run sees; null: none. */
  environment: string | null;
  /** The delegated agents a run may @mention (its environment's `agents`); null: the deployment's AGENT_NAMES. */
  agents: ReadonlySet<string> | null;
}

export const OPEN_POLICY: AgentPolicy = {
  instructions: null,
  tools: null,
  skills: null,
  mcpServers: null,
  requireApproval: new Set(),
  maxTokensTotal: null,
  environment: null,
  agents: null,
};

/**
 * Policies already parsed, by run config object: the executor builds one config per run and never
 * changes it, and the graph asks for the policy several times per step (agent node, skill gate,
 * approve node); parsing it each time was ~0.6 ms of a 3-step run (bench/throughput/README.md).
 */
const parsedPolicies = new WeakMap<JsonObject, AgentPolicy>();

/**
 * Policies by the JSON text of `configurable`, for configs that are equal but not the same object:
 * the executor parses a run's stored config more than once (run-executor.ts, environments.ts), and
 * runs of one assistant carry the same configurable. Validating it again with zod was ~0.07 ms of
 * a 3-step run (bench/throughput profile); stringifying it is a few microseconds. Only valid
 * configs are kept (an invalid one throws every time); beyond this many texts the oldest goes.
 */
const POLICY_TEXT_CACHE_SIZE = 256;
const policiesByText = new Map<string, AgentPolicy>();

/**
 * The policy of a run config. A malformed key fails the run (RunInputError naming it) rather than
 * being ignored: an allow-list or approval list that is silently dropped would loosen the policy.
 * The policy returned is shared by every caller with the same config: read it, do not change it.
 */
export function agentPolicyOf(runConfig: JsonObject | undefined): AgentPolicy {
  if (runConfig === undefined) return OPEN_POLICY;
  const known = parsedPolicies.get(runConfig);
  if (known) return known;
  const policy = parsePolicy(runConfig);
  parsedPolicies.set(runConfig, policy);
  return policy;
}

function parsePolicy(runConfig: JsonObject): AgentPolicy {
  const raw = runConfig.configurable;
  if (raw === undefined || raw === null) return OPEN_POLICY;
  let text: string;
  try {
    text = JSON.stringify(raw);
  } catch {
    return validatePolicy(raw); // not JSON (a BigInt, a cycle): zod says what is wrong with it
  }
  const known = policiesByText.get(text);
  if (known) return known;
  const policy = validatePolicy(raw);
  policiesByText.set(text, policy);
  if (policiesByText.size > POLICY_TEXT_CACHE_SIZE) policiesByText.delete(policiesByText.keys().next().value!);
  return policy;
}

function validatePolicy(raw: unknown): AgentPolicy {
  const parsed = AgentConfigurable.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = ['config', 'configurable', ...(issue?.path ?? []).map(String)].join('.');
    throw new RunInputError(`Invalid ${where}: ${issue?.message ?? 'unrecognised'}`);
  }
  const c = parsed.data;
  const set = (v: string[] | undefined) => (v === undefined ? null : new Set(v));
  return {
    instructions: c.system_prompt?.trim() ? c.system_prompt : null,
    tools: set(c.tools),
    skills: set(c.skills),
    mcpServers: set(c.mcp_servers),
    requireApproval: new Set(c.require_approval ?? []),
    maxTokensTotal: c.max_tokens_total ?? null,
    environment: c.environment ?? null,
    agents: null,
  };
}

/** The MCP server an offered tool comes from, or null for every other tool. */
function mcpServerOf(spec: ToolSpec): string | null {
  return spec.metadata?.category === MCP_CATEGORY ? (spec.metadata.tags[0] ?? '') : null;
}

/** The tools the model is offered: MCP tools of allowed servers, other tools named in `tools`. */
export function offeredTools(specs: readonly ToolSpec[], policy: AgentPolicy): ToolSpec[] {
  return specs.filter((s) => {
    const server = mcpServerOf(s);
    if (server !== null) return policy.mcpServers === null || policy.mcpServers.has(server);
    return policy.tools === null || policy.tools.has(s.name);
  });
}

/** The skills the agent may load (@mentions are classified against these). */
export function allowedSkills(names: ReadonlySet<string>, policy: AgentPolicy): Set<string> {
  return policy.skills === null ? new Set(names) : new Set([...names].filter((n) => policy.skills!.has(n)));
}

/**
 * The verdict on a tool call after the agent's policy: a tool outside `tools` (the model was not
 * offered it, yet called it) and a skill outside `skills` are denied; a tool in `require_approval`
 * that the rules allow needs a human. `mcp`: the call goes to an MCP tool, which `tools` does not
 * govern (its server was checked when it was offered). Never loosens: deny stays deny, and a
 * verdict that already asks a human keeps its rule.
 */
export function tightenVerdict(
  verdict: ApprovalVerdict,
  call: { name: string; args: unknown },
  policy: AgentPolicy,
  opts: { mcp?: boolean } = {},
): ApprovalVerdict {
  if (verdict.action === 'deny') return verdict;
  if (!opts.mcp && policy.tools !== null && !policy.tools.has(call.name)) {
    return {
      action: 'deny',
      reason: `This ${policy.environment ? `run (environment ${policy.environment})` : 'assistant'} may not use tool ${call.name}; its tools are: ${[...policy.tools].join(', ') || '(none)'}`,
      risk_level: verdict.risk_level,
      rule: 'assistant:tools',
    };
  }
  const skillArg = SKILL_TOOL_ARGS[call.name];
  if (skillArg !== undefined && policy.skills !== null) {
    const skill = (call.args as Record<string, unknown> | null)?.[skillArg];
    if (typeof skill !== 'string' || !policy.skills.has(skill)) {
      return {
        action: 'deny',
        reason: `This assistant may not use skill ${JSON.stringify(skill ?? null)}; its skills are: ${[...policy.skills].join(', ') || '(none)'}`,
        risk_level: verdict.risk_level,
        rule: 'assistant:skills',
      };
    }
  }
  if (verdict.action === 'allow' && policy.requireApproval.has(call.name)) {
    return {
      action: 'require_approval',
      reason: `This assistant requires a human decision for ${call.name}`,
      risk_level: verdict.risk_level,
      rule: ASSISTANT_RULE,
    };
  }
  return verdict;
}
