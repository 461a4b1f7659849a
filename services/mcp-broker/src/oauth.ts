/**
 * OAuth for remote MCP servers (mcp_servers.yaml `oauth:`), with the SDK's auth support: the
 * transport answers a 401 by discovering the authorization server and asking it for a token with
 * the client credentials grant, then retries. Each server has one provider per pool, so its token
 * outlives a reconnect; it is the broker's identity at that server (a connection is shared by the
 * tenants allowed to use the server), not a tenant's. The authorization code flow, per tenant, is
 * tenant-oauth.ts.
 */
import { ClientCredentialsProvider, PrivateKeyJwtProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { expandVars } from './config.js';
import type { McpClientCredentialsEntry } from './client-config.js';

export function oauthProvider(server: string, oauth: McpClientCredentialsEntry, env: NodeJS.ProcessEnv = process.env): OAuthClientProvider {
  const where = `servers.${server}.oauth`;
  const common = {
    clientId: expandVars(oauth.client_id, env, `${where}.client_id`),
    clientName: `agentloop-mcp-broker (${server})`,
    ...(oauth.scope ? { scope: oauth.scope } : {}),
    ...(oauth.issuer ? { expectedIssuer: oauth.issuer } : {}),
  };
  if (oauth.private_key !== undefined) {
    // A PEM from the environment usually has its newlines escaped.
    const privateKey = expandVars(oauth.private_key, env, `${where}.private_key`).replace(/\\n/g, '\n');
    return new PrivateKeyJwtProvider({ ...common, privateKey, algorithm: oauth.algorithm });
  }
  return new ClientCredentialsProvider({ ...common, clientSecret: expandVars(oauth.client_secret ?? '', env, `${where}.client_secret`) });
}
