import { Headers, type BusMessage } from '@agentloop/bus';
import { AgentLoopError, errorMessage, type Logger } from '@agentloop/core';
import { create, DocumentKind, ErrorSchema, type WireError } from '@agentloop/proto';
import { IndexerError } from '../errors.js';
import type { FileKind } from '../documents.js';

/** The request's tenant must match the caller's tenant header when both are set. */
export function checkTenant(msg: BusMessage, bodyTenant: string): string {
  const header = msg.headers[Headers.tenant];
  if (bodyTenant && header && bodyTenant !== header) {
    throw new IndexerError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
  }
  return bodyTenant || header || '';
}

/** Local error → proto Error; unexpected errors are logged and reported as INTERNAL without details. */
export function toWire(err: unknown, logger: Logger, what: string): WireError {
  if (err instanceof AgentLoopError) {
    logger.info({ code: err.code }, `${what} failed: ${err.message}`);
    return create(ErrorSchema, { code: err.code, message: err.message, retryable: err.retryable });
  }
  logger.error({ err: errorMessage(err) }, `${what} failed unexpectedly`);
  return create(ErrorSchema, { code: 'INTERNAL', message: `Unexpected error in the indexer: ${errorMessage(err)}`, retryable: false });
}

export function wireKind(kind: FileKind): DocumentKind {
  switch (kind) {
    case 'text':
      return DocumentKind.TEXT;
    case 'pdf':
      return DocumentKind.PDF;
    case 'docx':
      return DocumentKind.DOCX;
    case 'xlsx':
      return DocumentKind.XLSX;
    case 'pptx':
      return DocumentKind.PPTX;
  }
}
