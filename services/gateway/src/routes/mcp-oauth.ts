import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { serviceClient, type Bus } from '@agentloop/bus';
import { AgentLoopError, UnavailableError, errorMessage, type ErrorCode } from '@agentloop/core';
import { McpOAuth, type WireError } from '@agentloop/proto';
import { parseRequest } from '../validation.js';

/** The callback path the authorization server sends the user back to (served without an API key). */
export const MCP_OAUTH_CALLBACK_PATH = '/mcp/oauth/callback';

const ServerParams = z.object({ id: z.string().min(1).max(128) });
const AuthorizeBody = z
  .object({
    /** Scopes to ask for; default: what the server's challenge or metadata names. */
    scopes: z.array(z.string().min(1).max(200)).max(50).optional(),
  })
  .strict();
const CallbackQuery = z.object({
  state: z.string().max(512).default(''),
  code: z.string().max(4096).default(''),
  error: z.string().max(200).default(''),
  error_description: z.string().max(1000).default(''),
});

/**
 * OAuth authorization code flow of remote MCP servers, per tenant (issue 14; served by the MCP
 * broker over `agentloop.mcp.oauth.*`):
 * - `POST /mcp/servers/{id}/authorize` → `{authorization_url}` to open in the user's browser, or
 *   `{authorized: true}` when the tenant's token works already;
 * - `GET /mcp/oauth/callback?code&state` — where the authorization server sends the user back; no
 *   API key (the one-use `state` names the tenant and server); answers a small HTML page;
 * - `GET /mcp/servers/authorizations` — the tenant's OAuth servers and whether it is authorized;
 * - `DELETE /mcp/servers/{id}/authorization` — forgets the tenant's tokens for the server.
 * The redirect URI is PUBLIC_BASE_URL + the callback path, else this request's own origin.
 */
export function registerMcpOAuthRoutes(app: FastifyInstance, bus: Bus | undefined, publicBaseUrl: string | undefined): void {
  const client = bus ? serviceClient(bus, McpOAuth) : undefined;
  const ask = async <T>(call: (c: NonNullable<typeof client>) => Promise<T>): Promise<T> => {
    if (!client) throw new UnavailableError('MCP OAuth is not available: this gateway has no bus to the MCP broker.');
    try {
      return await call(client);
    } catch (err) {
      if (err instanceof AgentLoopError) throw err;
      throw new UnavailableError(`The MCP broker did not answer: ${errorMessage(err)}`, { cause: err });
    }
  };
  const redirectUri = (request: FastifyRequest) => `${publicBaseUrl ?? `${request.protocol}://${request.host}`}${MCP_OAUTH_CALLBACK_PATH}`;

  app.post('/mcp/servers/:id/authorize', async (request) => {
    const { id } = parseRequest(ServerParams, request.params, 'params');
    const body = parseRequest(AuthorizeBody, request.body, 'body');
    const res = await ask((c) =>
      c.authorize({ tenantId: request.tenantId, server: id, redirectUri: redirectUri(request), scopes: body.scopes ?? [] }, { tenantId: request.tenantId }),
    );
    throwIfError(res.error);
    return res.authorized ? { authorized: true } : { authorized: false, authorization_url: res.authorizationUrl };
  });

  app.get('/mcp/servers/authorizations', async (request) => {
    const res = await ask((c) => c.status({ tenantId: request.tenantId }, { tenantId: request.tenantId }));
    return {
      servers: res.servers.map((s) => ({
        server: s.server,
        flow: s.flow,
        authorized: s.authorized,
        expires_at: s.expiresAtMs > 0n ? new Date(Number(s.expiresAtMs)).toISOString() : null,
        scope: s.scope || null,
        refreshable: s.refreshable,
      })),
    };
  });

  app.delete('/mcp/servers/:id/authorization', async (request) => {
    const { id } = parseRequest(ServerParams, request.params, 'params');
    const res = await ask((c) => c.revoke({ tenantId: request.tenantId, server: id }, { tenantId: request.tenantId }));
    return { removed: res.removed };
  });

  app.get(MCP_OAUTH_CALLBACK_PATH, async (request, reply) => {
    const q = parseRequest(CallbackQuery, request.query, 'query');
    let status = 200;
    let page: string;
    try {
      const res = await ask((c) => c.callback({ state: q.state, code: q.code, error: q.error, errorDescription: q.error_description }));
      throwIfError(res.error);
      page = resultPage('Authorized', `AgentLoop may now use the MCP server ${res.server} for you. You can close this window.`);
    } catch (err) {
      status = err instanceof AgentLoopError && err.code === 'NOT_FOUND' ? 404 : err instanceof AgentLoopError && err.code === 'UNAVAILABLE' ? 503 : 400;
      page = resultPage('Authorization failed', errorMessage(err));
    }
    return reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .header('cache-control', 'no-store')
      .send(page);
  });
}

function throwIfError(error: WireError | undefined): void {
  if (error) throw new AgentLoopError(error.code as ErrorCode, error.message, { retryable: error.retryable });
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/** The page the user's browser shows after the callback; every dynamic text escaped. */
function resultPage(title: string, message: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title><style>body{font-family:sans-serif;max-width:40em;margin:4em auto}</style></head><body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
}
