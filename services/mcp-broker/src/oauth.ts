/**
 * OAuth for remote MCP servers (mcp_servers.yaml `oauth:`), with the SDK's auth support: the
 * transport answers a 401 by discovering the authorization server and asking it for a token with
 * the client credentials grant, then retries. Each server has one provider per pool, so its token
 * outlives a reconnect; it is the broker's identity at that server (a connection is shared by the
 * tenants allowed to use the server), not a tenant's.
 */
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { expandVars } from './config.js';
import type { McpOAuthEntry } from './client-config.js';

export function oauthProvider(server: string, oauth: McpOAuthEntry, env: NodeJS.ProcessEnv = process.env): OAuthClientProvider {
  const options = {
    clientId: expandVars(oauth.client_id, env, `servers.${server}.oauth.client_id`),
    clientSecret: expandVars(oauth.client_secret, env, `servers.${server}.oauth.client_secret`),
    clientName: `agentloop-mcp-broker (${server})`,
    ...(oauth.scope ? { scope: oauth.scope } : {}),
  };
  return oauth.issuer ? new ClientCredentialsProvider({ ...options, expectedIssuer: oauth.issuer }) : new ClientCredentialsProvider(options);
}
