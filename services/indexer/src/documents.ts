/**
 * The indexer's document service: reads a workspace file as text (PDF, DOCX, XLSX, PPTX, text)
 * through the cache, and searches it. Slightly over 400 lines: read and search share the cache and
 * the limits.
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Logger } from '@agentloop/core';
import type { IndexerConfig } from './config.js';
import { IndexerError, displayPath } from './errors.js';
import { ExtractError } from './extract/errors.js';
import { DOCUMENT_EXTENSIONS, KIND_NAMES, sniff } from './extract/extract.js';
import { ExtractorPool } from './extract/pool.js';
import { unitOf, type DocKind, type Extraction, type ExtractLimits, type UnitName } from './extract/types.js';
import { formatBytes } from './extract/zip.js';
import { IndexStore } from './search/store.js';
import { searchTextFile } from './search/text-search.js';
import { openWorkspaceFile, resolveRoots, type WorkspaceFile, type WorkspaceRoots } from './workspace.js';

/** Longest search query, in characters (search_file's own limit). */
export const MAX_QUERY_CHARS = 1000;
/** Most distinct words in a search query. */
export const MAX_QUERY_WORDS = 32;

export type FileKind = DocKind | 'text';

export interface FileRequest {
  tenantId: string;
  threadId: string;
  /** Workspace-relative path. */
  path: string;
}

export interface ReadResult {
  content: string;
  kind: FileKind;
  pageCount: number;
  sheetCount: number;
  slideCount: number;
  truncated: boolean;
  sizeBytes: number;
  path: string;
}

export interface SearchHit {
  /** Page, sheet or slide (documents); 0 for text files. */
  page: number;
  /** Line (text files); 0 for documents. */
  line: number;
  score: number;
  snippet: string;
  label?: string;
}

export interface SearchResult {
  content: string;
  kind: FileKind;
  matches: SearchHit[];
  total: number;
  indexBuilt: boolean;
  path: string;
}

/** Bytes inspected to tell documents, text and binary apart. */
const SNIFF_BYTES = 8_192;

interface HashEntry {
  ino: number;
  size: number;
  mtimeMs: number;
  hash: string;
}

/**
 * read_file and search_file for workspace files (seed 001 §1.2): text files
 * in full or previewed and searched live; documents extracted in worker
 * threads, previewed within per-format limits, and searched through a
 * per-content index built on first search.
 */
export class DocumentService {
  private roots: WorkspaceRoots | undefined;
  private readonly pool: ExtractorPool;
  readonly store: IndexStore;
  /** real path → content hash, valid while inode, size and mtime are unchanged. */
  private readonly hashes = new Map<string, HashEntry>();

  constructor(
    private readonly config: IndexerConfig,
    private readonly logger: Logger,
  ) {
    this.pool = new ExtractorPool({ size: config.EXTRACT_WORKERS, maxHeapMb: config.EXTRACT_MAX_HEAP_MB, timeoutMs: config.EXTRACT_TIMEOUT_MS, logger });
    this.store = new IndexStore({ root: config.INDEX_ROOT, staleMs: config.INDEX_STALE_HOURS * 3_600_000, cacheEntries: config.INDEX_CACHE_ENTRIES, logger });
  }

  async init(): Promise<void> {
    this.roots ??= await resolveRoots(this.config.WORKSPACE_ROOT, this.config.SKILLS_ROOT);
    await this.store.init();
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  async read(req: FileRequest, signal?: AbortSignal): Promise<ReadResult> {
    return this.withFile(req, async (file) => {
      const { kind, head } = await this.classify(file);
      if (kind === 'text') return this.readText(file, head);
      const bytes = await file.handle.readFile();
      const extraction = await this.extract(file, { op: 'extract', bytes, sniffed: kind, limits: this.previewLimits() }, signal);
      return this.formatDocument(file, extraction.extraction);
    });
  }

  async search(req: FileRequest & { query: string; maxResults: number }, signal?: AbortSignal): Promise<SearchResult> {
    const query = req.query.trim();
    if (query === '') throw new IndexerError('INVALID_ARGUMENT', 'A search query is required');
    // Every word is looked for in every line (or index chunk): the query's size bounds the CPU a search costs.
    if (query.length > MAX_QUERY_CHARS) {
      throw new IndexerError(
        'INVALID_ARGUMENT',
        `Search query too long: ${query.length} characters, more than the ${MAX_QUERY_CHARS} allowed; use a few keywords`,
      );
    }
    const words = new Set(query.toLowerCase().split(/\s+/)).size;
    if (words > MAX_QUERY_WORDS) {
      throw new IndexerError('INVALID_ARGUMENT', `Search query has ${words} different words, more than the ${MAX_QUERY_WORDS} allowed; use a few keywords`);
    }
    const max = Math.min(req.maxResults > 0 ? req.maxResults : this.config.SEARCH_MAX_RESULTS_DEFAULT, this.config.SEARCH_MAX_RESULTS_LIMIT);
    return this.withFile(req, async (file) => {
      this.assertSize(file);
      const { kind } = await this.classify(file);
      if (kind === 'text') {
        const out = await searchTextFile(file.handle, query, max, signal);
        const matches = out.matches.map((m) => ({
          page: 0,
          line: m.line,
          score: m.score,
          snippet: [m.before, m.text, m.after].filter((x) => x !== undefined).join('\n'),
        }));
        return {
          content: formatTextMatches(file.relative, query, out.matches, out.total),
          kind: 'text',
          matches,
          total: out.total,
          indexBuilt: false,
          path: file.relative,
        };
      }
      let bytes: Uint8Array | undefined;
      const hash = await this.contentHash(file, async () => (bytes ??= await file.handle.readFile()));
      const pathId = `${req.tenantId}/${req.threadId}/${file.relative}`;
      const { index, built } = await this.store.open(pathId, hash, async () => {
        const data = bytes ?? (await file.handle.readFile());
        const res = await this.extract(file, { op: 'index', bytes: data, sniffed: kind, limits: this.indexLimits(), hash }, signal);
        if (!res.index) throw new IndexerError('INTERNAL', 'the extraction worker returned no index');
        return res.index;
      });
      const out = index.search(query, max);
      const info = index.file;
      const content = formatDocumentMatches(
        file.relative,
        query,
        info.kind as DocKind,
        info.unit,
        info.total,
        out.matches,
        out.total,
        info.complete ? [] : info.notes,
      );
      return {
        content,
        kind: info.kind as DocKind,
        matches: out.matches.map((m) => ({ page: m.page, line: 0, score: m.score, snippet: m.snippet, ...(m.label ? { label: m.label } : {}) })),
        total: out.total,
        indexBuilt: built,
        path: file.relative,
      };
    });
  }

  /** Removes stale indexes (see IndexStore.sweepStale). */
  sweep(): Promise<number> {
    return this.store.sweepStale();
  }

  private async withFile<T>(req: FileRequest, fn: (file: WorkspaceFile) => Promise<T>): Promise<T> {
    await this.init();
    const file = await openWorkspaceFile(this.roots as WorkspaceRoots, req.tenantId, req.threadId, req.path);
    try {
      return await fn(file);
    } finally {
      await file.handle.close();
    }
  }

  private assertSize(file: WorkspaceFile): void {
    if (file.size > this.config.MAX_FILE_BYTES) {
      throw new IndexerError(
        'INVALID_ARGUMENT',
        `${displayPath(file.relative)} is ${formatBytes(file.size)}; files over ${formatBytes(this.config.MAX_FILE_BYTES)} are not read (MAX_FILE_BYTES)`,
      );
    }
  }

  /** Decides text or document from the first bytes; a document extension on other content is refused. */
  private async classify(file: WorkspaceFile): Promise<{ kind: 'text' | 'pdf' | 'zip'; head: Uint8Array }> {
    const head = await readAt(file, 0, Math.min(file.size, SNIFF_BYTES));
    const sniffed = sniff(head, head.length >= file.size);
    const ext = path.extname(file.relative).toLowerCase();
    const claimed = DOCUMENT_EXTENSIONS[ext];
    // Anything but text is read whole: the size cap applies before any other check.
    if (sniffed !== 'text') this.assertSize(file);
    if (sniffed === 'pdf' || sniffed === 'zip') return { kind: sniffed, head };
    const shown = displayPath(file.relative);
    if (claimed) {
      const what = claimed === 'pdf' ? 'it does not start with a %PDF header' : 'it is not a zip archive';
      throw new IndexerError(
        'INVALID_ARGUMENT',
        `${shown} has a ${ext} extension but is not a ${KIND_NAMES[claimed]}: ${what}${sniffed === 'text' ? ' (it holds plain text)' : ''}`,
      );
    }
    if (sniffed === 'binary') {
      throw new IndexerError('INVALID_ARGUMENT', `${shown} is a binary file; only text files and PDF, DOCX, XLSX and PPTX documents can be read`);
    }
    return { kind: 'text', head };
  }

  private async readText(file: WorkspaceFile, head: Uint8Array): Promise<ReadResult> {
    const base = { kind: 'text' as const, pageCount: 0, sheetCount: 0, slideCount: 0, sizeBytes: file.size, path: file.relative };
    if (file.size < this.config.TEXT_FILE_MAX_BYTES) {
      const bytes = file.size <= head.length ? head : await readAt(file, 0, file.size);
      const text = new TextDecoder('utf-8').decode(bytes);
      return { ...base, content: text === '' ? '(empty file)' : text, truncated: false };
    }
    const preview = await readAt(file, 0, this.config.TEXT_PREVIEW_BYTES);
    // stream: true drops a multi-byte character cut at the end of the preview.
    const text = new TextDecoder('utf-8').decode(preview, { stream: true });
    const content =
      `${text}\n\n[Preview: the first ${Buffer.byteLength(text)} of ${file.size} bytes of ${displayPath(file.relative)}. ` +
      `The file is ${this.config.TEXT_FILE_MAX_BYTES} bytes or larger: use search_file to find specific content.]`;
    return { ...base, content, truncated: true };
  }

  private previewLimits(): ExtractLimits {
    const c = this.config;
    return {
      maxUnits: { pdf: c.PDF_PREVIEW_PAGES, docx: c.DOCX_PREVIEW_PAGES, xlsx: c.XLSX_PREVIEW_SHEETS, pptx: c.PPTX_PREVIEW_SLIDES },
      // One character past the largest preview tells "longer than the preview" apart from "exactly fits".
      maxChars: Math.max(c.PDF_PREVIEW_CHARS, c.DOCX_PREVIEW_CHARS, c.XLSX_PREVIEW_CHARS, c.PPTX_PREVIEW_CHARS) + 1,
      zip: this.zipLimits(),
      xlsxMaxCells: c.XLSX_MAX_CELLS,
      xlsxMaxRows: c.XLSX_MAX_ROWS,
    };
  }

  private indexLimits(): ExtractLimits {
    const c = this.config;
    return { maxUnits: {}, maxChars: c.INDEX_MAX_CHARS, zip: this.zipLimits(), xlsxMaxCells: c.XLSX_MAX_CELLS, xlsxMaxRows: c.XLSX_MAX_ROWS };
  }

  private zipLimits() {
    return { maxTotalBytes: this.config.ZIP_MAX_TOTAL_BYTES, maxEntryBytes: this.config.ZIP_MAX_ENTRY_BYTES, maxEntries: this.config.ZIP_MAX_ENTRIES };
  }

  private async extract(
    file: WorkspaceFile,
    job: { op: 'extract' | 'index'; bytes: Uint8Array; sniffed: 'pdf' | 'zip'; limits: ExtractLimits; hash?: string },
    signal: AbortSignal | undefined,
  ) {
    const claimed = DOCUMENT_EXTENSIONS[path.extname(file.relative).toLowerCase()];
    const started = Date.now();
    try {
      const res = await this.pool.run({ ...job, claimed }, signal);
      this.logger.debug({ op: job.op, ms: Date.now() - started, bytes: file.size }, 'extraction done');
      return res;
    } catch (err) {
      if (err instanceof ExtractError) {
        throw new IndexerError(err.code, `Cannot read ${displayPath(file.relative)}: ${err.message}`, { cause: err });
      }
      throw err;
    }
  }

  private formatDocument(file: WorkspaceFile, ex: Extraction | undefined): ReadResult {
    if (!ex) throw new IndexerError('INTERNAL', 'the extraction worker returned no content');
    const c = this.config;
    const limits: Record<DocKind, { units: number; chars: number }> = {
      pdf: { units: c.PDF_PREVIEW_PAGES, chars: c.PDF_PREVIEW_CHARS },
      docx: { units: c.DOCX_PREVIEW_PAGES, chars: c.DOCX_PREVIEW_CHARS },
      xlsx: { units: c.XLSX_PREVIEW_SHEETS, chars: c.XLSX_PREVIEW_CHARS },
      pptx: { units: c.PPTX_PREVIEW_SLIDES, chars: c.PPTX_PREVIEW_CHARS },
    };
    const { units: maxUnits, chars: maxChars } = limits[ex.kind];
    const unit = unitOf(ex.kind);
    const parts: string[] = [];
    let used = 0;
    let shown = 0;
    let cut = false;
    for (const u of ex.units.slice(0, maxUnits)) {
      const heading = `--- ${capitalize(unit)} ${u.n}${u.label && unit !== 'page' ? `: ${u.label}` : ''} ---\n`;
      const room = maxChars - used;
      if (room <= 0) {
        cut = true;
        break;
      }
      let text = u.text;
      if (text.length > room) {
        text = sliceChars(text, room);
        cut = true;
      }
      parts.push(`${heading}${text}`);
      used += text.length;
      shown++;
      if (cut) break;
    }
    const truncated = cut || shown < ex.total || !ex.complete;
    const header = `${KIND_NAMES[ex.kind]}: ${displayPath(file.relative)} (${plural(ex.total, unit)})`;
    let content = `${header}\n\n${parts.join('\n\n')}`;
    if (truncated) {
      const range = shown === 0 ? `no ${unit}s` : shown === 1 ? `${unit} 1` : `${unit}s 1-${shown}`;
      const charNote = cut ? `, cut at ${maxChars.toLocaleString('en-US')} characters` : '';
      const notes = ex.notes.length > 0 ? ` ${ex.notes.join('; ')}.` : '';
      content +=
        `\n\n[Preview: ${range} of ${plural(ex.total, unit)}${charNote}.${notes} ` +
        `The document is larger than read_file shows: use search_file to find specific content.]`;
    }
    return {
      content,
      kind: ex.kind,
      pageCount: unit === 'page' ? ex.total : 0,
      sheetCount: unit === 'sheet' ? ex.total : 0,
      slideCount: unit === 'slide' ? ex.total : 0,
      truncated,
      sizeBytes: file.size,
      path: file.relative,
    };
  }

  /** sha256 of the file, cached per (real path, inode, size, mtime). */
  private async contentHash(file: WorkspaceFile, bytes: () => Promise<Uint8Array>): Promise<string> {
    const known = this.hashes.get(file.real);
    if (known && known.ino === file.ino && known.size === file.size && known.mtimeMs === file.mtimeMs) return known.hash;
    const hash = createHash('sha256')
      .update(await bytes())
      .digest('hex');
    this.hashes.delete(file.real);
    this.hashes.set(file.real, { ino: file.ino, size: file.size, mtimeMs: file.mtimeMs, hash });
    if (this.hashes.size > 10_000) {
      const oldest = this.hashes.keys().next().value;
      if (oldest !== undefined) this.hashes.delete(oldest);
    }
    return hash;
  }
}

async function readAt(file: WorkspaceFile, position: number, length: number): Promise<Uint8Array> {
  const buf = Buffer.alloc(length);
  let off = 0;
  while (off < length) {
    const { bytesRead } = await file.handle.read(buf, off, length - off, position + off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return buf.subarray(0, off);
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function plural(n: number, unit: UnitName): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** The first `n` UTF-16 units without splitting a surrogate pair. */
function sliceChars(text: string, n: number): string {
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

function formatTextMatches(relative: string, query: string, matches: { line: number; before?: string; text: string; after?: string }[], total: number): string {
  const shown = displayPath(relative);
  if (matches.length === 0) return `No matches for "${query}" in ${shown}.`;
  const width = String(matches.reduce((w, m) => Math.max(w, m.line + 1), 0)).length;
  const num = (n: number) => String(n).padStart(width, ' ');
  const blocks = matches.map((m) => {
    const lines: string[] = [`Line ${m.line}:`];
    if (m.before !== undefined) lines.push(`  ${num(m.line - 1)}: ${m.before}`);
    lines.push(`> ${num(m.line)}: ${m.text}`);
    if (m.after !== undefined) lines.push(`  ${num(m.line + 1)}: ${m.after}`);
    return lines.join('\n');
  });
  return `Found ${plural2(total, 'matching line')} for "${query}" in ${shown} (showing ${matches.length}):\n\n${blocks.join('\n\n')}`;
}

function formatDocumentMatches(
  relative: string,
  query: string,
  kind: DocKind,
  unit: UnitName,
  total: number,
  matches: { page: number; label?: string; score: number; snippet: string }[],
  totalMatches: number,
  notes: string[],
): string {
  const about = `${KIND_NAMES[kind]}, ${plural(total, unit)}`;
  const partial = notes.length > 0 ? `\n\n[Only part of the document is indexed: ${notes.join('; ')}.]` : '';
  if (matches.length === 0) return `No matches for "${query}" in ${displayPath(relative)} (${about}).${partial}`;
  const blocks = matches.map((m, i) => {
    const where = `${capitalize(unit)} ${m.page}${m.label && unit !== 'page' ? ` "${m.label}"` : ''}`;
    return `[${i + 1}] ${where} (score ${m.score})\n${m.snippet}`;
  });
  return (
    `Found ${plural2(totalMatches, 'matching passage')} for "${query}" in ${displayPath(relative)} (${about}; showing top ${matches.length}):\n\n` +
    `${blocks.join('\n\n')}${partial}`
  );
}

function plural2(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}
