import path from 'node:path';
import { z } from 'zod';
import { envInt, parseConfig } from '@agentloop/core';

/** Environment of the indexer, validated once at boot. Limits default to seed 001 §1.2. */
export const IndexerEnv = z
  .object({
    NATS_URL: z.string().optional(),
    LOG_LEVEL: z.string().default('info'),
    /** Same volume as the tool-runner's: files are `<root>/<tenant>/<thread>/<path>`. */
    WORKSPACE_ROOT: z.string().min(1).default('./data/workspaces'),
    /** Symlinks under a workspace's skills/ may point into this folder (read-only), as in the tool-runner. */
    SKILLS_ROOT: z.string().min(1).optional(),
    /** Where search indexes live, shared by every thread and replica. Default: <WORKSPACE_ROOT>/../.indexes. */
    INDEX_ROOT: z.string().min(1).optional(),
    /** Indexes not accessed for this long are stale and removed by the sweeper (seed: 24 h). */
    INDEX_STALE_HOURS: envInt(24, 1, 24 * 365),
    /** How often the stale-index sweeper runs. */
    INDEX_SWEEP_INTERVAL_MS: envInt(3_600_000, 1_000, 86_400_000),
    /** Text files strictly smaller than this are read in full (seed: 100 KB). */
    TEXT_FILE_MAX_BYTES: envInt(102_400, 1, 1_073_741_824),
    /** ...larger ones return this many leading bytes (seed: 50 KB). */
    TEXT_PREVIEW_BYTES: envInt(51_200, 1, 1_073_741_824),
    /** Files larger than this are refused before any byte is read. */
    MAX_FILE_BYTES: envInt(100 * 1024 * 1024, 1, 4 * 1024 * 1024 * 1024),
    PDF_PREVIEW_PAGES: envInt(10, 1, 10_000),
    PDF_PREVIEW_CHARS: envInt(30_000, 100, 10_000_000),
    DOCX_PREVIEW_PAGES: envInt(10, 1, 10_000),
    DOCX_PREVIEW_CHARS: envInt(30_000, 100, 10_000_000),
    XLSX_PREVIEW_SHEETS: envInt(3, 1, 10_000),
    XLSX_PREVIEW_CHARS: envInt(20_000, 100, 10_000_000),
    PPTX_PREVIEW_SLIDES: envInt(15, 1, 10_000),
    PPTX_PREVIEW_CHARS: envInt(25_000, 100, 10_000_000),
    /** search_file's default and largest max_results. */
    SEARCH_MAX_RESULTS_DEFAULT: envInt(5, 1, 1_000),
    SEARCH_MAX_RESULTS_LIMIT: envInt(50, 1, 10_000),
    /** Office files: the sum of the uncompressed sizes their zip declares, and of any one part. */
    ZIP_MAX_TOTAL_BYTES: envInt(256 * 1024 * 1024, 1_024, 4 * 1024 * 1024 * 1024),
    ZIP_MAX_ENTRY_BYTES: envInt(100 * 1024 * 1024, 1_024, 4 * 1024 * 1024 * 1024),
    ZIP_MAX_ENTRIES: envInt(10_000, 1, 1_000_000),
    /** Spreadsheets: cells read across a workbook, and rows of one sheet; the rest is left out with a note. */
    XLSX_MAX_CELLS: envInt(500_000, 1, 100_000_000),
    XLSX_MAX_ROWS: envInt(50_000, 1, 10_000_000),
    /** Characters of extracted text an index holds; longer documents are indexed up to here, with a note. */
    INDEX_MAX_CHARS: envInt(50_000_000, 1_000, 1_000_000_000),
    /** Extraction runs in worker threads: how many, their heap cap, and how long one job may take. */
    EXTRACT_WORKERS: envInt(1, 1, 64),
    EXTRACT_MAX_HEAP_MB: envInt(1024, 32, 65_536),
    EXTRACT_TIMEOUT_MS: envInt(120_000, 100, 3_600_000),
    /** Loaded indexes kept in memory (least recently used are dropped). */
    INDEX_CACHE_ENTRIES: envInt(16, 0, 10_000),
  })
  .refine((c) => c.TEXT_PREVIEW_BYTES <= c.TEXT_FILE_MAX_BYTES, {
    path: ['TEXT_PREVIEW_BYTES'],
    message: 'must not exceed TEXT_FILE_MAX_BYTES',
  })
  .refine((c) => c.SEARCH_MAX_RESULTS_DEFAULT <= c.SEARCH_MAX_RESULTS_LIMIT, {
    path: ['SEARCH_MAX_RESULTS_DEFAULT'],
    message: 'must not exceed SEARCH_MAX_RESULTS_LIMIT',
  })
  .transform((c) => ({ ...c, INDEX_ROOT: c.INDEX_ROOT ?? path.join(path.resolve(c.WORKSPACE_ROOT), '..', '.indexes') }));
export type IndexerConfig = z.infer<typeof IndexerEnv>;

/** Parses the indexer's environment; throws a ConfigError naming each bad variable. */
export function loadIndexerConfig(env: NodeJS.ProcessEnv = process.env): IndexerConfig {
  return parseConfig(IndexerEnv, env);
}
