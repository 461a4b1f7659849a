import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@agentloop/core';
import { createSqliteStore, SqlStore, type McpOAuthRepository, type Store } from '@agentloop/store';
import { parseMcpFile } from './config.js';
import { McpAuthorizationRequiredError } from './errors.js';
import { McpPool } from './pool.js';
import { tenantOAuthFor } from './tenant-oauth.js';
import { startHttpEchoServer, type HttpMcpServer } from './testing/index.js';

const logger = createLogger({ service: 'test', level: 'silent' });

async function until<T>(probe: () => T | undefined, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('McpPool: a server with the authorization code flow, one connection per tenant', () => {
  let server: HttpMcpServer;
  let store: Store;
  let grants: McpOAuthRepository;
  let pool: McpPool;
  const call = (tenantId: string) =>
    pool.callTool('guarded', 'echo', { text: `hello ${tenantId}` }, { exposedName: 'guarded_echo', timeoutMs: 10_000, tenantId });

  beforeAll(async () => {
    // The server accepts one bearer token: tenant-a's.
    server = await startHttpEchoServer({ token: 'token-of-a' });
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    grants = (store as SqlStore).mcpOAuth;
    await grants.patchGrant('tenant-a', 'guarded', { tokens: { access_token: 'token-of-a', token_type: 'bearer' }, clientInfo: { client_id: 'c' } });
    await grants.patchGrant('tenant-c', 'guarded', { tokens: { access_token: 'revoked-at-the-server', token_type: 'bearer' }, clientInfo: { client_id: 'c' } });
    const file = parseMcpFile(JSON.stringify({ servers: { guarded: { connection_mode: 'http', url: server.url, oauth: { flow: 'authorization_code' } } } }));
    pool = new McpPool(file.servers, { logger, startTimeoutMs: 10_000, tenantOAuth: tenantOAuthFor(grants), tenantIdleTimeoutMs: 300 });
  });
  afterAll(async () => {
    await pool?.closeAll();
    await server?.close();
    await store?.close();
  });

  it('refuses a tenant without a token before connecting, with the authorization message', async () => {
    await expect(call('tenant-b')).rejects.toBeInstanceOf(McpAuthorizationRequiredError);
    await expect(call('tenant-b')).rejects.toThrow(/must authorize at \/mcp\/servers\/guarded\/authorize/);
    expect(pool.running()).toEqual([]);
    await expect(pool.connect('guarded')).rejects.toThrow(/not started without a tenant/);
  });

  it("calls with the tenant's token, and closes the tenant's idle connection", async () => {
    expect(await call('tenant-a')).toMatchObject({ content: [{ type: 'text', text: 'hello tenant-a' }] });
    expect(pool.running()).toEqual(['guarded']);
    await until(() => (pool.running().length === 0 ? true : undefined), 10_000);
    // The next call opens it again.
    expect(await call('tenant-a')).toMatchObject({ content: [{ type: 'text', text: 'hello tenant-a' }] });
  });

  it('fails the call of a tenant whose token the server refuses (no refresh token) without starting an authorization', async () => {
    await expect(call('tenant-c')).rejects.toBeInstanceOf(McpAuthorizationRequiredError);
    // Not a failing server: the tenant with a good token is not held back by a backoff.
    expect(await call('tenant-a')).toMatchObject({ content: [{ type: 'text', text: 'hello tenant-a' }] });
    // An operator's reload closes every tenant's connection.
    pool.closeServer('guarded', 'reloaded');
    expect(pool.running()).toEqual([]);
  });
});
