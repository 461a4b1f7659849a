import type { DocumentService } from '../documents.js';
import { wireKind, type IndexerMethod } from './common.js';

/** ReadDocument (`agentloop.indexer.read`): always replies with a ReadDocumentResponse; failures are in `error`. */
export function readDocument(documents: DocumentService): IndexerMethod<'readDocument'> {
  return async (req, call) => {
    const out = await documents.read({ tenantId: call.tenantId, threadId: req.threadId, path: req.path }, call.signal);
    return {
      content: out.content,
      kind: wireKind(out.kind),
      pageCount: out.pageCount,
      sheetCount: out.sheetCount,
      slideCount: out.slideCount,
      truncated: out.truncated,
      sizeBytes: BigInt(out.sizeBytes),
      path: out.path,
    };
  };
}
