import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteStore, McpOAuthRepository, MCP_OAUTH_FLOW_TTL_MS, SqlStore, type Store } from '@agentloop/store';
import { createLogger } from '@agentloop/core';
import { McpAuthorizationCodeEntry } from './client-config.js';
import { parseMcpFile } from './config.js';
import { McpAuthorizationRequiredError } from './errors.js';
import { TenantAuthorizations } from './oauth-flows.js';
import { TenantOAuthProvider, tenantOAuthFor } from './tenant-oauth.js';

const entry = McpAuthorizationCodeEntry.parse({ flow: 'authorization_code' });
const tokens = (access: string) => ({ access_token: access, token_type: 'bearer', expires_in: 3600, refresh_token: `refresh-${access}` });

describe('per-tenant OAuth grants (SQLite store, the broker provider over it)', () => {
  let store: Store;
  let grants: McpOAuthRepository;
  let clock: number;
  beforeEach(async () => {
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    clock = 1_000_000;
    const sql = store as SqlStore;
    // The store's own repository, on a clock the test moves.
    grants = new McpOAuthRepository({ db: sql.db, dialect: sql.dialect, now: () => clock });
  });
  afterEach(async () => {
    await store.close();
  });

  it("never gives tenant B tenant A's token, client or discovery state", async () => {
    const a = new TenantOAuthProvider(grants, 'tenant-a', 'guarded', entry, { kind: 'call' });
    const b = new TenantOAuthProvider(grants, 'tenant-b', 'guarded', entry, { kind: 'call' });
    await a.saveTokens(tokens('token-of-a'));
    await a.saveClientInformation({ client_id: 'client-of-a' });
    await a.saveDiscoveryState({ authorizationServerUrl: 'http://as.example/' });

    expect(await a.tokens()).toMatchObject({ access_token: 'token-of-a', refresh_token: 'refresh-token-of-a' });
    expect(await a.clientInformation()).toEqual({ client_id: 'client-of-a' });
    expect(await b.tokens()).toBeUndefined();
    expect(await b.discoveryState()).toBeUndefined();
    // A call of B never registers a client of its own: it must authorize first.
    await expect(b.clientInformation()).rejects.toBeInstanceOf(McpAuthorizationRequiredError);
    const hasToken = tenantOAuthFor(grants).hasToken;
    expect([await hasToken('tenant-a', 'guarded'), await hasToken('tenant-b', 'guarded'), await hasToken('tenant-a', 'other')]).toEqual([true, false, false]);

    // B revoking its (absent) grant leaves A's alone.
    expect(await grants.deleteGrant('tenant-b', 'guarded')).toBe(false);
    expect((await grants.getGrant('tenant-a', 'guarded'))?.tokens).toMatchObject({ access_token: 'token-of-a' });
    expect((await grants.getGrant('tenant-a', 'guarded'))?.expiresAt?.getTime()).toBe(1_000_000 + 3_600_000);
  });

  it('refuses to start an authorization during a call (the model is told where the user authorizes)', () => {
    const provider = new TenantOAuthProvider(grants, 'tenant-a', 'guarded', entry, { kind: 'call' });
    expect(() => provider.redirectToAuthorization(new URL('http://as.example/authorize'))).toThrow(/must authorize at \/mcp\/servers\/guarded\/authorize/);
  });

  it('takes a pending flow once, and not at all after 10 minutes', async () => {
    const flow = { tenantId: 'tenant-a', server: 'guarded', codeVerifier: 'verifier', redirectUri: 'http://gw/mcp/oauth/callback' };
    await grants.createFlow({ ...flow, state: 'state-1' });
    await grants.createFlow({ ...flow, state: 'state-2' });
    expect(await grants.takeFlow('state-1')).toMatchObject({ ...flow, state: 'state-1' });
    expect(await grants.takeFlow('state-1')).toBeUndefined();
    expect(await grants.takeFlow('unknown')).toBeUndefined();

    clock += MCP_OAUTH_FLOW_TTL_MS + 1;
    expect(await grants.takeFlow('state-2')).toBeUndefined();
    await grants.createFlow({ ...flow, state: 'state-3' });
    clock += MCP_OAUTH_FLOW_TTL_MS + 1;
    expect(await grants.sweepFlows()).toBe(1);
  });

  it("answers a callback with an unknown, used or expired state as not found, and hides another tenant's server", async () => {
    const file = parseMcpFile(
      JSON.stringify({
        servers: {
          guarded: { connection_mode: 'http', url: 'http://127.0.0.1:9/mcp', oauth: { flow: 'authorization_code' } },
          private: { connection_mode: 'http', url: 'http://127.0.0.1:9/mcp', oauth: { flow: 'authorization_code' }, tenants: ['tenant-b'] },
        },
      }),
    );
    const flows = new TenantAuthorizations(() => file.servers, grants, { logger: createLogger({ service: 'test', level: 'silent' }) });
    await expect(flows.callback('nope', 'code')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/unknown, was already used or has expired/),
    });
    await grants.createFlow({ state: 'denied', tenantId: 'tenant-a', server: 'guarded', codeVerifier: 'v', redirectUri: 'http://gw/cb' });
    await expect(flows.callback('denied', '', 'access_denied', 'the user said no')).rejects.toMatchObject({
      code: 'PERMISSION_DENIED',
      message: expect.stringContaining('access_denied (the user said no)'),
    });
    // The refused flow was used up too.
    await expect(flows.callback('denied', 'code')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(flows.authorize('tenant-a', 'private', 'http://gw/cb', [])).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: 'Unknown MCP server: private',
    });
    expect((await flows.status('tenant-a')).map((s) => s.server)).toEqual(['guarded']);
    expect(await flows.revoke('tenant-a', 'guarded')).toBe(false);
  });
});

describe('oauth: {flow: authorization_code} in mcp_servers.yaml', () => {
  const file = (oauth: Record<string, unknown>) => JSON.stringify({ servers: { s: { connection_mode: 'http', url: 'http://x/mcp', oauth } } });
  it('accepts the flow alone (dynamic registration) and keeps client credentials the default flow', () => {
    expect(parseMcpFile(file({ flow: 'authorization_code' })).servers.s?.oauth).toEqual({ flow: 'authorization_code', client_name: 'AgentLoop' });
    expect(parseMcpFile(file({ client_id: 'a', client_secret: 'b' })).servers.s?.oauth).toMatchObject({
      flow: 'client_credentials',
      grant: 'client_credentials',
    });
  });
  it('names the field of a bad entry', () => {
    expect(() => parseMcpFile(file({ flow: 'authorization_code', client_secret: 'b' }))).toThrow(
      /servers\.s\.oauth\.client_secret: client_secret needs client_id/,
    );
    expect(() => parseMcpFile(file({ flow: 'authorization_code', client_metadata_url: 'http://x/client.json' }))).toThrow(
      /servers\.s\.oauth\.client_metadata_url: client_metadata_url must be an https URL with a path/,
    );
    expect(() => parseMcpFile(file({ flow: 'device_code' }))).toThrow(/servers\.s\.oauth\.flow/);
  });
});
