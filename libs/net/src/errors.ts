import { AgentLoopError, type ErrorCode } from '@agentloop/core';

/**
 * The SSRF guard refused a URL: bad scheme or syntax (`INVALID_ARGUMENT`), credentials in it
 * (`INVALID_ARGUMENT`), or an internal address no allow entry covers (`PERMISSION_DENIED`).
 * The message says why and is safe to show to the caller. Never worth retrying as is.
 */
export class UrlRefusedError extends AgentLoopError {
  override name = 'UrlRefusedError';
  constructor(code: Extract<ErrorCode, 'INVALID_ARGUMENT' | 'PERMISSION_DENIED'>, message: string, options?: { cause?: unknown }) {
    super(code, message, { ...options, retryable: false });
  }
}

/**
 * The guard could not judge a URL because its host did not resolve (code `NOT_FOUND`). Not a
 * refusal: DNS may answer later, so callers that retry (webhooks) may try again.
 */
export class HostUnresolvedError extends AgentLoopError {
  override name = 'HostUnresolvedError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('NOT_FOUND', message, { ...options, retryable: true });
  }
}
