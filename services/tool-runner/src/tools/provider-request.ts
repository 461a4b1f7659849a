import type { Readable } from 'node:stream';
import { HostUnresolvedError, requestPinned, UrlRefusedError, vetUrl, type AllowEntry, type HostLookup } from '@agentloop/net';
import { ToolError } from '../errors.js';

/**
 * How the tool-runner reaches an operator-configured provider (web search, speech, transcription).
 * The URL comes from the environment, not from the model, but it still goes through the SSRF guard:
 * a provider on a private address must be listed in TOOL_PROVIDERS_ALLOW, like webhooks and http_fetch.
 */
export interface ProviderEndpoint {
  /** Exceptions to the private-address guard (TOOL_PROVIDERS_ALLOW). */
  allow: readonly AllowEntry[];
  /** Budget of one request, response body included. */
  timeoutMs: number;
  /** Resolver; tests inject one. Default: dns.lookup. */
  lookup?: HostLookup;
}

export interface ProviderRequest {
  /** Who is called, for messages: "web search provider (brave)", "speech endpoint". */
  label: string;
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Largest response body read; a longer one is a tool error (a provider answer cut in half is useless). */
  maxResponseBytes: number;
  /** The tool call's own signal (its deadline). */
  signal: AbortSignal;
}

export interface ProviderResponse {
  status: number;
  contentType: string;
  body: Buffer;
}

/** Provider error bodies are echoed to the model this long at most. */
const ERROR_DETAIL_CHARS = 300;

/**
 * One request to a provider: vetted and pinned (no redirects: a provider API answers in place),
 * bounded in time and size. Every failure is a ToolError naming the provider, never a crash; a
 * non-2xx answer is one too, with the provider's own error message when it sent one.
 */
export async function callProvider(endpoint: ProviderEndpoint, req: ProviderRequest): Promise<ProviderResponse> {
  const where = `${req.label} at ${req.url.origin}`;
  let target;
  try {
    target = await vetUrl(
      req.url,
      { allow: endpoint.allow, ...(endpoint.lookup ? { lookup: endpoint.lookup } : {}) },
      { what: `reach the ${req.label}`, policy: 'A provider on a private address must be listed in TOOL_PROVIDERS_ALLOW.' },
    );
  } catch (err) {
    if (err instanceof UrlRefusedError) throw new ToolError(err.code, err.message, { cause: err });
    if (err instanceof HostUnresolvedError) throw new ToolError('UNAVAILABLE', `The ${where} is unreachable: ${err.message}`, { cause: err });
    throw err;
  }
  const timeout = AbortSignal.timeout(endpoint.timeoutMs);
  const signal = AbortSignal.any([req.signal, timeout]);
  let res;
  try {
    res = await requestPinned(target, { method: req.method, headers: req.headers, ...(req.body === undefined ? {} : { body: req.body }), signal });
    const body = await readAll(res, req.maxResponseBytes, where);
    const status = res.statusCode ?? 0;
    const contentType = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : '';
    if (status < 200 || status > 299) {
      throw new ToolError('TOOL_FAILED', `The ${where} answered HTTP ${status}${errorDetail(body, contentType)}`);
    }
    return { status, contentType, body };
  } catch (err) {
    if (req.signal.aborted) throw req.signal.reason ?? err;
    if (timeout.aborted) throw new ToolError('TIMEOUT', `The ${where} did not answer within ${endpoint.timeoutMs} ms`, { cause: err });
    if (err instanceof ToolError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new ToolError('UNAVAILABLE', `The ${where} is unreachable: ${code ?? (err instanceof Error ? err.message : String(err))}`, { cause: err });
  } finally {
    res?.destroy();
  }
}

/** Parses a provider's JSON answer; anything else is a tool error naming the provider. */
export function providerJson(res: ProviderResponse, label: string): unknown {
  try {
    return JSON.parse(res.body.toString('utf8')) as unknown;
  } catch {
    throw new ToolError('TOOL_FAILED', `The ${label} sent an answer that is not JSON (${res.contentType || 'no content type'})`);
  }
}

async function readAll(stream: Readable, limit: number, where: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    size += buf.length;
    if (size > limit) throw new ToolError('TOOL_FAILED', `The ${where} sent more than ${limit} bytes; the answer was dropped`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

/** ": <message>" from an OpenAI-style `{error: {message}}`, a `{detail}`/`{message}` body or short text. */
function errorDetail(body: Buffer, contentType: string): string {
  const text = body.toString('utf8').trim();
  if (text === '') return '';
  let message: unknown = text;
  if (contentType.includes('json') || text.startsWith('{')) {
    try {
      const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; detail?: unknown; message?: unknown };
      message = (typeof parsed.error === 'object' ? parsed.error?.message : parsed.error) ?? parsed.detail ?? parsed.message ?? text;
    } catch {
      // not JSON after all: the text itself
    }
  }
  const s = typeof message === 'string' ? message : JSON.stringify(message);
  return `: ${s.length > ERROR_DETAIL_CHARS ? `${s.slice(0, ERROR_DETAIL_CHARS)}…` : s}`;
}
