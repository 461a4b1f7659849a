import http from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { z } from 'zod';
import { ToolError } from '../errors.js';
import {
  HostUnresolvedError,
  requestPinned,
  systemLookup,
  UrlRefusedError,
  vetUrl as vetTarget,
  type AllowEntry,
  type HostLookup,
  type VettedTarget,
} from '@agentloop/net';
import { defineTool, type ToolDefinition } from '../registry.js';

export const HTTP_FETCH_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;
export type HttpFetchMethod = (typeof HTTP_FETCH_METHODS)[number];

export const HttpFetchArgs = z.object({
  url: z.string().min(1).describe('Absolute http:// or https:// URL'),
  method: z.enum(HTTP_FETCH_METHODS).default('GET').describe('HTTP method'),
  headers: z.record(z.string(), z.string()).optional().describe('Request headers'),
  body: z.string().optional().describe('Request body (not with GET or HEAD)'),
  max_bytes: z.number().int().positive().optional().describe('Read at most this many bytes of the response body (capped by the server limit)'),
});
export type HttpFetchArgs = z.infer<typeof HttpFetchArgs>;

export { systemLookup, type HostLookup, type VettedTarget };

export interface HttpFetchOptions {
  /** Exceptions to the internal-address guard (HTTP_FETCH_ALLOW). */
  allow: readonly AllowEntry[];
  /** Largest response body read, in decoded bytes (HTTP_FETCH_MAX_BYTES). */
  maxBytes: number;
  /** Budget of one fetch, redirects included (HTTP_FETCH_TIMEOUT_MS). */
  timeoutMs: number;
  /** Resolver; tests inject one. Default: dns.lookup. */
  lookup?: HostLookup;
  /** Redirects followed before giving up (default 5). */
  maxRedirects?: number;
}

export const HTTP_FETCH_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers the caller may not set: the connection and framing are ours. */
const FORBIDDEN_REQUEST_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'accept-encoding',
  'proxy-authorization',
  'proxy-connection',
]);
/** Credentials not forwarded to another origin on a redirect. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'cookie']);

/**
 * The SSRF guard for one hop (see `vetUrl` in @agentloop/net), with http_fetch's wording; a refusal
 * is a ToolError the model reads.
 */
export async function vetUrl(raw: string | URL, opts: Pick<HttpFetchOptions, 'allow' | 'lookup'>, what = 'fetch'): Promise<VettedTarget> {
  try {
    return await vetTarget(
      raw,
      { allow: opts.allow, ...(opts.lookup ? { lookup: opts.lookup } : {}) },
      { what, policy: 'http_fetch only reaches public addresses.' },
    );
  } catch (err) {
    if (err instanceof UrlRefusedError || err instanceof HostUnresolvedError) throw new ToolError(err.code, err.message, { cause: err });
    throw err;
  }
}

interface HopResult {
  status: number;
  statusText: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The body went past the limit and was cut. */
  truncated: boolean;
}

/** http_fetch: one HTTP request to a public address, redirects re-checked hop by hop. */
export function createHttpFetchTool(opts: HttpFetchOptions): ToolDefinition<typeof HttpFetchArgs> {
  const maxRedirects = opts.maxRedirects ?? HTTP_FETCH_MAX_REDIRECTS;
  return defineTool({
    name: 'http_fetch',
    description:
      'Fetch a public http(s) URL and return the status, content type and the text of the response ' +
      `(up to ${opts.maxBytes} bytes; binary content is summarized). Internal and private addresses are refused.`,
    schema: HttpFetchArgs,
    usesWorkspace: false,
    metadata: { category: 'network', tags: ['network', 'read', 'web'], idempotent: false, displayName: 'HTTP Fetch', availableToSubagent: false },
    isIdempotent: (args) => args.method === 'GET' || args.method === 'HEAD',
    async execute(args, ctx) {
      if (args.body !== undefined && (args.method === 'GET' || args.method === 'HEAD')) {
        throw new ToolError('INVALID_ARGUMENT', `A ${args.method} request cannot have a body; use POST, PUT or PATCH`);
      }
      const limit = Math.min(args.max_bytes ?? opts.maxBytes, opts.maxBytes);
      const timeout = AbortSignal.timeout(opts.timeoutMs);
      const signal = AbortSignal.any([ctx.signal, timeout]);
      let method: HttpFetchMethod = args.method;
      let body = args.body;
      let headers = requestHeaders(args.headers ?? {}, body !== undefined);
      let target = await vetUrl(args.url, opts);
      const startOrigin = target.url.origin;
      let redirects = 0;
      try {
        for (;;) {
          const res = await request(target, method, headers, body, limit, signal);
          const location = res.headers.location;
          if (!REDIRECT_STATUSES.has(res.status) || location === undefined) {
            return format(res, method, target.url, redirects, limit, startOrigin);
          }
          if (redirects >= maxRedirects) {
            throw new ToolError('TOOL_FAILED', `Too many redirects (more than ${maxRedirects}) from ${args.url}; the last one pointed to ${location}`);
          }
          redirects++;
          let next: URL;
          try {
            next = new URL(location, target.url);
          } catch {
            throw new ToolError('TOOL_FAILED', `Invalid redirect Location from ${target.url.href}: ${location}`);
          }
          if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
            method = method === 'HEAD' ? 'HEAD' : 'GET';
            body = undefined;
            headers = withoutBodyHeaders(headers);
          }
          if (next.origin !== target.url.origin) headers = withoutCredentials(headers);
          target = await vetUrl(next, opts, 'follow the redirect to');
        }
      } catch (err) {
        if (timeout.aborted && !ctx.signal.aborted) {
          throw new ToolError('TIMEOUT', `http_fetch: no complete response from ${target.url.origin} within ${opts.timeoutMs} ms`, { cause: err });
        }
        if (ctx.signal.aborted) throw ctx.signal.reason ?? err;
        if (err instanceof ToolError) throw err;
        const code = (err as NodeJS.ErrnoException).code;
        throw new ToolError(
          'TOOL_FAILED',
          `Request to ${target.url.origin} failed: ${code ? `${code} ` : ''}${err instanceof Error ? err.message : String(err)}`.trim(),
          {
            cause: err,
          },
        );
      }
    },
  });
}

function requestHeaders(given: Record<string, string>, hasBody: boolean): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(given)) {
    const name = k.toLowerCase();
    if (FORBIDDEN_REQUEST_HEADERS.has(name) || name.startsWith('proxy-')) continue;
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new ToolError('INVALID_ARGUMENT', `Invalid header name: ${k}`);
    if (/[\r\n\0]/.test(v)) throw new ToolError('INVALID_ARGUMENT', `Invalid value for header ${k}: line breaks are not allowed`);
    out[name] = v;
  }
  out['user-agent'] ??= 'AgentLoop-http_fetch/1';
  out.accept ??= '*/*';
  out['accept-encoding'] = 'gzip, deflate, br';
  if (hasBody) out['content-type'] ??= 'text/plain; charset=utf-8';
  return out;
}

function withoutBodyHeaders(h: Record<string, string>): Record<string, string> {
  const out = { ...h };
  for (const k of Object.keys(out)) if (k.startsWith('content-')) delete out[k];
  return out;
}

function withoutCredentials(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([k]) => !CREDENTIAL_HEADERS.has(k)));
}

/** One request to the vetted address (`requestPinned`: no DNS between the check and the connect), its body read up to `limit`. */
async function request(
  target: VettedTarget,
  method: HttpFetchMethod,
  headers: Record<string, string>,
  body: string | undefined,
  limit: number,
  signal: AbortSignal,
): Promise<HopResult> {
  const res = await requestPinned(target, { method, headers, ...(body === undefined ? {} : { body }), signal });
  const status = res.statusCode ?? 0;
  const head = { status, statusText: res.statusMessage ?? '', headers: res.headers };
  if ((REDIRECT_STATUSES.has(status) && res.headers.location !== undefined) || method === 'HEAD') {
    res.destroy();
    return { ...head, body: Buffer.alloc(0), truncated: false };
  }
  try {
    const { body: data, truncated } = await readLimited(decoded(res), limit);
    return { ...head, body: data, truncated };
  } catch (err) {
    throw err instanceof Error ? err : new Error(String(err));
  } finally {
    res.destroy();
  }
}

/** The body with its content-encoding undone, so the limit counts what the model would read. */
function decoded(res: http.IncomingMessage): Readable {
  const enc = (res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const inflate =
    enc === 'gzip' || enc === 'x-gzip' ? createGunzip() : enc === 'deflate' ? createInflate() : enc === 'br' ? createBrotliDecompress() : undefined;
  if (!inflate) return res;
  res.on('error', (err) => inflate.destroy(err));
  return res.pipe(inflate);
}

/** Reads at most `limit` bytes; stops reading (and reports it) as soon as there are more. */
async function readLimited(stream: Readable, limit: number): Promise<{ body: Buffer; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      if (size + buf.length > limit) {
        chunks.push(buf.subarray(0, limit - size));
        return { body: Buffer.concat(chunks), truncated: true };
      }
      chunks.push(buf);
      size += buf.length;
    }
  } finally {
    stream.destroy();
  }
  return { body: Buffer.concat(chunks), truncated: false };
}

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|javascript|ecmascript|x-www-form-urlencoded|x-ndjson|ndjson|yaml|x-yaml|toml|graphql|sql|rss\+xml|atom\+xml|xhtml\+xml)$|application\/[\w.+-]+\+(json|xml)$|image\/svg\+xml$)/;

function format(res: HopResult, method: HttpFetchMethod, url: URL, redirects: number, limit: number, startOrigin: string): string {
  const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : '';
  const lines = [`HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`];
  if (redirects > 0 || url.origin !== startOrigin) lines.push(`URL: ${url.href} (after ${redirects} redirect${redirects === 1 ? '' : 's'})`);
  if (contentType) lines.push(`Content-Type: ${contentType}`);
  const declared = res.headers['content-length'];
  if (method === 'HEAD') {
    if (declared) lines.push(`Content-Length: ${declared}`);
    return lines.join('\n');
  }
  const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  const text = mime === '' ? asUtf8Text(res.body) : TEXT_TYPES.test(mime) ? decodeText(res.body, contentType) : undefined;
  if (text === undefined) {
    const size = res.truncated ? `more than ${limit} bytes` : `${res.body.length} bytes`;
    lines.push('', `[Binary content (${mime || 'unknown type'}), ${size}; not shown. http_fetch returns text only.]`);
    return lines.join('\n');
  }
  lines.push('', text);
  if (res.truncated) lines.push('', `[Truncated: the response is larger than ${limit} bytes; only the first ${limit} bytes are shown.]`);
  return lines.join('\n');
}

function decodeText(body: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)"?/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** Text without a declared type: UTF-8 without NUL bytes; anything else counts as binary. */
function asUtf8Text(body: Buffer): string | undefined {
  if (body.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    // A cut at the size limit may split the last character: retry without the tail.
    for (let cut = 1; cut <= 3 && cut < body.length; cut++) {
      try {
        return new TextDecoder('utf-8', { fatal: true }).decode(body.subarray(0, body.length - cut));
      } catch {
        // try a shorter prefix
      }
    }
    return undefined;
  }
}
