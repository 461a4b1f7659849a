import type { MethodImpl, ServiceShape } from '@agentloop/bus';
import { DocumentKind, type Indexer } from '@agentloop/proto';
import type { FileKind } from '../documents.js';

/** A handler of an Indexer RPC (decoding, tenant agreement, error channel: INDEXER_RPC in @agentloop/bus). */
export type IndexerMethod<K extends keyof ServiceShape<typeof Indexer> & string> = MethodImpl<ServiceShape<typeof Indexer>, K>;

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
