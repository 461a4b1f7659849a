import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/**
 * A failure of a skill request with a message meant for the model or the caller ("Skill not found:
 * x. Available skills: ..."). Mapped to the proto `Error` at the handler; never thrown to the bus.
 */
export class SkillSandboxError extends AgentLoopError {
  override name = 'SkillSandboxError';
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(code, message, options);
  }
}
