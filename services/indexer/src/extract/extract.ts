import { extractDocx } from './docx.js';
import { ExtractError } from './errors.js';
import { extractPdf } from './pdf.js';
import { extractPptx } from './pptx.js';
import type { DocKind, Extraction, ExtractLimits } from './types.js';
import { extractXlsx } from './xlsx.js';
import { ZipArchive } from './zip.js';

/** What the first bytes say a file is. */
export type Sniffed = 'pdf' | 'zip' | 'text' | 'binary';

/** Extensions that promise a document; the content still decides (see sniff). */
export const DOCUMENT_EXTENSIONS: Readonly<Record<string, DocKind>> = {
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.xlsx': 'xlsx',
  '.xlsm': 'xlsx',
  '.pptx': 'pptx',
};

export const KIND_NAMES: Readonly<Record<DocKind, string>> = {
  pdf: 'PDF',
  docx: 'Word document',
  xlsx: 'Excel workbook',
  pptx: 'PowerPoint presentation',
};

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-

/**
 * Classifies a file by its first bytes: "%PDF-" within the first 1 KB (the
 * PDF spec allows leading junk), a zip local-file or empty-archive header,
 * UTF-8 text without NUL bytes, or binary. `complete`: `head` is the whole file.
 */
export function sniff(head: Uint8Array, complete: boolean): Sniffed {
  const limit = Math.min(head.length - PDF_MAGIC.length, 1024);
  for (let i = 0; i <= limit; i++) {
    if (PDF_MAGIC.every((b, j) => head[i + j] === b)) return 'pdf';
  }
  if (head[0] === 0x50 && head[1] === 0x4b && ((head[2] === 0x03 && head[3] === 0x04) || (head[2] === 0x05 && head[3] === 0x06))) return 'zip';
  if (head.includes(0)) return 'binary';
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !complete });
    return 'text';
  } catch {
    return 'binary';
  }
}

/** Which Office format a zip holds, from its parts (and [Content_Types].xml being there). */
export function officeKind(zip: ZipArchive): DocKind | undefined {
  if (!zip.has('[Content_Types].xml')) return undefined;
  if (zip.has('word/document.xml')) return 'docx';
  if (zip.has('xl/workbook.xml')) return 'xlsx';
  if (zip.has('ppt/presentation.xml')) return 'pptx';
  return undefined;
}

/**
 * Extracts a document whose first bytes sniffed as PDF or zip. `claimed` is
 * the kind its extension promises, if any: content wins when it is a known
 * document, and a zip that is no Office document is refused.
 */
export async function extractDocument(bytes: Uint8Array, sniffed: 'pdf' | 'zip', claimed: DocKind | undefined, limits: ExtractLimits): Promise<Extraction> {
  if (sniffed === 'pdf') return extractPdf(bytes, limits);
  const zip = ZipArchive.open(bytes, limits.zip);
  const kind = officeKind(zip);
  switch (kind) {
    case 'docx':
      return extractDocx(zip, limits);
    case 'xlsx':
      return extractXlsx(zip, limits);
    case 'pptx':
      return extractPptx(zip, limits);
    case 'pdf':
    case undefined:
      throw new ExtractError(
        'INVALID_ARGUMENT',
        claimed
          ? `the file is a zip archive but not a ${KIND_NAMES[claimed]} (no ${claimed === 'docx' ? 'word/document.xml' : claimed === 'xlsx' ? 'xl/workbook.xml' : claimed === 'pptx' ? 'ppt/presentation.xml' : '[Content_Types].xml'} part)`
          : 'the file is a zip archive, not a document this service reads (PDF, DOCX, XLSX, PPTX)',
      );
  }
}
