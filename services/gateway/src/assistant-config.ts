/**
 * Validation of an agent configuration at the API edge (issue 11): the orchestrator's one schema
 * (`AgentConfig`), with every problem reported as a 422 naming its field, e.g.
 * `body.config.configurable.max_loops: Too big: expected number to be <=500`.
 */
import { AgentConfig } from '@agentloop/orchestrator';
import type { JsonObject } from '@agentloop/store';
import { RequestValidationError } from './errors.js';

/** `value` as an agent config, or a RequestValidationError whose paths start at `path` (e.g. "body.config"). */
export function parseAgentConfig(value: unknown, path: string): JsonObject {
  const result = AgentConfig.safeParse(value);
  if (result.success) return value as JsonObject;
  throw new RequestValidationError(result.error.issues.map((i) => ({ path: [path, ...i.path.map(String)].join('.'), message: i.message })));
}
