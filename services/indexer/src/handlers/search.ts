import { create, SearchMatchSchema } from '@agentloop/proto';
import type { DocumentService } from '../documents.js';
import { wireKind, type IndexerMethod } from './common.js';

/** SearchDocument (`agentloop.indexer.search`): always replies with a SearchDocumentResponse; failures are in `error`. */
export function searchDocument(documents: DocumentService): IndexerMethod<'searchDocument'> {
  return async (req, call) => {
    const out = await documents.search(
      { tenantId: call.tenantId, threadId: req.threadId, path: req.path, query: req.query, maxResults: req.maxResults },
      call.signal,
    );
    return {
      matches: out.matches.map((m) => create(SearchMatchSchema, { page: m.page, line: m.line, score: m.score, snippet: m.snippet, label: m.label ?? '' })),
      content: out.content,
      kind: wireKind(out.kind),
      totalMatches: out.total,
      indexBuilt: out.indexBuilt,
      path: out.path,
    };
  };
}
