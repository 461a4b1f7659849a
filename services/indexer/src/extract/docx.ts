import mammoth from 'mammoth';
import { zipSync } from 'fflate';
import { ExtractError } from './errors.js';
import type { DocUnit, Extraction, ExtractLimits } from './types.js';
import { localName, parseXmlPart } from './xml.js';
import type { ZipArchive } from './zip.js';

/** Without explicit page breaks, a long document is cut into pages of about this many characters. */
export const DOCX_CHARS_PER_PAGE = 3_000;

/**
 * DOCX through mammoth (paragraphs, headings, lists, tables as `| a | b |`
 * rows). Mammoth inflates with JSZip, which has no size guard, so it is handed
 * a rebuilt archive holding only the XML parts, already inflated under the
 * ZipArchive limits (media are left out: they carry no text).
 *
 * Pages: Word does not store page boundaries; explicit page breaks split the
 * text, and a document without any is cut every ~3,000 characters at a
 * paragraph end. The page count is the larger of that and docProps/app.xml's.
 */
export async function extractDocx(zip: ZipArchive, limits: ExtractLimits): Promise<Extraction> {
  if (!zip.has('word/document.xml')) throw new ExtractError('INVALID_ARGUMENT', 'the document part (word/document.xml) is missing');
  const parts: Record<string, Uint8Array> = {};
  for (const name of zip.names()) {
    if (/\.(xml|rels)$/i.test(name) && !name.startsWith('word/media/')) parts[name] = zip.read(name);
  }
  const safe = zipSync(parts, { level: 0 });
  let html: string;
  try {
    const result = await mammoth.convertToHtml(
      { buffer: Buffer.from(safe.buffer, safe.byteOffset, safe.byteLength) },
      {
        styleMap: ["br[type='page'] => hr"],
        convertImage: mammoth.images.imgElement(() => Promise.resolve({ src: '' })),
        ignoreEmptyParagraphs: true,
      },
    );
    html = result.value;
  } catch (err) {
    throw new ExtractError('INVALID_ARGUMENT', `the Word document cannot be read (${err instanceof Error ? err.message : String(err)})`);
  }
  const pages = splitPages(htmlToText(html));
  const declared = zip.has('docProps/app.xml') ? declaredPages(zip) : 0;
  const total = Math.max(pages.length, declared);
  const max = limits.maxUnits.docx ?? pages.length;
  const units: DocUnit[] = [];
  let chars = 0;
  for (const [i, text] of pages.entries()) {
    if (i >= max || chars >= limits.maxChars) break;
    units.push({ n: i + 1, text });
    chars += text.length;
  }
  return { kind: 'docx', total, units, complete: units.length === pages.length, notes: [] };
}

function declaredPages(zip: ZipArchive): number {
  let inPages = false;
  let value = '';
  parseXmlPart(zip, 'docProps/app.xml', {
    open(tag) {
      inPages = localName(tag.name) === 'Pages';
    },
    text(t) {
      if (inPages) value += t;
    },
    close() {
      inPages = false;
    },
  });
  const n = Number.parseInt(value, 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** Splits on page-break markers ("\f"); cuts break-less long text into ~3,000-character pages. */
function splitPages(text: string): string[] {
  const explicit = text.split('\f').map((p) => p.trim());
  if (explicit.length > 1) return explicit.map((p) => p || '(blank page)');
  const whole = explicit[0] ?? '';
  if (whole.length <= DOCX_CHARS_PER_PAGE) return [whole || '(empty document)'];
  const pages: string[] = [];
  let current = '';
  for (const para of whole.split('\n')) {
    if (current.length > 0 && current.length + para.length > DOCX_CHARS_PER_PAGE) {
      pages.push(current.trimEnd());
      current = '';
    }
    current += `${para}\n`;
  }
  if (current.trim() !== '') pages.push(current.trimEnd());
  return pages;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number.parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

/**
 * Mammoth's HTML (a small, well-formed vocabulary) to text: headings as "#",
 * list items as "-" / "1.", tables as `| a | b |` rows with a separator under
 * a header row, page breaks (<hr>) as "\f".
 */
export function htmlToText(html: string): string {
  const out: string[] = [];
  let line = '';
  const lists: { ordered: boolean; n: number }[] = [];
  let table: { rows: string[][]; header: boolean[] } | undefined;
  let cell: string | undefined;
  const endLine = () => {
    if (line.trim() !== '') out.push(line.trimEnd());
    line = '';
  };
  const re = /<(\/?)([a-zA-Z0-9]+)[^>]*?(\/?)>|([^<]+)/g;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    const [, closing, rawTag, , text] = m;
    if (text !== undefined) {
      const t = decodeEntities(text);
      if (cell !== undefined) cell += t;
      else line += t;
      continue;
    }
    const tag = (rawTag ?? '').toLowerCase();
    if (cell !== undefined && !['td', 'th', 'tr', 'table'].includes(tag)) {
      if (!closing && (tag === 'p' || tag === 'br') && cell.trim() !== '') cell += ' ';
      continue;
    }
    switch (tag) {
      case 'p':
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6':
        if (closing) endLine();
        else {
          endLine();
          if (tag[0] === 'h') line = `${'#'.repeat(Number(tag[1]))} `;
        }
        break;
      case 'ul':
      case 'ol':
        endLine();
        if (closing) lists.pop();
        else lists.push({ ordered: tag === 'ol', n: 0 });
        break;
      case 'li':
        endLine();
        if (!closing) {
          const list = lists[lists.length - 1];
          const indent = '  '.repeat(Math.max(0, lists.length - 1));
          if (list) list.n++;
          line = `${indent}${list?.ordered ? `${list.n}.` : '-'} `;
        }
        break;
      case 'br':
        endLine();
        break;
      case 'hr':
        endLine();
        out.push('\f');
        break;
      case 'table':
        endLine();
        if (!closing) table = { rows: [], header: [] };
        else if (table) {
          table.rows.forEach((row, i) => {
            out.push(`| ${row.join(' | ')} |`);
            if (table?.header[i] && !table.header[i + 1]) out.push(`|${row.map(() => ' --- ').join('|')}|`);
          });
          table = undefined;
        }
        break;
      case 'tr':
        if (!closing && table) {
          table.rows.push([]);
          table.header.push(false);
        }
        break;
      case 'td':
      case 'th':
        if (!closing) cell = '';
        else if (table && cell !== undefined) {
          table.rows[table.rows.length - 1]?.push(cell.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|'));
          if (tag === 'th') table.header[table.header.length - 1] = true;
          cell = undefined;
        }
        break;
      default:
        break;
    }
  }
  endLine();
  return out.join('\n').replace(/\n?\f\n?/g, '\f');
}
