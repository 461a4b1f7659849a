/**
 * OAuth client credentials against a local protected MCP server (built here): the pool discovers
 * the authorization server from the 401, gets a token with its client credentials, calls with it,
 * and keeps the token across a reconnect; wrong credentials fail the start with the reason.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { silentLogger } from '@agentloop/core';
import { z } from 'zod';
import { parseMcpFile } from './config.js';
import { McpPool } from './pool.js';

interface ProtectedServer {
  url: string;
  issuer: string;
  tokenRequests: Array<{ authorization: string | undefined; body: string }>;
  /** Bearer tokens the MCP endpoint saw. */
  bearers: string[];
  close(): Promise<void>;
}

const CLIENT = { id: 'broker-client', secret: 's3cret' };

async function readBody(req: http.IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const p of req) parts.push(p as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** An MCP server (tool `whoami`) behind a bearer check, with its own authorization server (client credentials). */
async function startProtectedServer(): Promise<ProtectedServer> {
  const tokenRequests: ProtectedServer['tokenRequests'] = [];
  const bearers: string[] = [];
  let issued = 0;
  const valid = new Set<string>();
  const srv = http.createServer((req, res) => {
    void (async () => {
      const base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
      const json = (status: number, v: unknown, headers: Record<string, string> = {}) =>
        res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(v));
      const url = new URL(req.url ?? '/', base);
      if (url.pathname.startsWith('/.well-known/oauth-protected-resource')) {
        return json(200, { resource: `${base}/mcp`, authorization_servers: [base] });
      }
      if (url.pathname === '/.well-known/oauth-authorization-server') {
        return json(200, {
          issuer: base,
          token_endpoint: `${base}/token`,
          authorization_endpoint: `${base}/authorize`,
          response_types_supported: ['code'],
          grant_types_supported: ['client_credentials'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
        });
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        const body = await readBody(req);
        tokenRequests.push({ authorization: req.headers.authorization, body });
        const expected = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`;
        const form = new URLSearchParams(body);
        if (req.headers.authorization !== expected || form.get('grant_type') !== 'client_credentials') {
          return json(401, { error: 'invalid_client', error_description: 'unknown client or wrong secret' });
        }
        const token = `token-${++issued}`;
        valid.add(token);
        return json(200, { access_token: token, token_type: 'Bearer', expires_in: 3600, scope: form.get('scope') ?? '' });
      }
      if (url.pathname === '/mcp') {
        const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        if (!bearer || !valid.has(bearer)) {
          return json(401, { error: 'invalid_token' }, { 'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` });
        }
        bearers.push(bearer);
        const server = new McpServer({ name: 'protected', version: '1.0.0' });
        server.registerTool('whoami', { description: 'The bearer token of the call', inputSchema: { n: z.number().optional() } }, () => ({
          content: [{ type: 'text', text: bearer }],
        }));
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        res.on('close', () => void transport.close());
        await server.connect(transport);
        const body = req.method === 'POST' ? (JSON.parse(await readBody(req)) as unknown) : undefined;
        return transport.handleRequest(req, res, body);
      }
      json(404, { error: 'not found' });
    })().catch(() => res.headersSent || res.writeHead(500).end());
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return {
    url: `${base}/mcp`,
    issuer: base,
    tokenRequests,
    bearers,
    close: () => new Promise<void>((r) => srv.close(() => r())),
  };
}

let server: ProtectedServer;
let pool: McpPool | undefined;
beforeEach(async () => {
  server = await startProtectedServer();
});
afterEach(async () => {
  await pool?.closeAll();
  pool = undefined;
  await server.close();
});

function makePool(oauth: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): McpPool {
  const file = parseMcpFile(JSON.stringify({ servers: { guarded: { connection_mode: 'http', url: server.url, oauth } } }));
  pool = new McpPool(file.servers, { logger: silentLogger(), startTimeoutMs: 10_000, env });
  return pool;
}

const textOf = (r: unknown) => (r as { content: Array<{ text?: string }> }).content.map((c) => c.text ?? '').join('');
const call = (p: McpPool) => p.callTool('guarded', 'whoami', {}, { exposedName: 'guarded_whoami', timeoutMs: 10_000 });

describe('OAuth client credentials (remote MCP server)', () => {
  it('gets a token from the discovered authorization server, calls with it, and keeps it across a reconnect', async () => {
    const p = makePool(
      { client_id: CLIENT.id, client_secret: '${GUARDED_SECRET}', scope: 'mcp:tools', issuer: server.issuer },
      { GUARDED_SECRET: CLIENT.secret },
    );
    expect(textOf(await call(p))).toBe('token-1');
    expect(server.tokenRequests).toHaveLength(1);
    const form = new URLSearchParams(server.tokenRequests[0]!.body);
    expect(form.get('grant_type')).toBe('client_credentials');
    expect(form.get('scope')).toBe('mcp:tools');
    expect(form.get('resource')).toBe(server.url);

    // A new connection (the old one dropped) presents the cached token: no second token request.
    const conn = await p.connect('guarded');
    p.drop(conn, 'test', 'debug');
    expect(textOf(await call(p))).toBe('token-1');
    expect(server.tokenRequests).toHaveLength(1);
    expect(new Set(server.bearers)).toEqual(new Set(['token-1']));
  });

  it('fails the start with the authorization server’s reason when the secret is wrong', async () => {
    const p = makePool({ client_id: CLIENT.id, client_secret: 'wrong', issuer: server.issuer });
    await expect(call(p)).rejects.toThrow(/MCP server guarded did not start: .*(invalid_client|unknown client)/);
    expect(server.bearers).toEqual([]);
  });

  it('refuses an authorization server other than the configured issuer', async () => {
    const p = makePool({ client_id: CLIENT.id, client_secret: CLIENT.secret, issuer: 'http://127.0.0.1:1/elsewhere' });
    await expect(call(p)).rejects.toThrow(/did not start/);
    expect(server.tokenRequests).toEqual([]);
  });

  it('needs exactly one of client_secret and private_key', () => {
    const entry = (oauth: Record<string, unknown>) => JSON.stringify({ servers: { s: { connection_mode: 'http', url: 'http://x/mcp', oauth } } });
    expect(() => parseMcpFile(entry({ client_id: 'a' }))).toThrow(/servers\.s\.oauth\.client_secret: give either client_secret or private_key/);
    expect(() => parseMcpFile(entry({ client_id: 'a', client_secret: 'b', private_key: 'c' }))).toThrow(/give either client_secret or private_key/);
  });

  it('is refused in mcp_servers.yaml for a stdio server', () => {
    expect(() => parseMcpFile(JSON.stringify({ servers: { s: { command: 'x', oauth: { client_id: 'a', client_secret: 'b' } } } }))).toThrow(
      /servers\.s\.oauth: oauth applies to sse and http servers only/,
    );
  });
});
