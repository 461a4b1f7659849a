/**
 * Errors raised while extracting a document. This module is loaded inside the
 * extraction worker, which imports no workspace package, so it stands alone;
 * the service maps it to an AgentLoopError with the same code. Messages never
 * contain a host path: the caller prefixes the workspace-relative one.
 */
export type ExtractErrorCode = 'INVALID_ARGUMENT' | 'TIMEOUT' | 'UNAVAILABLE' | 'INTERNAL';

export class ExtractError extends Error {
  override name = 'ExtractError';
  constructor(
    readonly code: ExtractErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
