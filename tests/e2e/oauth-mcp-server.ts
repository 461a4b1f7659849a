/**
 * An MCP server behind OAuth for the e2e tests of the authorization code flow (mcp-oauth.test.ts):
 * one HTTP origin that is both the authorization server (the MCP SDK's `mcpAuthRouter`: metadata,
 * dynamic client registration, /authorize, /token) and the protected MCP server (streamable HTTP
 * at /mcp behind the SDK's `requireBearerAuth`). /authorize approves at once, as a new user each
 * time (`user-1`, `user-2`, …), and redirects back with a code; the one tool, `whoami`, answers the
 * user whose token made the call — so a test sees whose token a tenant's call carried.
 *
 *   node --import tsx tests/e2e/oauth-mcp-server.ts     prints "listening <mcp url>"
 *
 * Its own process (started by `startOAuthMcpServer` of mcp-oauth-flow.ts): express (under the SDK's
 * helpers) resolves its CommonJS dependencies wrongly under the test runner's `import` resolve condition.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { OAuthClientInformationFull, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

interface Grant {
  clientId: string;
  subject: string;
  scopes: string[];
}

/** Approves every authorization as a new user; tokens live as long as the server. */
class ApproveEveryone implements OAuthServerProvider {
  private readonly clients = new Map<string, OAuthClientInformationFull>();
  private readonly codes = new Map<string, Grant & { challenge: string }>();
  private readonly tokens = new Map<string, Grant>();
  private readonly refreshTokens = new Map<string, Grant>();
  private users = 0;

  readonly clientsStore = {
    getClient: (id: string) => this.clients.get(id),
    registerClient: (client: Omit<OAuthClientInformationFull, 'client_id' | 'client_id_issued_at'>) => {
      const full = { ...client, client_id: randomUUID(), client_id_issued_at: Math.floor(Date.now() / 1000) };
      this.clients.set(full.client_id, full);
      return full;
    },
  };

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: { redirect(url: string): void }): Promise<void> {
    const code = randomUUID();
    this.codes.set(code, { clientId: client.client_id, subject: `user-${++this.users}`, scopes: params.scopes ?? [], challenge: params.codeChallenge });
    const back = new URL(params.redirectUri);
    back.searchParams.set('code', code);
    if (params.state) back.searchParams.set('state', params.state);
    res.redirect(back.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const grant = this.codes.get(code);
    if (!grant) throw new InvalidGrantError('unknown authorization code');
    return grant.challenge;
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<OAuthTokens> {
    const grant = this.codes.get(code);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    this.codes.delete(code);
    return this.issue(grant);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string): Promise<OAuthTokens> {
    const grant = this.refreshTokens.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError('unknown refresh token');
    return this.issue(grant);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const grant = this.tokens.get(token);
    if (!grant) throw new InvalidTokenError('unknown access token');
    return { token, clientId: grant.clientId, scopes: grant.scopes, expiresAt: Math.floor(Date.now() / 1000) + 3600, extra: { subject: grant.subject } };
  }

  private issue(grant: Grant): OAuthTokens {
    const access = randomUUID();
    const refresh = randomUUID();
    this.tokens.set(access, { clientId: grant.clientId, subject: grant.subject, scopes: grant.scopes });
    this.refreshTokens.set(refresh, grant);
    return {
      access_token: access,
      token_type: 'bearer',
      expires_in: 3600,
      refresh_token: refresh,
      ...(grant.scopes.length ? { scope: grant.scopes.join(' ') } : {}),
    };
  }
}

// The SDK's express app for MCP servers: JSON bodies, and Host checks against DNS rebinding.
const app = createMcpExpressApp({ host: '127.0.0.1' });
const http = await new Promise<import('node:http').Server>((resolve) => {
  const s = app.listen(0, '127.0.0.1', () => resolve(s));
});
const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
const mcpUrl = new URL(`${base}/mcp`);
const provider = new ApproveEveryone();
app.use(
  mcpAuthRouter({
    provider,
    issuerUrl: new URL(base),
    resourceServerUrl: mcpUrl,
    scopesSupported: ['whoami'],
    authorizationOptions: { rateLimit: false },
    clientRegistrationOptions: { rateLimit: false },
    tokenOptions: { rateLimit: false },
  }),
);
app.post(
  '/mcp',
  requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) }),
  async (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
    const server = new McpServer({ name: 'guarded', version: '1.0.0' });
    server.registerTool('whoami', { description: 'Who the caller is, as its token says' }, async (extra) => ({
      content: [{ type: 'text', text: `you are ${String(extra.authInfo?.extra?.subject)}` }],
    }));
    // Stateless: one server and transport per request.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  },
);
const notAllowed = (_req: IncomingMessage, res: ServerResponse) => void res.writeHead(405).end();
app.get('/mcp', notAllowed);
app.delete('/mcp', notAllowed);
process.stdout.write(`listening ${mcpUrl.href}\n`);
process.on('SIGTERM', () => {
  http.close(() => process.exit(0));
  http.closeAllConnections();
});
