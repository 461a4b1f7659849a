/**
 * The agent configuration an assistant carries (issue 11; seed 004's agent registry done the
 * LangGraph Platform way): `config.configurable` keys the agent graph understands. ONE schema,
 * used by the gateway to validate assistants (a bad key is a 422 naming it), published as JSON
 * Schema at `/assistants/{id}/schemas`, and read by the orchestrator (`agent-config.ts`).
 * Unknown configurable keys pass through, as LangGraph passes them to the graph.
 */
import { z } from 'zod';
import { MAX_LOOPS_MAX, MAX_LOOPS_MIN } from './limits.js';
import { MODEL_SLOTS, ModelSelection } from './models/registry.js';

/** Longest `system_prompt` (32 KiB): instructions, not documents (those belong in skills or files). */
export const SYSTEM_PROMPT_MAX_CHARS = 32 * 1024;
/** Longest allow-list: far more names than any deployment offers. */
const LIST_MAX = 1000;

const names = (what: string) => z.array(z.string().min(1).max(256)).max(LIST_MAX).describe(what);

export const AgentConfigurable = z.looseObject({
  system_prompt: z.string().max(SYSTEM_PROMPT_MAX_CHARS).optional().describe("The agent's instructions, added to the system prompt after the base prompt."),
  model: ModelSelection.optional().describe('Model slot (base, reasoning, vision, code, chat), {slot}, or a scripted model spec where allowed.'),
  model_pref: z.enum(MODEL_SLOTS).optional().describe('Preferred model slot when the router chooses.'),
  max_loops: z.number().int().min(MAX_LOOPS_MIN).max(MAX_LOOPS_MAX).optional().describe('Agent ⇄ tools iterations before the run is finalized.'),
  max_tokens_total: z
    .number()
    .int()
    .positive()
    .max(Number.MAX_SAFE_INTEGER)
    .optional()
    .describe("Token budget of the run (issue 17): no model call is made once the run's own calls have used this many tokens."),
  tools: names('Allow-list of tool names offered to the model (MCP tools are governed by mcp_servers). Absent: every tool.').optional(),
  skills: names('Allow-list of skill ids the agent may load or run. Absent: every skill.').optional(),
  environment: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      "Environment (seed 002): a named set of skills, models and agents in skills.yaml `environments`; the run's skills, model slots, @mentionable agents, and added system prompt and tools are its.",
    ),
  mcp_servers: names('Allow-list of MCP server ids whose tools are offered. Absent: every server.').optional(),
  require_approval: names('Tool names that always need a human decision. Only tightens the approval rules: a call they deny stays denied.').optional(),
  delegates: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Model of delegated agents by task text, call index or "*": scripted turns, a model value, or {model, delegates}.'),
});
export type AgentConfigurable = z.infer<typeof AgentConfigurable>;

/** An assistant's (or a run's) `config`: LangGraph's RunnableConfig subset plus the agent's configurable keys. */
export const AgentConfig = z.looseObject({
  tags: z.array(z.string()).optional(),
  recursion_limit: z.number().int().positive().optional(),
  configurable: AgentConfigurable.optional(),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

/** `AgentConfig` as JSON Schema (draft 2020-12), for `config_schema`. */
export function agentConfigJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(AgentConfig, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
