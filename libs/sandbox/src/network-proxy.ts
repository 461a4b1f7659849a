import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { connect, isIP, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { isAllowed, UrlRefusedError, vetUrl, type AllowEntry, type HostLookup, type VettedTarget } from '@agentloop/net';

/** Upstream connect budget: a destination that does not answer fails the request, not the run. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Request headers meant for the proxy or this hop only, never forwarded. */
const HOP_HEADERS = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive', 'te', 'trailer', 'upgrade']);

export interface NetworkProxyOptions {
  allow: readonly AllowEntry[];
  /** Resolver; tests inject one. Default: the system resolver. */
  lookup?: HostLookup;
}

/** A destination the proxy may connect to: the address vetted for it, never a second DNS answer. */
interface Target {
  host: string;
  port: number;
  address: string;
}

/**
 * The host side of the sandbox's network (README "Code sandbox"): an HTTP proxy on a unix socket that
 * is bound into each sandbox. It serves CONNECT (HTTPS and other TLS) and plain-HTTP forward requests,
 * only to destinations on the allow-list (SANDBOX_NETWORK_ALLOW) that also pass the SSRF guard of
 * libs/net: a loopback, private or metadata address is refused unless an entry names it. The sandbox has
 * no other route out: its network namespace holds only a loopback.
 */
export class SandboxNetworkProxy {
  private server: Server | undefined;
  private dir: string | undefined;
  private starting: Promise<string> | undefined;

  constructor(private readonly opts: NetworkProxyOptions) {}

  /** Starts the proxy once; the unix socket path to bind into sandboxes. */
  socketPath(): Promise<string> {
    this.starting ??= this.start();
    return this.starting;
  }

  private async start(): Promise<string> {
    this.dir = await mkdtemp(path.join(os.tmpdir(), 'agentloop-sandbox-net-'));
    const socket = path.join(this.dir, 'proxy.sock');
    const server = createServer((req, res) => void this.forward(req, res));
    server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => void this.tunnel(req, client, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, resolve);
    });
    // A service waiting on nothing but this proxy may exit.
    server.unref();
    this.server = server;
    return socket;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    this.starting = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  /**
   * Vets host:port: the SSRF guard first (a refused internal address says why), then the allow-list
   * itself — a public address is not reachable either unless an entry covers its name or address.
   */
  private async vet(host: string, port: number): Promise<Target> {
    const literal = isIP(host) === 6 ? `[${host}]` : host;
    const probe = new URL(`http://${literal}:${port}/`);
    let target: VettedTarget;
    try {
      target = await vetUrl(probe, { allow: this.opts.allow, ...(this.opts.lookup ? { lookup: this.opts.lookup } : {}) }, { what: 'connect to' });
    } catch (err) {
      // The guard names a URL; the proxy's callers asked for host:port (CONNECT has no URL at all).
      if (err instanceof UrlRefusedError) throw new UrlRefusedError('PERMISSION_DENIED', err.message.replace(probe.href, `${literal}:${port}`));
      throw err;
    }
    if (!isAllowed(this.opts.allow, host, target.address, port)) {
      throw new UrlRefusedError('PERMISSION_DENIED', `Refused to connect to ${literal}:${port}: not on the sandbox network allow-list (SANDBOX_NETWORK_ALLOW)`);
    }
    return { host, port, address: target.address };
  }

  /** CONNECT host:port → a TCP tunnel to the vetted address. */
  private async tunnel(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
    if (!m?.[1] || !m[2]) return refuseRaw(client, 400, `CONNECT needs host:port, got "${req.url ?? ''}"`);
    let target: Target;
    try {
      target = await this.vet(m[1], Number(m[2]));
    } catch (err) {
      return refuseRaw(client, statusFor(err), messageOf(err));
    }
    const upstream = connect({ host: target.address, port: target.port, timeout: CONNECT_TIMEOUT_MS });
    let connected = false;
    upstream.once('timeout', () => upstream.destroy(new Error('timed out')));
    upstream.once('error', (err) => {
      if (!connected) refuseRaw(client, 502, `Cannot reach ${target.host}:${target.port}: ${err.message}`);
      else client.destroy();
    });
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
      client.once('close', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
    });
  }

  /** GET http://host/path (a forward-proxy request) → the same request to the vetted address. */
  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:') throw new Error('scheme');
    } catch {
      return refuse(res, 400, `The sandbox proxy forwards absolute http:// URLs (use CONNECT for https), got "${req.url ?? ''}"`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let target: Target;
    try {
      target = await this.vet(host, url.port === '' ? 80 : Number(url.port));
    } catch (err) {
      return refuse(res, statusFor(err), messageOf(err));
    }
    const headers: OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_HEADERS.has(k) && v !== undefined) headers[k] = v;
    const upstream = request({
      host: target.address,
      port: target.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      timeout: CONNECT_TIMEOUT_MS,
    });
    upstream.once('timeout', () => upstream.destroy(new Error('timed out')));
    upstream.once('error', (err) => {
      if (!res.headersSent) refuse(res, 502, `Cannot reach ${target.host}:${target.port}: ${err.message}`);
      else res.destroy();
    });
    upstream.once('response', (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, up.headers);
      up.pipe(res);
    });
    req.pipe(upstream);
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** 403 for a refusal, 502 for a host that does not resolve. */
function statusFor(err: unknown): number {
  return err instanceof UrlRefusedError ? 403 : 502;
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-sandbox-proxy-error': message.replace(/[^\x20-\x7e]/g, '?') });
  res.end(`${message}\n`);
}

/** An HTTP answer written straight to a CONNECT client's socket (no ServerResponse exists for it). */
function refuseRaw(client: Duplex | Socket, status: number, message: string): void {
  const body = `${message}\n`;
  const reason = status === 403 ? 'Forbidden' : status === 400 ? 'Bad Request' : 'Bad Gateway';
  client.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\nx-sandbox-proxy-error: ${message.replace(/[^\x20-\x7e]/g, '?')}\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}
