import { ExtractError } from './errors.js';
import type { DocUnit, Extraction, ExtractLimits } from './types.js';
import { localName, parseXmlPart, readRelationships } from './xml.js';
import { StopReading, type ZipArchive } from './zip.js';

interface SheetRef {
  name: string;
  part: string;
}

/** Columns shown per row; cells further right are left out. */
const MAX_COLUMNS = 256;

/**
 * XLSX: each sheet becomes a unit of `| a | b |` rows. Parts are SAX-parsed
 * while inflating and reading stops at the row, cell and character caps, so a
 * million-cell sheet costs no more than the caps allow.
 */
export function extractXlsx(zip: ZipArchive, limits: ExtractLimits): Extraction {
  if (!zip.has('xl/workbook.xml')) throw new ExtractError('INVALID_ARGUMENT', 'the workbook part (xl/workbook.xml) is missing');
  const rels = readRelationships(zip, 'xl/_rels/workbook.xml.rels', 'xl');
  const sheets: SheetRef[] = [];
  parseXmlPart(zip, 'xl/workbook.xml', {
    open(tag) {
      if (localName(tag.name) !== 'sheet') return;
      const rid = tag.attributes['r:id'] ?? Object.entries(tag.attributes).find(([k]) => localName(k) === 'id' && k !== 'sheetId')?.[1];
      const part = rid ? rels.get(rid) : undefined;
      if (part && zip.has(part)) sheets.push({ name: tag.attributes.name ?? `Sheet${sheets.length + 1}`, part });
    },
  });
  const shared = zip.has('xl/sharedStrings.xml') ? readSharedStrings(zip, 'xl/sharedStrings.xml', limits.zip.maxEntryBytes) : [];
  const maxSheets = limits.maxUnits.xlsx ?? sheets.length;
  const units: DocUnit[] = [];
  const notes: string[] = [];
  let complete = sheets.length <= maxSheets;
  let cells = 0;
  let chars = 0;
  for (const [i, sheet] of sheets.entries()) {
    if (i >= maxSheets || chars >= limits.maxChars || cells >= limits.xlsxMaxCells) {
      complete = false;
      break;
    }
    const lines: string[] = [];
    let rows = 0;
    let row: string[] = [];
    let cell: { col: number; type: string; value: string } | undefined;
    let inValue = false;
    let stopped: string | undefined;
    const flushRow = () => {
      while (row.length > 0 && row[row.length - 1] === '') row.pop();
      if (row.length > 0) {
        const line = `| ${row.map((c) => c.replace(/\s+/g, ' ').replace(/\|/g, '\\|')).join(' | ')} |`;
        lines.push(line);
        chars += line.length + 1;
      }
      row = [];
    };
    parseXmlPart(zip, sheet.part, {
      open(tag) {
        const n = localName(tag.name);
        if (n === 'row') {
          row = [];
        } else if (n === 'c') {
          cell = { col: columnIndex(tag.attributes.r) ?? row.length, type: tag.attributes.t ?? 'n', value: '' };
        } else if (cell && (n === 'v' || n === 't')) {
          inValue = true;
        }
      },
      text(t) {
        if (cell && inValue) cell.value += t;
      },
      close(tag) {
        const n = localName(tag.name);
        if (n === 'v' || n === 't') {
          inValue = false;
        } else if (n === 'c' && cell) {
          const c = cell;
          cell = undefined;
          if (c.col >= MAX_COLUMNS) return;
          let value = c.value;
          if (c.type === 's') value = shared[Number(c.value)] ?? '';
          else if (c.type === 'b') value = c.value === '1' ? 'TRUE' : 'FALSE';
          while (row.length < c.col) row.push('');
          row[c.col] = value;
          cells++;
        } else if (n === 'row') {
          flushRow();
          rows++;
          if (rows >= limits.xlsxMaxRows) stopped = `first ${rows.toLocaleString('en-US')} rows`;
          else if (cells >= limits.xlsxMaxCells) stopped = `cell limit of ${limits.xlsxMaxCells.toLocaleString('en-US')} reached`;
          else if (chars >= limits.maxChars) stopped = 'character limit reached';
          if (stopped) throw new StopReading();
        }
      },
    });
    if (stopped) {
      complete = false;
      notes.push(`Sheet "${sheet.name}": ${stopped}; the rest of the sheet was not read`);
    }
    units.push({ n: i + 1, label: sheet.name, text: lines.length > 0 ? lines.join('\n') : '(empty sheet)' });
  }
  return { kind: 'xlsx', total: sheets.length, units, complete, notes };
}

function readSharedStrings(zip: ZipArchive, part: string, maxChars: number): string[] {
  const out: string[] = [];
  let current: string | undefined;
  let inText = false;
  let skipDepth = 0;
  let total = 0;
  parseXmlPart(zip, part, {
    open(tag) {
      const n = localName(tag.name);
      if (n === 'si') current = '';
      else if (n === 'rPh')
        skipDepth++; // phonetic runs repeat the text in another script
      else if (n === 't' && skipDepth === 0) inText = true;
    },
    text(t) {
      if (inText && current !== undefined) current += t;
    },
    close(tag) {
      const n = localName(tag.name);
      if (n === 't') inText = false;
      else if (n === 'rPh') skipDepth--;
      else if (n === 'si' && current !== undefined) {
        total += current.length;
        if (total > maxChars) throw new ExtractError('INVALID_ARGUMENT', 'the shared strings of the workbook are too large');
        out.push(current);
        current = undefined;
      }
    },
  });
  return out;
}

/** 0-based column of a cell reference like "AB12". */
export function columnIndex(ref: string | undefined): number | undefined {
  if (!ref) return undefined;
  let col = 0;
  let i = 0;
  for (; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c >= 65 && c <= 90) col = col * 26 + (c - 64);
    else break;
  }
  return i === 0 ? undefined : col - 1;
}
