import { AgentLoopError } from '@agentloop/core';

/** A SKILL.md that cannot be understood (bad frontmatter). The registry turns it into a skip reason. */
export class SkillDocError extends AgentLoopError {
  override name = 'SkillDocError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('INVALID_ARGUMENT', message, { ...options, retryable: false });
  }
}
