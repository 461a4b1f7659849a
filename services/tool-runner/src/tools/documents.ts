import { z } from 'zod';
import { serviceClient, type Bus, type ServiceClient, type ServiceShape } from '@agentloop/bus';
import { Indexer } from '@agentloop/proto';
import { TimeoutError, UnavailableError } from '@agentloop/core';
import { ToolError } from '../errors.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../registry.js';
import type { DocumentReader } from './read-file.js';

const DOCUMENT_EXTENSIONS = new Set(['.pdf', '.docx', '.xlsx', '.pptx']);

export interface IndexerClientOptions {
  bus: Bus;
  /** Upper bound of one indexer request (the tool call's own deadline applies too). */
  timeoutMs: number;
}

/** Calls the indexer (documents are its business, not the tool-runner's) within the tool call's budget. */
async function ask<T>(
  opts: IndexerClientOptions,
  ctx: ToolContext,
  call: (indexer: ServiceClient<ServiceShape<typeof Indexer>>, timeoutMs: number) => Promise<T>,
): Promise<T> {
  // No longer than the call's own budget: the indexer sees that deadline and stops its work with it.
  const timeoutMs = Math.max(1, Math.min(opts.timeoutMs, ctx.deadline - Date.now()));
  try {
    return await call(serviceClient(opts.bus, Indexer), timeoutMs);
  } catch (err) {
    if (err instanceof UnavailableError)
      throw new ToolError('UNAVAILABLE', 'the document service (indexer) is not running; documents cannot be read or searched right now');
    if (err instanceof TimeoutError) throw new ToolError('TIMEOUT', `the document service (indexer) did not answer within ${timeoutMs} ms`);
    throw err;
  }
}

function failed(error: { code: string; message: string } | undefined): never {
  throw new ToolError(error?.code === 'NOT_FOUND' ? 'NOT_FOUND' : 'INVALID_ARGUMENT', error?.message ?? 'the document service failed');
}

/** read_file's reader for PDF, DOCX, XLSX and PPTX (by extension or by content): asks the indexer. */
export function indexerDocumentReader(opts: IndexerClientOptions): DocumentReader {
  return {
    name: 'indexer',
    accepts({ extension, head }) {
      if (DOCUMENT_EXTENSIONS.has(extension)) return true;
      // %PDF- magic, whatever the extension says.
      return head.length >= 5 && head[0] === 0x25 && head[1] === 0x50 && head[2] === 0x44 && head[3] === 0x46 && head[4] === 0x2d;
    },
    async read(file, ctx) {
      const req = { tenantId: ctx.tenantId, threadId: ctx.threadId, path: file.relative };
      const res = await ask(opts, ctx, (indexer, timeoutMs) => indexer.readDocument(req, { timeoutMs }));
      if (res.error) failed(res.error);
      return res.content;
    },
  };
}

const SearchFileArgs = z.object({
  file_path: z.string().min(1).describe('Workspace-relative path of the file to search, e.g. uploads/report.pdf'),
  query: z.string().min(1).max(1000).describe('Keywords or a phrase (case-insensitive; Chinese and other scripts work too)'),
  max_results: z.number().int().min(1).max(50).optional().describe('How many matches to return (default 5)'),
});

/** search_file (seed 001 §1.2): text files scanned live, documents through an index built on first search. */
export function createSearchFileTool(opts: IndexerClientOptions): ToolDefinition<typeof SearchFileArgs> {
  return defineTool({
    name: 'search_file',
    description:
      'Search one file (text, PDF, DOCX, XLSX, PPTX) for keywords or a phrase. Returns the best matching passages with their page ' +
      '(or sheet/slide/line) and matches marked **like this**. Use it for large files instead of reading them whole.',
    schema: SearchFileArgs,
    metadata: { category: 'file', tags: ['file', 'search', 'document'], idempotent: true, displayName: 'Search File', availableToSubagent: true },
    async execute(args, ctx) {
      const target = await ctx.workspace.resolve(args.file_path, { access: 'read', mustExist: true, signal: ctx.signal });
      const req = { tenantId: ctx.tenantId, threadId: ctx.threadId, path: target.relative, query: args.query, maxResults: args.max_results ?? 0 };
      const res = await ask(opts, ctx, (indexer, timeoutMs) => indexer.searchDocument(req, { timeoutMs }));
      if (res.error) failed(res.error);
      return res.content;
    },
  });
}
