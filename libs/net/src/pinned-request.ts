import http from 'node:http';
import https from 'node:https';
import { pinnedLookup, type VettedTarget } from './guard.js';

export interface PinnedRequestOptions {
  method: string;
  headers: Record<string, string>;
  /** Sent as is (text or bytes, e.g. a multipart upload); its content-length is set when the caller did not. */
  body?: string | Buffer;
  signal: AbortSignal;
}

/**
 * One request to a vetted address (`vetUrl`) on a fresh connection — no agent, so no pooled
 * socket opened for another name — whose `lookup` answers the vetted address: DNS is not asked
 * again between the check and the connect. TLS still verifies the certificate against the URL's
 * name. Resolves with the response once its headers arrive; the caller reads or drains it. The one
 * way outbound HTTP to a caller-chosen URL is sent (webhooks, the `http_fetch` tool).
 */
export function requestPinned(target: VettedTarget, opts: PinnedRequestOptions): Promise<http.IncomingMessage> {
  const mod = target.url.protocol === 'https:' ? https : http;
  const headers =
    opts.body === undefined || Object.keys(opts.headers).some((k) => k.toLowerCase() === 'content-length')
      ? opts.headers
      : { ...opts.headers, 'content-length': String(Buffer.byteLength(opts.body)) };
  return new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = mod.request(
      {
        protocol: target.url.protocol,
        hostname: target.host,
        port: target.port,
        path: `${target.url.pathname}${target.url.search}`,
        method: opts.method,
        headers,
        lookup: pinnedLookup(target),
        agent: false,
        signal: opts.signal,
      },
      resolve,
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}
