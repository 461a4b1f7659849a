import { describe, expect, it } from 'vitest';
import { buildDocx, buildLargeXlsx, buildPdf, buildPptx, buildXlsx, buildZipBomb } from '../testing/index.js';
import { htmlToText } from './docx.js';
import { ExtractError } from './errors.js';
import { extractDocument, sniff } from './extract.js';
import type { ExtractLimits } from './types.js';
import { columnIndex } from './xlsx.js';

const limits = (over: Partial<ExtractLimits> = {}): ExtractLimits => ({
  maxUnits: {},
  maxChars: 1_000_000,
  zip: { maxTotalBytes: 64 * 1024 * 1024, maxEntryBytes: 32 * 1024 * 1024, maxEntries: 1000 },
  xlsxMaxCells: 100_000,
  xlsxMaxRows: 10_000,
  ...over,
});

async function failure(p: Promise<unknown>): Promise<ExtractError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ExtractError);
  return err as ExtractError;
}

describe('sniff', () => {
  it('tells PDF, zip, text and binary apart by content', () => {
    expect(sniff(buildPdf(['x']), true)).toBe('pdf');
    expect(sniff(buildDocx(['x']), true)).toBe('zip');
    expect(sniff(new TextEncoder().encode('hello 你好'), true)).toBe('text');
    expect(sniff(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1]), true)).toBe('binary');
  });
});

describe('PDF', () => {
  it('extracts the text of each page with its page number', async () => {
    const ex = await extractDocument(buildPdf(['first page\nsecond line', 'page two']), 'pdf', 'pdf', limits());
    expect(ex).toMatchObject({ kind: 'pdf', total: 2, complete: true });
    expect(ex.units).toEqual([
      { n: 1, text: 'first page\nsecond line' },
      { n: 2, text: 'page two' },
    ]);
  });

  it('stops at the page limit but reports the total', async () => {
    const pages = Array.from({ length: 12 }, (_, i) => `page ${i + 1}`);
    const ex = await extractDocument(buildPdf(pages), 'pdf', 'pdf', limits({ maxUnits: { pdf: 10 } }));
    expect(ex.total).toBe(12);
    expect(ex.units.map((u) => u.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(ex.complete).toBe(false);
  });

  it('refuses an encrypted PDF clearly', async () => {
    const err = await failure(extractDocument(buildPdf(['secret'], { encrypted: true }), 'pdf', 'pdf', limits()));
    expect(err.message).toMatch(/encrypted \(password-protected\)/);
  });

  it('refuses a truncated PDF clearly', async () => {
    const pdf = buildPdf(['one', 'two', 'three']);
    const err = await failure(extractDocument(pdf.slice(0, Math.floor(pdf.length / 2)), 'pdf', 'pdf', limits()));
    expect(err.message).toMatch(/damaged or truncated/);
  });
});

describe('DOCX', () => {
  it('renders headings, paragraphs and tables as markdown-like rows, header row separated', async () => {
    const docx = buildDocx([
      { heading: 'Quarterly report' },
      'Revenue grew.',
      {
        table: [
          ['Region', 'Sales'],
          ['North', '10'],
          ['South', '20'],
        ],
      },
    ]);
    const ex = await extractDocument(docx, 'zip', 'docx', limits());
    expect(ex.kind).toBe('docx');
    expect(ex.units[0]?.text).toBe('# Quarterly report\nRevenue grew.\n| Region | Sales |\n| --- | --- |\n| North | 10 |\n| South | 20 |');
  });

  it('splits pages on explicit page breaks', async () => {
    const ex = await extractDocument(buildDocx(['one', { pageBreak: true }, 'two', { pageBreak: true }, 'three']), 'zip', 'docx', limits());
    expect(ex.units.map((u) => u.text)).toEqual(['one', 'two', 'three']);
    expect(ex.total).toBe(3);
  });

  it('takes the page count from docProps/app.xml when it is larger', async () => {
    const ex = await extractDocument(buildDocx(['short'], { declaredPages: 14 }), 'zip', 'docx', limits());
    expect(ex.total).toBe(14);
  });

  it('converts mammoth list and table HTML', () => {
    expect(htmlToText('<ol><li>a</li><li>b &amp; c</li></ol><table><tr><th>h1</th><th>h2</th></tr><tr><td><p>x|y</p></td><td>z</td></tr></table>')).toBe(
      '1. a\n2. b & c\n| h1 | h2 |\n| --- | --- |\n| x\\|y | z |',
    );
  });
});

describe('XLSX', () => {
  it('reads each sheet as rows of cells, shared strings resolved', async () => {
    const xlsx = buildXlsx([
      {
        name: 'Sales',
        rows: [
          ['Region', 'Total'],
          ['North', 12.5],
          ['South', true],
        ],
      },
      { name: 'Empty', rows: [] },
    ]);
    const ex = await extractDocument(xlsx, 'zip', 'xlsx', limits());
    expect(ex.total).toBe(2);
    expect(ex.units[0]).toEqual({ n: 1, label: 'Sales', text: '| Region | Total |\n| North | 12.5 |\n| South | TRUE |' });
    expect(ex.units[1]).toEqual({ n: 2, label: 'Empty', text: '(empty sheet)' });
  });

  it('stops a million-cell sheet at the cell cap with a note', async () => {
    const xlsx = buildLargeXlsx(100_000, 10);
    const ex = await extractDocument(xlsx, 'zip', 'xlsx', limits({ xlsxMaxCells: 5_000 }));
    expect(ex.complete).toBe(false);
    expect(ex.units[0]?.text.split('\n')).toHaveLength(500);
    expect(ex.notes[0]).toMatch(/Sheet "Big": cell limit of 5,000 reached/);
  });

  it('computes column indexes from cell references', () => {
    expect([columnIndex('A1'), columnIndex('Z9'), columnIndex('AA3'), columnIndex('1')]).toEqual([0, 25, 26, undefined]);
  });
});

describe('PPTX', () => {
  it('reads slides in presentation order with their titles', async () => {
    const ex = await extractDocument(
      buildPptx([
        ['Intro', 'hello'],
        ['Plan', 'step one', 'step two'],
      ]),
      'zip',
      'pptx',
      limits(),
    );
    expect(ex.units).toEqual([
      { n: 1, label: 'Intro', text: 'Intro\nhello' },
      { n: 2, label: 'Plan', text: 'Plan\nstep one\nstep two' },
    ]);
  });
});

describe('zip safety', () => {
  it('refuses an archive whose central directory declares more than the limit, before inflating', async () => {
    const bomb = buildZipBomb({ actual: 1024, declared: 3_000_000_000 });
    const err = await failure(extractDocument(bomb, 'zip', 'docx', limits()));
    expect(err.message).toMatch(/would expand to 2\.8 GB, over the 32\.0 MB limit/);
  });

  it('stops inflating a part that expands past its declared size', async () => {
    const bomb = buildZipBomb({ actual: 8 * 1024 * 1024, declared: 1_000 });
    const err = await failure(extractDocument(bomb, 'zip', 'docx', limits()));
    expect(err.message).toMatch(/expands past its declared size/);
  });

  it('refuses a zip that is not an Office document for a .docx', async () => {
    const err = await failure(extractDocument(buildZipBomb({ part: 'readme.txt', actual: 10 }), 'zip', 'docx', limits()));
    expect(err.message).toMatch(/zip archive but not a Word document/);
  });

  it('refuses a truncated Office file', async () => {
    const docx = buildDocx(['hello']);
    const err = await failure(extractDocument(docx.slice(0, docx.length - 30), 'zip', 'docx', limits()));
    expect(err.message).toMatch(/not a valid Office document/);
  });
});
