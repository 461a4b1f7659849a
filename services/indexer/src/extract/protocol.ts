import type { IndexFile } from '../search/doc-index.js';
import type { ExtractErrorCode } from './errors.js';
import type { DocKind, Extraction, ExtractLimits } from './types.js';

/** A job for the extraction worker. `bytes` is transferred, not copied. */
export interface WorkerRequest {
  id: number;
  /** extract: the units for read; index: every unit, chunked and tokenized. */
  op: 'extract' | 'index';
  bytes: Uint8Array;
  sniffed: 'pdf' | 'zip';
  claimed: DocKind | undefined;
  limits: ExtractLimits;
  /** Content hash recorded in the index (op index). */
  hash?: string;
}

export type WorkerResponse =
  | { type: 'result'; id: number; ok: true; extraction?: Extraction; index?: IndexFile }
  | { type: 'result'; id: number; ok: false; error: { code: ExtractErrorCode; message: string } };
