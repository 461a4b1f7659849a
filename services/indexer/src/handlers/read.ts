import type { RequestHandler } from '@agentloop/bus';
import type { Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, ReadDocumentRequestSchema, ReadDocumentResponseSchema, type ReadDocumentResponse } from '@agentloop/proto';
import type { DocumentService } from '../documents.js';
import { IndexerError } from '../errors.js';
import { checkTenant, toWire, wireKind } from './common.js';

/** `agentloop.indexer.read`: always replies with a ReadDocumentResponse; failures are in `error`. */
export function readDocumentHandler(documents: DocumentService, logger: Logger): RequestHandler {
  return async (msg, ctx) => {
    let res: ReadDocumentResponse;
    let log = logger;
    try {
      let req;
      try {
        req = fromBinary(ReadDocumentRequestSchema, msg.data);
      } catch (err) {
        throw new IndexerError('INVALID_ARGUMENT', `Invalid ReadDocumentRequest: ${err instanceof Error ? err.message : String(err)}`);
      }
      const tenantId = checkTenant(msg, req.tenantId);
      log = logger.child({ tenant: tenantId, thread_id: req.threadId });
      const out = await documents.read({ tenantId, threadId: req.threadId, path: req.path }, ctx.signal);
      res = create(ReadDocumentResponseSchema, {
        content: out.content,
        kind: wireKind(out.kind),
        pageCount: out.pageCount,
        sheetCount: out.sheetCount,
        slideCount: out.slideCount,
        truncated: out.truncated,
        sizeBytes: BigInt(out.sizeBytes),
        path: out.path,
      });
    } catch (err) {
      res = create(ReadDocumentResponseSchema, { error: toWire(err, log, 'read') });
    }
    return toBinary(ReadDocumentResponseSchema, res);
  };
}
