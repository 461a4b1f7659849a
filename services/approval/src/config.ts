import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { envBool, parseConfig } from '@agentloop/core';

/** hitl_rules.yaml shipped with the service. */
export const DEFAULT_RULES_PATH = fileURLToPath(new URL('../config/hitl_rules.yaml', import.meta.url));

export const ApprovalEnv = z.object({
  NATS_URL: z.string().optional(),
  MYSQL_URL: z.string().optional(),
  LOG_LEVEL: z.string().default('info'),
  /** The rules file (seed 001 §7.5). Unset: config/hitl_rules.yaml of this package. */
  HITL_RULES: z.string().min(1).optional(),
  /** Global switch: false answers `allow` to every check (rules still validated at start). */
  APPROVAL_ENABLED: envBool(true),
});
export type ApprovalConfig = z.infer<typeof ApprovalEnv>;

export function loadApprovalConfig(env: NodeJS.ProcessEnv = process.env): ApprovalConfig {
  return parseConfig(ApprovalEnv, env);
}
