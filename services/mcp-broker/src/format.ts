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

function part(c: Part): string | undefined {
  switch (c.type) {
    case 'text':
      return typeof c.text === 'string' ? c.text : undefined;
    case 'image':
    case 'audio':
      return `[${c.type}: ${str(c.mimeType, 'unknown type')}, ${base64Bytes(c.data)} bytes]`;
    case 'resource_link':
      return `[resource: ${str(c.uri, 'unknown')}]`;
    case 'resource': {
      const r = (c.resource ?? {}) as Part;
      const head = `[resource: ${str(r.uri, 'unknown')}]`;
      // An embedded text resource is content the model asked for: keep it under its header.
      if (typeof r.text === 'string') return `${head}\n${r.text}`;
      return `[resource: ${str(r.uri, 'unknown')}, ${str(r.mimeType, 'unknown type')}, ${base64Bytes(r.blob)} bytes]`;
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
 * summarized as `[image: image/png, 1234 bytes]`, resources as `[resource: uri]` (an embedded text
 * resource followed by its text), `structuredContent` as JSON when there is no text; capped at
 * `maxBytes` with a note saying how much was cut. `isError` is passed through.
 */
export function formatResult(result: CallToolResultLike, maxBytes: number): { text: string; isError: boolean } {
  const parts: string[] = [];
  for (const c of Array.isArray(result.content) ? (result.content as unknown[]) : []) {
    if (c && typeof c === 'object') {
      const p = part(c as Part);
      if (p !== undefined) parts.push(p);
    }
  }
  let text = parts.join('\n');
  if (text.trim() === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  const size = Buffer.byteLength(text, 'utf8');
  if (size > maxBytes) text = `${truncateUtf8(text, maxBytes)}\n[result truncated: ${size} bytes, the first ${maxBytes} shown]`;
  return { text: text === '' ? '(no content)' : text, isError: result.isError === true };
}
