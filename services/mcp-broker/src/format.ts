import type { SavedMedia } from './media.js';

/** What formatResult reads of an MCP CallToolResult (validated by the SDK before it gets here). */
export interface CallToolResultLike {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
}

type Part = Record<string, unknown>;

/** Bytes encoded by a base64 string (without decoding it). */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const s = data.replace(/\s+/g, '');
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((s.length * 3) / 4) - pad);
}

function str(v: unknown, fallback: string): string {
  return typeof v === 'string' && v !== '' ? v : fallback;
}

/** What the formatter knows besides the result: saved files, and the tool that reads the server's resources. */
export interface FormatContext {
  /** Binary parts saved to the workspace, by index in `content` (media.ts). */
  saved?: ReadonlyMap<number, SavedMedia>;
  /** The exposed name of the server's `read_resource` tool, named after a resource link. */
  readResourceTool?: string;
}

/** `[image saved to outputs/mcp/x-1.png (image/png, 4033 bytes)]`, or the summary and why it was not saved. */
function binary(kind: string, mimeType: string, bytes: number, saved: SavedMedia | undefined, uri?: string): string {
  const what = uri === undefined ? kind : `${kind} ${uri}`;
  if (saved && 'path' in saved) return `[${what} saved to ${saved.path} (${mimeType}, ${saved.bytes} bytes)]`;
  const why = saved ? `, ${saved.error}` : '';
  return `[${what}: ${mimeType}, ${bytes} bytes${why}]`;
}

function part(c: Part, saved: SavedMedia | undefined, ctx: FormatContext): string | undefined {
  switch (c.type) {
    case 'text':
      return typeof c.text === 'string' ? c.text : undefined;
    case 'image':
    case 'audio':
      return binary(c.type, str(c.mimeType, 'unknown type'), base64Bytes(c.data), saved);
    case 'resource_link': {
      const about = [c.name, c.mimeType].filter((v): v is string => typeof v === 'string' && v !== '').join(', ');
      const how = ctx.readResourceTool ? `; read it with ${ctx.readResourceTool}` : '';
      return `[resource: ${str(c.uri, 'unknown')}${about ? ` (${about})` : ''}${how}]`;
    }
    case 'resource': {
      const r = (c.resource ?? {}) as Part;
      const head = `[resource: ${str(r.uri, 'unknown')}]`;
      // An embedded text resource is content the model asked for: keep it under its header.
      if (typeof r.text === 'string') return `${head}\n${r.text}`;
      return binary('resource', str(r.mimeType, 'unknown type'), base64Bytes(r.blob), saved, str(r.uri, 'unknown'));
    }
    default:
      return `[${str(c.type, 'unknown')} content]`;
  }
}

/** Cuts `text` to at most `maxBytes` of UTF-8 without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) to the start of the cut character.
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

/**
 * An MCP CallToolResult as text for the model: text parts joined by newlines, images and audio
 * as the file they were saved to (`[image saved to outputs/mcp/… (image/png, 1234 bytes)]`, or
 * `[image: image/png, 1234 bytes]` when not saved), resource links as `[resource: uri (name, type)]`
 * with the tool that reads them, embedded resources as `[resource: uri]` (a text one followed by its text), `structuredContent` as JSON when there is no text; capped at
 * `maxBytes` with a note saying how much was cut. `isError` is passed through.
 */
export function formatResult(result: CallToolResultLike, maxBytes: number, ctx: FormatContext = {}): { text: string; isError: boolean } {
  const parts: string[] = [];
  for (const [i, c] of (Array.isArray(result.content) ? (result.content as unknown[]) : []).entries()) {
    if (c && typeof c === 'object') {
      const p = part(c as Part, ctx.saved?.get(i), ctx);
      if (p !== undefined) parts.push(p);
    }
  }
  let text = parts.join('\n');
  if (text.trim() === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  const size = Buffer.byteLength(text, 'utf8');
  if (size > maxBytes) text = `${truncateUtf8(text, maxBytes)}\n[result truncated: ${size} bytes, the first ${maxBytes} shown]`;
  return { text: text === '' ? '(no content)' : text, isError: result.isError === true };
}
