import { getDocumentProxy } from 'unpdf';
import { ExtractError } from './errors.js';
import type { DocUnit, Extraction, ExtractLimits } from './types.js';

interface TextItemLike {
  str?: string;
  hasEOL?: boolean;
}

/**
 * PDF through PDF.js (unpdf's build, no canvas): the text of each page, lines
 * ended where PDF.js sees an end of line. Encrypted and malformed files get a
 * clear error; pages are read one at a time and stop at the limits.
 */
export async function extractPdf(bytes: Uint8Array, limits: ExtractLimits): Promise<Extraction> {
  let doc: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // PDF.js detaches the buffer it is given: hand it a copy-free view it may keep.
    doc = await getDocumentProxy(bytes, { verbosity: 0, isEvalSupported: false, disableFontFace: true, useSystemFonts: false, stopAtErrors: false });
  } catch (err) {
    throw mapPdfError(err);
  }
  try {
    const total = doc.numPages;
    const max = Math.min(total, limits.maxUnits.pdf ?? total);
    const units: DocUnit[] = [];
    let chars = 0;
    for (let n = 1; n <= max && chars < limits.maxChars; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items as TextItemLike[]) {
        if (typeof item.str === 'string') text += item.str;
        if (item.hasEOL) text += '\n';
      }
      page.cleanup();
      text = text.replace(/[ \t]+\n/g, '\n').trim();
      units.push({ n, text });
      chars += text.length;
    }
    return { kind: 'pdf', total, units, complete: units.length === total, notes: [] };
  } catch (err) {
    throw mapPdfError(err);
  } finally {
    await doc.destroy().catch(() => undefined);
  }
}

function mapPdfError(err: unknown): ExtractError {
  if (err instanceof ExtractError) return err;
  const name = err instanceof Error ? err.name : '';
  const message = err instanceof Error ? err.message : String(err);
  if (name === 'PasswordException') {
    return new ExtractError('INVALID_ARGUMENT', 'the PDF is encrypted (password-protected); ask for an unprotected copy', { cause: err });
  }
  if (name === 'InvalidPDFException' || name === 'FormatError' || name === 'UnknownErrorException') {
    return new ExtractError('INVALID_ARGUMENT', `the PDF is damaged or truncated and cannot be read (${message})`, { cause: err });
  }
  return new ExtractError('INVALID_ARGUMENT', `the PDF cannot be read (${message})`, { cause: err });
}
