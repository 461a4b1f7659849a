import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/**
 * A failure reported to the caller as-is (in the proto Error). Not retryable
 * unless the code says the service is unavailable: the same request would fail again.
 */
export class ApprovalError extends AgentLoopError {
  override name = 'ApprovalError';
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(code, message, { ...options, retryable: options?.retryable ?? code === 'UNAVAILABLE' });
  }
}
