import type { MethodImpl, ServiceShape } from '@agentloop/bus';
import { AgentLoopError } from '@agentloop/core';
import type { SkillSandbox, ToolRunner } from '@agentloop/proto';
import { SkillSandboxError } from '../errors.js';

/** A handler of a SkillSandbox RPC (decoding, tenant agreement, error channel: SKILL_SANDBOX_RPC in @agentloop/bus). */
export type SkillsMethod<K extends keyof ServiceShape<typeof SkillSandbox> & string> = MethodImpl<ServiceShape<typeof SkillSandbox>, K>;
/** A handler of the tool protocol as the skill sandbox speaks it (SKILL_TOOLS_RPC). */
export type ToolsMethod<K extends 'listTools' | 'executeTool'> = MethodImpl<ServiceShape<typeof ToolRunner>, K>;

/**
 * Our own error with its message passed through `redact` (host paths → logical names, redaction.ts);
 * anything else as it is (the server reports it as INTERNAL without its text).
 */
export function redactedError(err: unknown, redact: (s: string) => string): unknown {
  if (!(err instanceof AgentLoopError)) return err;
  return new SkillSandboxError(err.code, redact(err.message), { retryable: err.retryable, cause: err });
}
