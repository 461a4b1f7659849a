import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Headers, MemoryBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import {
  create,
  fromBinary,
  toBinary,
  DocumentKind,
  ReadDocumentRequestSchema,
  ReadDocumentResponseSchema,
  SearchDocumentRequestSchema,
  SearchDocumentResponseSchema,
} from '@agentloop/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadIndexerConfig } from './config.js';
import { INDEXER_SUBJECTS, createIndexer, type Indexer } from './service.js';
import { buildDocx, buildLargeXlsx, buildPdf, buildPptx, buildXlsx, buildZipBomb } from './testing/index.js';

let tmp: string;
let ws: string;
let serverBus: MemoryBus;
let client: MemoryBus;
let indexer: Indexer;

beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'indexer-svc-'));
  ws = path.join(tmp, 'workspaces', 'tenant-a', 'thread-1');
  await fs.mkdir(path.join(ws, 'uploads'), { recursive: true });
  await fs.mkdir(path.join(tmp, 'workspaces', 'tenant-a', 'thread-2', 'uploads'), { recursive: true });
  serverBus = new MemoryBus();
  client = serverBus.peer();
  const config = loadIndexerConfig({ WORKSPACE_ROOT: path.join(tmp, 'workspaces'), EXTRACT_MAX_HEAP_MB: '256' });
  indexer = createIndexer({ bus: serverBus, logger: silentLogger(), config });
  await indexer.start();
});
afterAll(async () => {
  await indexer.stop();
  await client.close();
  await serverBus.close();
  await fs.rm(tmp, { recursive: true, force: true });
});

async function put(rel: string, data: Uint8Array | string, thread = 'thread-1'): Promise<void> {
  const file = path.join(tmp, 'workspaces', 'tenant-a', thread, rel);
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, data);
}

async function read(p: string, headers: Record<string, string> = {}) {
  const req = create(ReadDocumentRequestSchema, { tenantId: 'tenant-a', threadId: 'thread-1', path: p });
  const reply = await client.request(INDEXER_SUBJECTS.read, toBinary(ReadDocumentRequestSchema, req), { timeoutMs: 60_000, headers });
  return fromBinary(ReadDocumentResponseSchema, reply.data);
}

async function search(p: string, query: string, maxResults = 0, thread = 'thread-1') {
  const req = create(SearchDocumentRequestSchema, { tenantId: 'tenant-a', threadId: thread, path: p, query, maxResults });
  const reply = await client.request(INDEXER_SUBJECTS.search, toBinary(SearchDocumentRequestSchema, req), { timeoutMs: 60_000 });
  return fromBinary(SearchDocumentResponseSchema, reply.data);
}

const pages = (n: number, f: (i: number) => string = (i) => `This is page ${i}.`) => Array.from({ length: n }, (_, i) => f(i + 1));

describe('agentloop.indexer.read', () => {
  it('returns a PDF of 10 pages or fewer in full with its page count', async () => {
    await put('uploads/short.pdf', buildPdf(pages(3)));
    const res = await read('uploads/short.pdf');
    expect(res.error).toBeUndefined();
    expect(res).toMatchObject({ kind: DocumentKind.PDF, pageCount: 3, truncated: false, path: 'uploads/short.pdf' });
    expect(res.content).toBe(
      'PDF: uploads/short.pdf (3 pages)\n\n--- Page 1 ---\nThis is page 1.\n\n--- Page 2 ---\nThis is page 2.\n\n--- Page 3 ---\nThis is page 3.',
    );
  });

  it('previews the first 10 pages of a longer PDF and points to search_file', async () => {
    await put('uploads/long.pdf', buildPdf(pages(12)));
    const res = await read('uploads/long.pdf');
    expect(res).toMatchObject({ pageCount: 12, truncated: true });
    expect(res.content).toContain('--- Page 10 ---');
    expect(res.content).not.toContain('--- Page 11 ---');
    expect(res.content).toMatch(/\[Preview: pages 1-10 of 12 pages\. .*use search_file/);
  });

  it('cuts a PDF preview at 30,000 characters', async () => {
    // 9 pages (the full-read case) of 50 lines × 80 characters: ~36,000 characters in all.
    await put('uploads/dense.pdf', buildPdf(pages(9, (i) => Array.from({ length: 50 }, () => `page ${i} `.repeat(10).padEnd(80, '.')).join('\n'))));
    const res = await read('uploads/dense.pdf');
    expect(res.truncated).toBe(true);
    expect(res.content).toMatch(/cut at 30,000 characters/);
    expect(res.content.length).toBeLessThan(30_600);
  });

  it('previews 3 of 5 sheets of a workbook', async () => {
    await put('uploads/book.xlsx', buildXlsx(pages(5, (i) => `S${i}`).map((name) => ({ name, rows: [['cell', name]] }))));
    const res = await read('uploads/book.xlsx');
    expect(res).toMatchObject({ kind: DocumentKind.XLSX, sheetCount: 5, truncated: true });
    expect(res.content).toContain('--- Sheet 3: S3 ---\n| cell | S3 |');
    expect(res.content).not.toContain('S4');
  });

  it('previews 15 of 17 slides of a presentation', async () => {
    await put('uploads/deck.pptx', buildPptx(pages(17, (i) => `Slide title ${i}`).map((t) => [t, 'body'])));
    const res = await read('uploads/deck.pptx');
    expect(res).toMatchObject({ kind: DocumentKind.PPTX, slideCount: 17, truncated: true });
    expect(res.content).toContain('--- Slide 15: Slide title 15 ---');
    expect(res.content).not.toContain('Slide title 16');
  });

  it('reads a Word document with its table', async () => {
    await put(
      'uploads/memo.docx',
      buildDocx([
        'Dear team,',
        {
          table: [
            ['Item', 'Cost'],
            ['Laptop', '1200'],
          ],
        },
      ]),
    );
    const res = await read('uploads/memo.docx');
    expect(res).toMatchObject({ kind: DocumentKind.DOCX, pageCount: 1, truncated: false });
    expect(res.content).toContain('| Laptop | 1200 |');
  });

  it('returns small text in full and previews 50 KB of a text file of 100 KB or more', async () => {
    await put('uploads/small.txt', 'hello');
    expect((await read('uploads/small.txt')).content).toBe('hello');
    await put('uploads/big.log', 'x'.repeat(150_000));
    const res = await read('uploads/big.log');
    expect(res).toMatchObject({ kind: DocumentKind.TEXT, truncated: true });
    expect(res.content.startsWith('x'.repeat(51_200) + '\n\n[Preview: the first 51200 of 150000 bytes')).toBe(true);
    expect(res.content).toContain('use search_file');
  });

  it('reads a PDF named .txt as a PDF (content decides)', async () => {
    await put('uploads/actually-pdf.txt', buildPdf(['hidden pdf']));
    const res = await read('uploads/actually-pdf.txt');
    expect(res.kind).toBe(DocumentKind.PDF);
    expect(res.content).toContain('hidden pdf');
  });
});

describe('bad input gets a clear error and the next request is served', () => {
  const cases: [string, string, () => Uint8Array | string, RegExp][] = [
    ['an encrypted PDF', 'uploads/locked.pdf', () => buildPdf(['secret'], { encrypted: true }), /Cannot read uploads\/locked\.pdf: the PDF is encrypted/],
    ['a truncated PDF', 'uploads/cut.pdf', () => buildPdf(pages(5)).slice(0, 400), /Cannot read uploads\/cut\.pdf: the PDF is damaged or truncated/],
    [
      'a DOCX zip bomb',
      'uploads/bomb.docx',
      () => buildZipBomb({ actual: 1024, declared: 2_000_000_000 }),
      /would expand to 1\.9 GB, over the 100\.0 MB limit/,
    ],
    [
      'a .pdf holding text',
      'uploads/fake.pdf',
      () => 'just some text',
      /uploads\/fake\.pdf has a \.pdf extension but is not a PDF: it does not start with a %PDF header \(it holds plain text\)/,
    ],
    [
      'a .docx that is no zip',
      'uploads/fake.docx',
      () => new Uint8Array([1, 2, 3, 0, 4]),
      /has a \.docx extension but is not a Word document: it is not a zip archive/,
    ],
    ['a binary file', 'uploads/blob.bin', () => new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 0, 0]), /is a binary file/],
  ];
  for (const [what, file, make, message] of cases) {
    it(`refuses ${what}`, async () => {
      await put(file, make());
      const res = await read(file);
      expect(res.error?.code).toBe('INVALID_ARGUMENT');
      expect(res.error?.message).toMatch(message);
      expect(res.content).toBe('');
      await put('uploads/after.txt', 'still serving');
      expect((await read('uploads/after.txt')).content).toBe('still serving');
    });
  }

  it('refuses a 200 MB file from its size, before reading it', async () => {
    const file = path.join(ws, 'uploads', 'huge.pdf');
    const fh = await fs.open(file, 'w');
    await fh.truncate(200 * 1024 * 1024); // sparse: no disk space used
    await fh.close();
    const res = await read('uploads/huge.pdf');
    expect(res.error?.message).toBe('uploads/huge.pdf is 200.0 MB; files over 100.0 MB are not read (MAX_FILE_BYTES)');
    expect((await read('uploads/short.pdf')).error).toBeUndefined();
  });

  it('reads a million-cell spreadsheet within its limits', async () => {
    await put('uploads/million.xlsx', buildLargeXlsx(100_000, 10));
    const res = await read('uploads/million.xlsx');
    expect(res.error).toBeUndefined();
    expect(res).toMatchObject({ sheetCount: 1, truncated: true });
    expect(res.content.length).toBeLessThan(21_000);
    const found = await search('uploads/million.xlsx', '4999990');
    expect(found.error).toBeUndefined();
    expect(found.content).toMatch(/Only part of the document is indexed: Sheet "Big": first 50,000 rows/);
  });

  it('refuses paths outside the workspace', async () => {
    const res = await read('../../../../etc/passwd');
    expect(res.error).toMatchObject({ code: 'PATH_OUTSIDE_WORKSPACE', message: 'Path outside workspace: ../../../../etc/passwd' });
    await fs.symlink('/etc/hostname', path.join(ws, 'uploads', 'link.txt'));
    expect((await read('uploads/link.txt')).error?.code).toBe('PATH_OUTSIDE_WORKSPACE');
  });

  it('reports a missing file and a tenant that does not match the caller', async () => {
    expect((await read('uploads/none.pdf')).error).toMatchObject({ code: 'NOT_FOUND', message: 'File not found: uploads/none.pdf' });
    expect((await read('uploads/small.txt', { [Headers.tenant]: 'tenant-b' })).error?.code).toBe('PERMISSION_DENIED');
  });
});

describe('agentloop.indexer.search', () => {
  it('finds the page of a PDF, building the index on the first search only', async () => {
    await put('uploads/manual.pdf', buildPdf(pages(30, (i) => (i === 17 ? 'Reset the router by holding the power button.' : `Filler text for page ${i}.`))));
    const first = await search('uploads/manual.pdf', 'reset the router');
    expect(first.error).toBeUndefined();
    expect(first).toMatchObject({ kind: DocumentKind.PDF, indexBuilt: true, totalMatches: 1 });
    expect(first.matches[0]).toMatchObject({ page: 17, line: 0 });
    expect(first.matches[0]?.snippet).toContain('**Reset the router**');
    expect(first.content).toMatch(
      /^Found 1 matching passage for "reset the router" in uploads\/manual\.pdf \(PDF, 30 pages; showing top 1\):\n\n\[1\] Page 17 \(score /,
    );
    const second = await search('uploads/manual.pdf', 'power button');
    expect(second.indexBuilt).toBe(false);
    expect(second.matches[0]?.page).toBe(17);
  });

  it('shares the index of identical content uploaded in another thread', async () => {
    const pdf = buildPdf(pages(3, (i) => `shared page ${i} kiwi`));
    await put('uploads/a.pdf', pdf);
    await put('uploads/b.pdf', pdf, 'thread-2');
    expect((await search('uploads/a.pdf', 'kiwi')).indexBuilt).toBe(true);
    const other = await search('uploads/b.pdf', 'kiwi', 0, 'thread-2');
    expect(other.indexBuilt).toBe(false);
    expect(other.totalMatches).toBe(3);
  });

  it('rebuilds for new content under the same name and removes the orphaned index', async () => {
    const config = loadIndexerConfig({ WORKSPACE_ROOT: path.join(tmp, 'workspaces') });
    const countIndexes = async () => {
      const dirs = await fs.readdir(config.INDEX_ROOT);
      let n = 0;
      for (const d of dirs.filter((x) => /^[0-9a-f]{2}$/.test(x)))
        n += (await fs.readdir(path.join(config.INDEX_ROOT, d))).filter((f) => f.endsWith('.index.json')).length;
      return n;
    };
    await put('uploads/v.pdf', buildPdf(['version one apple']));
    await search('uploads/v.pdf', 'apple');
    const before = await countIndexes();
    await put('uploads/v.pdf', buildPdf(['version two banana']));
    const res = await search('uploads/v.pdf', 'banana');
    expect(res).toMatchObject({ indexBuilt: true, totalMatches: 1 });
    expect(await countIndexes()).toBe(before);
  });

  it('searches a Chinese Word document by words segmented without spaces', async () => {
    await put(
      'uploads/中文报告.docx',
      buildDocx(['第一章介绍市场情况。', { pageBreak: true }, '第二章讨论机器学习在医疗领域的应用。', { pageBreak: true }, '第三章总结。']),
    );
    const res = await search('uploads/中文报告.docx', '机器学习的应用');
    expect(res.error).toBeUndefined();
    expect(res.matches[0]?.page).toBe(2);
    expect(res.matches[0]?.snippet).toContain('**机器学习**');
    expect(res.matches[0]?.snippet).toContain('**应用**');
  });

  it('scans a text file live with line numbers and context', async () => {
    await put('uploads/app.log', 'boot\nERROR disk full\nretry\n');
    const res = await search('uploads/app.log', 'error');
    expect(res).toMatchObject({ kind: DocumentKind.TEXT, totalMatches: 1, indexBuilt: false });
    expect(res.matches[0]).toMatchObject({ line: 2, page: 0, snippet: 'boot\n**ERROR** disk full\nretry' });
    expect(res.content).toBe('Found 1 matching line for "error" in uploads/app.log (showing 1):\n\nLine 2:\n  1: boot\n> 2: **ERROR** disk full\n  3: retry');
  });

  it('requires a query', async () => {
    expect((await search('uploads/app.log', '  ')).error).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'A search query is required' });
  });

  it('refuses a query of more than 1000 characters or 32 different words (each word costs a pass over every line)', async () => {
    await put('uploads/q.log', 'x\n');
    expect((await search('uploads/q.log', 'a'.repeat(1001))).error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: 'Search query too long: 1001 characters, more than the 1000 allowed; use a few keywords',
    });
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    expect((await search('uploads/q.log', words)).error?.message).toBe('Search query has 40 different words, more than the 32 allowed; use a few keywords');
  });

  it('searches a file that is one long line in pieces, keeping line numbers', async () => {
    await put('uploads/one-line.txt', `first\n${'z'.repeat(300_000)} needle ${'z'.repeat(300_000)}\nlast needle\n`);
    const res = await search('uploads/one-line.txt', 'needle');
    expect(res.error).toBeUndefined();
    expect(res.totalMatches).toBe(2);
    expect(res.matches.map((m) => m.line)).toEqual([2, 3]);
  });
});

describe('path limits (issue 18)', () => {
  it.each([
    [
      'read',
      `uploads/${'a/'.repeat(100_000)}x.pdf`,
      /^Path too long: 200013 bytes, more than the 4096 allowed \(Linux PATH_MAX\); use a shorter path: uploads\/a\/a\/.*…$/,
    ],
    ['read', `uploads/${'a/'.repeat(200)}x.pdf`, /^Path too deep: 202 segments, more than the 128 allowed/],
    ['search', `uploads/${'n'.repeat(256)}.txt`, /^Path has a name of 260 bytes, more than the 255 allowed for one file or folder name \(Linux NAME_MAX\)/],
  ])('%s refuses an oversized path before touching the disk: %#', async (op, p, message) => {
    const res = op === 'read' ? await read(p) : await search(p, 'x');
    expect(res.error?.code).toBe('INVALID_ARGUMENT');
    expect(res.error?.message).toMatch(message);
    expect(res.error?.message.length).toBeLessThan(300);
  });

  it('shows an absolute path in the workspace relative, and never another host path', async () => {
    const inside = await read(path.join(ws, 'uploads', 'b'.repeat(5_000)));
    expect(inside.error?.message).toContain(': uploads/bbb');
    expect(inside.error?.message).not.toContain(tmp);
    const outside = await read(`${tmp}/${'c/'.repeat(3_000)}`);
    expect(outside.error?.message).toContain('(an absolute path outside the workspace)');
    expect(outside.error?.message).not.toContain(tmp);
  });
});
