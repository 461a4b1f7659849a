/** Shapes shared by the service and the extraction worker (plain data, structured-clone safe). */

export type DocKind = 'pdf' | 'docx' | 'xlsx' | 'pptx';

/** What a unit of a document is called: PDF and DOCX have pages, XLSX sheets, PPTX slides. */
export type UnitName = 'page' | 'sheet' | 'slide';

export function unitOf(kind: DocKind): UnitName {
  return kind === 'xlsx' ? 'sheet' : kind === 'pptx' ? 'slide' : 'page';
}

/** One page, sheet or slide. */
export interface DocUnit {
  /** 1-based position in the document. */
  n: number;
  /** Sheet name or slide title, when there is one. */
  label?: string;
  text: string;
}

export interface Extraction {
  kind: DocKind;
  /** Units in the whole document (pages, sheets, slides). */
  total: number;
  /** The units extracted, in order (a prefix of the document when limits applied). */
  units: DocUnit[];
  /** False when units or text were left out (unit limit, character limit, row or cell caps). */
  complete: boolean;
  /** Human-readable notes about what was left out, e.g. "Sheet Data: first 50,000 rows". */
  notes: string[];
}

export interface ZipLimits {
  maxTotalBytes: number;
  maxEntryBytes: number;
  maxEntries: number;
}

export interface ExtractLimits {
  /** Units to extract; undefined: all. Per kind, so that a zip's kind can be decided in the worker. */
  maxUnits: Partial<Record<DocKind, number>>;
  /** Extraction stops once this many characters are collected (a margin above what is shown). */
  maxChars: number;
  zip: ZipLimits;
  xlsxMaxCells: number;
  xlsxMaxRows: number;
}
