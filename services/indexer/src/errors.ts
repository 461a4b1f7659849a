import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/**
 * A failure reported to the caller as-is (in the proto Error). The message
 * names the workspace-relative path, never a host path. Not retryable: the
 * same request would fail again.
 */
export class IndexerError extends AgentLoopError {
  override name = 'IndexerError';
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(code, message, { ...options, retryable: options?.retryable ?? (code === 'UNAVAILABLE') });
  }
}

/** A path as it may be shown: control characters escaped so a message stays on one line. */
export function displayPath(p: string): string {
  // eslint-disable-next-line no-control-regex
  return p.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}
