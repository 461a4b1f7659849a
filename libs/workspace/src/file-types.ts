import { open } from 'node:fs/promises';
import path from 'node:path';
import { fileTypeFromFile } from 'file-type';

/**
 * File kinds by extension (seed 001 §3.1), plus the Office/presentation forms
 * the indexer reads. Unknown extensions are "unknown".
 */
const TYPE_BY_EXTENSION: Readonly<Record<string, string>> = {
  // Documents
  '.pdf': 'pdf',
  '.docx': 'document',
  '.doc': 'document',
  '.rtf': 'document',
  '.odt': 'document',
  '.txt': 'text',
  '.md': 'markdown',
  // Spreadsheets
  '.xlsx': 'spreadsheet',
  '.xls': 'spreadsheet',
  '.ods': 'spreadsheet',
  '.csv': 'csv',
  // Presentations
  '.pptx': 'presentation',
  '.ppt': 'presentation',
  '.odp': 'presentation',
  // Code
  '.py': 'python',
  '.js': 'javascript',
  '.ts': 'typescript',
  '.java': 'java',
  '.cpp': 'cpp',
  // Data
  '.json': 'json',
  '.yaml': 'yaml',
  '.yml': 'yaml',
  '.xml': 'xml',
  // Images
  '.png': 'image',
  '.jpg': 'image',
  '.jpeg': 'image',
  '.gif': 'image',
  '.bmp': 'image',
  '.svg': 'image',
  '.webp': 'image',
  // Archives
  '.zip': 'archive',
  '.tar': 'archive',
  '.gz': 'archive',
};

/** MIME types for extensions that have no magic number (text formats). */
const TEXT_MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.json': 'application/json',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
  '.xml': 'application/xml',
  '.svg': 'image/svg+xml',
  '.py': 'text/x-python; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.java': 'text/plain; charset=utf-8',
  '.cpp': 'text/plain; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
};

/** The kind of a file from its name alone (seed 001 §3.1). */
export function fileTypeOfName(name: string): string {
  return TYPE_BY_EXTENSION[path.extname(name).toLowerCase()] ?? 'unknown';
}

/** What a file is, by name and by content. */
export interface DetectedFileType {
  /** Kind (seed 001 §3.1): the content's kind when the content is recognized, else the extension's. */
  type: string;
  /** MIME type to serve the file with. */
  mime: string;
  /** Extension the content was recognized as (e.g. "pdf"), when it has a magic number. */
  detected?: string;
  /**
   * Set when the name and the content disagree, e.g.
   * `named ".pdf" but the content is DOCX (docx)`.
   */
  mismatch?: string;
}

/** Kinds whose extensions are all "the same thing" for mismatch purposes. */
const EQUIVALENT_EXTENSIONS: readonly (readonly string[])[] = [
  ['jpg', 'jpeg', 'jpe'],
  ['tif', 'tiff'],
  ['gz', 'tgz'],
  ['yaml', 'yml'],
  ['htm', 'html'],
];

/** Extensions whose files always start with a signature `file-type` knows. */
const MAGIC_REQUIRED = new Set(['pdf', 'docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'png', 'jpg', 'jpeg', 'gif', 'bmp', 'webp', 'zip', 'gz', 'tar']);

/** True when the first 4 KB decode as UTF-8 without NUL bytes. */
async function looksLikeText(realPath: string): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(realPath, 'r');
    const buf = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const head = buf.subarray(0, bytesRead);
    if (head.includes(0)) return false;
    // A multi-byte character cut at the 4 KB boundary is fine: decode without the last 3 bytes.
    new TextDecoder('utf-8', { fatal: true }).decode(bytesRead === buf.length ? head.subarray(0, bytesRead - 3) : head);
    return true;
  } catch {
    return false;
  } finally {
    await handle?.close();
  }
}

function sameExtension(a: string, b: string): boolean {
  if (a === b) return true;
  return EQUIVALENT_EXTENSIONS.some((group) => group.includes(a) && group.includes(b));
}

/**
 * Detects a file's kind from its extension and its first bytes (magic numbers,
 * with the `file-type` library: it also tells DOCX/XLSX/PPTX apart inside a
 * ZIP). A recognized content wins over the name, and the disagreement is
 * reported. Text formats have no magic number: their name decides. Reads at
 * most a few KB of the file.
 */
export async function detectFileType(realPath: string, name = path.basename(realPath)): Promise<DetectedFileType> {
  const ext = path.extname(name).toLowerCase();
  const byName = fileTypeOfName(name);
  let sniffed: { ext: string; mime: string } | undefined;
  try {
    sniffed = await fileTypeFromFile(realPath);
  } catch {
    // Unreadable or truncated content: judge by the name.
    sniffed = undefined;
  }
  if (!sniffed) {
    const nameExt = ext.replace(/^\./, '');
    if (!MAGIC_REQUIRED.has(nameExt)) return { type: byName, mime: TEXT_MIME_BY_EXTENSION[ext] ?? 'application/octet-stream' };
    // A binary format without its signature: say what the content looks like instead.
    const text = await looksLikeText(realPath);
    return {
      type: text ? 'text' : 'unknown',
      mime: text ? 'text/plain; charset=utf-8' : 'application/octet-stream',
      mismatch: `named ".${nameExt}" but the content is not ${nameExt.toUpperCase()}${text ? ' (it is plain text)' : ' (unrecognized binary data)'}`,
    };
  }
  const byContent = fileTypeOfName(`x.${sniffed.ext}`);
  const nameExt = ext.replace(/^\./, '');
  const result: DetectedFileType = {
    type: byContent !== 'unknown' ? byContent : byName === 'unknown' ? sniffed.ext : byName,
    mime: sniffed.mime,
    detected: sniffed.ext,
  };
  // Office formats are ZIPs and SVGs are XML: a .zip/.xml name over them is not misleading.
  const container =
    (nameExt === 'zip' && ['docx', 'xlsx', 'pptx', 'odt', 'ods', 'odp', 'epub', 'jar'].includes(sniffed.ext)) || (nameExt === 'xml' && sniffed.ext === 'svg');
  if (!sameExtension(nameExt, sniffed.ext) && !container) {
    const named = nameExt === '' ? 'named without an extension' : `named ".${nameExt}"`;
    result.mismatch = `${named} but the content is ${sniffed.ext.toUpperCase()} (${sniffed.mime})`;
  }
  return result;
}
