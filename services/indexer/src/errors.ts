import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/**
 * A failure reported to the caller as-is (in the proto Error). The message
 * names the workspace-relative path, never a host path. Not retryable: the
 * same request would fail again.
 */
export class IndexerError extends AgentLoopError {
  override name = 'IndexerError';
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(code, message, { ...options, retryable: options?.retryable ?? code === 'UNAVAILABLE' });
  }
}

/** A path as it may be shown (control characters escaped): the workspace library's. */
export { displayPath } from '@agentloop/workspace';
