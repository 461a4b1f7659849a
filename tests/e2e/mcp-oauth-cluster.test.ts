/**
 * OAuth authorization code flow of a remote MCP server per tenant (issue 14), cluster: the gateway
 * process calls the mcp-broker process over NATS (agentloop.mcp.oauth.*), grants are in MariaDB, and
 * the orchestrator's tool calls reach the broker's per-tenant connection. Embedded twin:
 * mcp-oauth.test.ts; the checks: mcp-oauth-flow.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { useCluster } from './helpers.js';
import { API_KEYS, expectPerTenantAuthorization, oauthServerConfig, startOAuthMcpServer, type OAuthMcpServer } from './mcp-oauth-flow.js';

describe('MCP OAuth authorization code flow per tenant (cluster: gateway, mcp-broker, orchestrator, MariaDB)', () => {
  let server: OAuthMcpServer;
  let dir: string;
  const env: NodeJS.ProcessEnv = { AGENTLOOP_API_KEYS: API_KEYS };
  beforeAll(async () => {
    server = await startOAuthMcpServer();
    dir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-oauth-cluster-'));
    env.MCP_CONFIG = oauthServerConfig(dir, server);
  });
  const cluster = useCluster({ env });
  beforeAll(async () => {
    const from = cluster().logs.length;
    cluster().start('mcp-broker', 1);
    await cluster().waitLog(/mcp-broker serving/, from, 90_000);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    "authorizes a tenant, calls with its token, refuses another tenant's call, and revokes",
    () => expectPerTenantAuthorization(cluster().url, server),
    180_000,
  );
});
