/**
 * The authorization code flow of a remote MCP server per tenant, end to end (issue 14): the checks
 * both modes run (mcp-oauth.test.ts embedded, mcp-oauth-cluster.test.ts across services) against
 * a started AgentLoop whose mcp_servers.yaml names the OAuth-protected server of
 * oauth-mcp-server.ts as `guarded`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted } from './helpers.js';

export interface OAuthMcpServer {
  /** The MCP endpoint (`…/mcp`); the authorization server is the same origin. */
  url: string;
  close(): Promise<void>;
}

/** Starts oauth-mcp-server.ts in its own process; resolves with its URL once it listens. */
export async function startOAuthMcpServer(): Promise<OAuthMcpServer> {
  const script = fileURLToPath(new URL('./oauth-mcp-server.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`oauth-mcp-server exited (${code}) before listening`)));
    lines.on('line', (line) => {
      if (line.startsWith('listening ')) resolve(line.slice('listening '.length));
    });
  });
  return {
    url,
    async close() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** Two tenants, by API key. */
export const API_KEYS = 'key-a:tenant-a,key-b:tenant-b';
const A = { 'x-api-key': 'key-a' };
const B = { 'x-api-key': 'key-b' };

/** Writes mcp_servers.yaml into `dir`: the protected server as `guarded`, its `whoami` tool offered to every run. */
export function oauthServerConfig(dir: string, server: OAuthMcpServer): string {
  const file = path.join(dir, 'mcp_servers.yaml');
  writeFileSync(
    file,
    [
      'servers:',
      '  guarded:',
      '    connection_mode: http',
      `    url: ${JSON.stringify(server.url)}`,
      '    oauth: { flow: authorization_code }',
      '    tools:',
      '      whoami: { always_available: true, alias: whoami }',
      '',
    ].join('\n'),
  );
  return file;
}

/** The content of the ToolMessage of a run (as the tenant of `apiKey`) that calls `whoami` once. */
async function whoami(url: string, apiKey: string): Promise<string> {
  const client = new Client({ apiUrl: url, apiKey });
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'who am I at guarded?' }] },
    config: scripted([{ tool_calls: [{ name: 'whoami', args: {}, id: 'call-whoami' }] }, { content: 'done' }]),
  })) as { messages: Array<{ type: string; content: string; name?: string }> };
  const message = values.messages.find((m) => m.type === 'tool' && m.name === 'whoami');
  if (!message) throw new Error(`no result of whoami: ${JSON.stringify(values.messages)}`);
  return message.content;
}

const json = async (res: Response): Promise<Record<string, unknown>> => {
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status} ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
};

/** The user's browser: opens the authorization URL, is approved and sent back to the callback; its link. */
async function approve(url: string, authorizationUrl: string): Promise<string> {
  const approved = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(approved.status).toBe(302);
  const callback = approved.headers.get('location')!;
  expect(callback.startsWith(`${url}/mcp/oauth/callback?`)).toBe(true);
  return callback;
}

/**
 * Tenant A authorizes (POST authorize → the authorization server → the gateway's callback), its
 * run's call carries its user's token; the callback link works once; tenant B's call fails with
 * the message naming where to authorize, and B cannot revoke A's grant; once B authorizes too,
 * each tenant's call carries its own user's token; A's revoke makes its next call fail again.
 */
export async function expectPerTenantAuthorization(url: string, server: OAuthMcpServer): Promise<void> {
  const status = async (headers: Record<string, string>) => json(await fetch(`${url}/mcp/servers/authorizations`, { headers }));
  expect(await status(A)).toEqual({
    servers: [{ server: 'guarded', flow: 'authorization_code', authorized: false, expires_at: null, scope: null, refreshable: false }],
  });

  const started = await json(
    await fetch(`${url}/mcp/servers/guarded/authorize`, { method: 'POST', headers: { ...A, 'content-type': 'application/json' }, body: '{}' }),
  );
  expect(started.authorized).toBe(false);
  const authorizationUrl = new URL(String(started.authorization_url));
  expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(new URL('/authorize', server.url).href);
  expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${url}/mcp/oauth/callback`);
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

  const callback = await approve(url, authorizationUrl.href);
  const page = await fetch(callback);
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  expect(await page.text()).toContain('AgentLoop may now use the MCP server guarded for you');
  // One use: the same link again is refused, and says so.
  const replay = await fetch(callback);
  expect(replay.status).toBe(404);
  expect(await replay.text()).toContain('unknown, was already used or has expired');

  const authorized = (await status(A)).servers as Array<Record<string, unknown>>;
  expect(authorized).toMatchObject([{ server: 'guarded', flow: 'authorization_code', authorized: true, refreshable: true }]);
  expect(Date.parse(String(authorized[0]!.expires_at))).toBeGreaterThan(Date.now());
  expect(await status(B)).toMatchObject({ servers: [{ server: 'guarded', authorized: false }] });

  expect(await whoami(url, 'key-a')).toBe('you are user-1');
  const refused = await whoami(url, 'key-b');
  expect(refused).toContain("MCP server guarded needs the user's authorization");
  expect(refused).toContain('/mcp/servers/guarded/authorize');

  // B cannot remove A's grant; A can.
  expect(await json(await fetch(`${url}/mcp/servers/guarded/authorization`, { method: 'DELETE', headers: B }))).toEqual({ removed: false });
  expect(await whoami(url, 'key-a')).toBe('you are user-1');

  // B authorizes as another user: each tenant's call carries its own token, on its own connection.
  const startedB = await json(
    await fetch(`${url}/mcp/servers/guarded/authorize`, {
      method: 'POST',
      headers: { ...B, 'content-type': 'application/json' },
      body: '{"scopes":["whoami"]}',
    }),
  );
  expect(new URL(String(startedB.authorization_url)).searchParams.get('scope')).toBe('whoami');
  expect((await fetch(await approve(url, String(startedB.authorization_url)))).status).toBe(200);
  const [asA, asB] = await Promise.all([whoami(url, 'key-a'), whoami(url, 'key-b')]);
  expect([asA, asB]).toEqual(['you are user-1', 'you are user-2']);
  // Authorized already: nothing to open.
  expect(await json(await fetch(`${url}/mcp/servers/guarded/authorize`, { method: 'POST', headers: B }))).toEqual({ authorized: true });

  expect(await json(await fetch(`${url}/mcp/servers/guarded/authorization`, { method: 'DELETE', headers: A }))).toEqual({ removed: true });
  expect(await whoami(url, 'key-a')).toContain('/mcp/servers/guarded/authorize');
  expect(await status(A)).toMatchObject({ servers: [{ server: 'guarded', authorized: false }] });
  expect(await whoami(url, 'key-b')).toBe('you are user-2');

  // The callback never reflects its input unescaped.
  const probe = await fetch(`${url}/mcp/oauth/callback?state=${encodeURIComponent('<script>alert(1)</script>')}&code=x`);
  expect(probe.status).toBe(404);
  expect(await probe.text()).not.toContain('<script>');

  // Bad input is named.
  const bad = await fetch(`${url}/mcp/servers/guarded/authorize`, {
    method: 'POST',
    headers: { ...A, 'content-type': 'application/json' },
    body: '{"scopes":"all"}',
  });
  expect(bad.status).toBe(422);
  expect(await bad.text()).toContain('body.scopes');
  const unknown = await fetch(`${url}/mcp/servers/nope/authorize`, { method: 'POST', headers: A });
  expect(unknown.status).toBe(404);
}
