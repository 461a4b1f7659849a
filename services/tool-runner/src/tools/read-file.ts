import { constants, promises as fs, type promises } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../errors.js';
import { mapFsError } from '@agentloop/workspace';
import { defineTool, type ToolContext, type ToolDefinition } from '../registry.js';

export const ReadFileArgs = z.object({
  file_path: z.string().min(1).describe('Workspace-relative path of the file, e.g. uploads/notes.txt or skills/pdf/SKILL.md'),
});
export type ReadFileArgs = z.infer<typeof ReadFileArgs>;

/** Bytes inspected to tell text from binary content. */
export const SNIFF_BYTES = 8_192;

/**
 * Extension point for documents (PDF, DOCX, XLSX, PPTX — seed 001 §1.2): a
 * later issue plugs the indexer in here. A reader that accepts a file is used
 * instead of the text path; without one, documents are reported as binary.
 */
export interface DocumentReader {
  /** Short name for logs, e.g. "indexer". */
  readonly name: string;
  /** Decides from the lower-case extension (".pdf") and the first bytes of the file. */
  accepts(file: { relative: string; extension: string; head: Uint8Array }): boolean;
  /** Returns the text (or preview) for the model. `realPath` is a host path: never echo it. */
  read(file: { relative: string; realPath: string; size: number }, ctx: ToolContext): Promise<string>;
}

export interface ReadFileOptions {
  /** Text files strictly smaller than this are returned in full (seed: 100 KB). */
  textFileMaxBytes: number;
  /** Larger text files return this many leading bytes plus a search_file hint (seed: 50 KB). */
  textPreviewBytes: number;
  documentReaders?: readonly DocumentReader[];
}

/** read_file (seed 001 §1.2): text in full or as a preview; binary content is refused clearly. */
export function createReadFileTool(opts: ReadFileOptions): ToolDefinition<typeof ReadFileArgs> {
  return defineTool({
    name: 'read_file',
    description:
      `Read a text file from the workspace. Files under ${opts.textFileMaxBytes} bytes are returned in full; ` +
      `larger ones return the first ${opts.textPreviewBytes} bytes (use search_file to find specific content).`,
    schema: ReadFileArgs,
    metadata: { category: 'file', tags: ['file', 'read'], idempotent: true, displayName: 'Read File', availableToSubagent: true },
    async execute(args, ctx) {
      const target = await ctx.workspace.resolve(args.file_path, { access: 'read', mustExist: true, signal: ctx.signal });
      let fh: promises.FileHandle;
      try {
        // The path is already fully resolved: a link appearing there since is refused (O_NOFOLLOW);
        // O_NONBLOCK keeps a FIFO from blocking the open.
        fh = await fs.open(target.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch (err) {
        throw mapFsError(err, target.relative);
      }
      try {
        const st = await fh.stat();
        if (st.isDirectory()) {
          throw new ToolError('INVALID_ARGUMENT', `${target.relative} is a directory; use list_workspace_files to see its contents`);
        }
        if (!st.isFile()) throw new ToolError('INVALID_ARGUMENT', `${target.relative} is not a regular file`);

        const head = await readUpTo(fh, Math.min(st.size, SNIFF_BYTES));
        const extension = path.extname(target.relative).toLowerCase();
        const reader = opts.documentReaders?.find((r) => r.accepts({ relative: target.relative, extension, head }));
        if (reader) return await reader.read({ relative: target.relative, realPath: target.real, size: st.size }, ctx);

        const binary = binaryKind(head, extension, head.length >= st.size);
        if (binary) throw new ToolError('INVALID_ARGUMENT', `${target.relative} is a binary file (${binary}); read_file reads text`);

        if (st.size < opts.textFileMaxBytes) {
          const text = new TextDecoder('utf-8').decode(await readUpTo(fh, st.size));
          return text === '' ? '(empty file)' : text;
        }
        const preview = await readUpTo(fh, opts.textPreviewBytes);
        // stream: true drops a multi-byte character cut at the end of the preview.
        const text = new TextDecoder('utf-8').decode(preview, { stream: true });
        return (
          `${text}\n\n[Preview: the first ${Buffer.byteLength(text)} of ${st.size} bytes of ${target.relative}. ` +
          `The file is ${opts.textFileMaxBytes} bytes or larger: use search_file to find specific content.]`
        );
      } catch (err) {
        throw mapFsError(err, target.relative);
      } finally {
        await fh.close();
      }
    },
  });
}

/** Reads up to `n` bytes from the start of the file (fewer at end of file). */
async function readUpTo(fh: promises.FileHandle, n: number): Promise<Uint8Array> {
  const buf = Buffer.alloc(n);
  let off = 0;
  while (off < n) {
    const { bytesRead } = await fh.read(buf, off, n - off, off);
    if (bytesRead === 0) break;
    off += bytesRead;
  }
  return buf.subarray(0, off);
}

/**
 * Undefined for text; otherwise a label of the binary type. Text means: no NUL
 * byte and valid UTF-8 in the first bytes (a character cut by the sniff window
 * is fine unless the file ends there).
 */
export function binaryKind(head: Uint8Array, extension: string, complete: boolean): string | undefined {
  const hasNul = head.includes(0);
  if (!hasNul) {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !complete });
      return undefined;
    } catch {
      // invalid UTF-8: binary
    }
  }
  return describeBinary(head, extension);
}

const OFFICE_BY_EXT: Record<string, string> = {
  '.docx': 'Word document',
  '.xlsx': 'Excel workbook',
  '.pptx': 'PowerPoint presentation',
};

function startsWith(head: Uint8Array, bytes: readonly number[], at = 0): boolean {
  return bytes.every((b, i) => head[at + i] === b);
}

function describeBinary(head: Uint8Array, extension: string): string {
  const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
  if (startsWith(head, ascii('%PDF'))) return 'PDF document';
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47])) return 'PNG image';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'JPEG image';
  if (startsWith(head, ascii('GIF8'))) return 'GIF image';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'WebP image';
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return OFFICE_BY_EXT[extension] ?? 'ZIP archive';
  if (startsWith(head, [0xd0, 0xcf, 0x11, 0xe0])) return 'legacy Office document';
  if (startsWith(head, [0x1f, 0x8b])) return 'gzip archive';
  if (startsWith(head, [0x7f, 0x45, 0x4c, 0x46])) return 'ELF executable';
  if (startsWith(head, ascii('SQLite format 3'))) return 'SQLite database';
  return extension ? `${extension.slice(1)} data` : 'binary data';
}
