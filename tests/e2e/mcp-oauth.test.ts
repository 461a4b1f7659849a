/**
 * OAuth authorization code flow of a remote MCP server per tenant (issue 14), embedded: grants in
 * the SQLite store, the gateway's routes calling the in-process broker. The cluster twin:
 * mcp-oauth-cluster.test.ts; the checks: mcp-oauth-flow.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { useEmbeddedServer } from './helpers.js';
import { API_KEYS, expectPerTenantAuthorization, oauthServerConfig, startOAuthMcpServer, type OAuthMcpServer } from './mcp-oauth-flow.js';

describe('MCP OAuth authorization code flow per tenant (embedded)', () => {
  let server: OAuthMcpServer;
  let dir: string;
  const env: NodeJS.ProcessEnv = { AGENTLOOP_API_KEYS: API_KEYS, ALLOW_SCRIPTED_MODEL: 'true' };
  beforeAll(async () => {
    server = await startOAuthMcpServer();
    dir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-oauth-'));
    env.MCP_CONFIG = oauthServerConfig(dir, server);
  });
  const agentloop = useEmbeddedServer('agentloop-mcp-oauth-data-', env);
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "authorizes a tenant, calls with its token, refuses another tenant's call, and revokes",
    () => expectPerTenantAuthorization(agentloop.url, server),
    120_000,
  );
});
