import type { RequestHandler } from '@agentloop/bus';
import type { Logger } from '@agentloop/core';
import {
  create,
  fromBinary,
  toBinary,
  SearchDocumentRequestSchema,
  SearchDocumentResponseSchema,
  SearchMatchSchema,
  type SearchDocumentResponse,
} from '@agentloop/proto';
import type { DocumentService } from '../documents.js';
import { IndexerError } from '../errors.js';
import { checkTenant, toWire, wireKind } from './common.js';

/** `agentloop.indexer.search`: always replies with a SearchDocumentResponse; failures are in `error`. */
export function searchDocumentHandler(documents: DocumentService, logger: Logger): RequestHandler {
  return async (msg, ctx) => {
    let res: SearchDocumentResponse;
    let log = logger;
    try {
      let req;
      try {
        req = fromBinary(SearchDocumentRequestSchema, msg.data);
      } catch (err) {
        throw new IndexerError('INVALID_ARGUMENT', `Invalid SearchDocumentRequest: ${err instanceof Error ? err.message : String(err)}`);
      }
      const tenantId = checkTenant(msg, req.tenantId);
      log = logger.child({ tenant: tenantId, thread_id: req.threadId });
      const out = await documents.search(
        { tenantId, threadId: req.threadId, path: req.path, query: req.query, maxResults: req.maxResults },
        ctx.signal,
      );
      res = create(SearchDocumentResponseSchema, {
        matches: out.matches.map((m) => create(SearchMatchSchema, { page: m.page, line: m.line, score: m.score, snippet: m.snippet, label: m.label ?? '' })),
        content: out.content,
        kind: wireKind(out.kind),
        totalMatches: out.total,
        indexBuilt: out.indexBuilt,
        path: out.path,
      });
    } catch (err) {
      res = create(SearchDocumentResponseSchema, { error: toWire(err, log, 'search') });
    }
    return toBinary(SearchDocumentResponseSchema, res);
  };
}
