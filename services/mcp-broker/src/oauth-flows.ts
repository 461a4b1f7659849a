/**
 * The McpOAuth service's work (issue 14): starting a tenant's authorization at a server with the
 * authorization code flow, finishing it from the gateway's callback, listing and revoking a
 * tenant's authorizations. The SDK's `auth()` does the protocol through a TenantOAuthProvider;
 * this keeps the pending flows (one use, 10 minutes) and tells the pool when a tenant's token
 * changed, so its connection is opened again with the new one.
 */
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { AgentLoopError, InvalidArgumentError, NotFoundError, errorMessage, type Logger } from '@agentloop/core';
import type { McpAuthorizationCodeEntry } from './client-config.js';
import type { McpServerEntry } from './config.js';
import { serverHeaders } from './pool.js';
import { TenantOAuthProvider, type OAuthGrantStore } from './tenant-oauth.js';

const CLIENT_INFO = { name: 'agentloop-mcp-broker', version: '0.1.0' };
/** Budget of the connection made to find out whether an authorization is needed. */
const PROBE_MS = 10_000;

export interface ServerAuthorization {
  server: string;
  flow: 'authorization_code' | 'client_credentials';
  authorized: boolean;
  /** Epoch ms; 0: unknown. */
  expiresAtMs: number;
  scope: string;
  refreshable: boolean;
}

export interface TenantAuthorizationsOptions {
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /** A tenant's token for a server was replaced or removed: its connection must be opened again. */
  onGrantChanged?: (tenantId: string, server: string) => void;
}

export class TenantAuthorizations {
  constructor(
    private readonly servers: () => Readonly<Record<string, McpServerEntry>>,
    private readonly store: OAuthGrantStore | undefined,
    private readonly opts: TenantAuthorizationsOptions,
  ) {}

  /**
   * Starts the tenant's authorization at a server: the URL to open in the user's browser, or
   * `authorized` when the tenant's token works already (refreshed if need be). Without `scopes`
   * the server itself is asked (a connection whose 401 challenge names the protected-resource
   * metadata and scope, as the SDK's transport handles it); with them, they are asked for.
   */
  async authorize(
    tenantId: string,
    server: string,
    redirectUri: string,
    scopes: readonly string[],
  ): Promise<{ authorizationUrl?: string; authorized: boolean }> {
    const { entry, oauth, store } = this.authorizationCodeServer(tenantId, server);
    const redirect = oauth.redirect_uri ?? redirectUri;
    if (!redirect) throw new InvalidArgumentError('redirect_uri is required: the gateway builds it from PUBLIC_BASE_URL');
    const provider = new TenantOAuthProvider(store, tenantId, server, oauth, { kind: 'authorize', redirectUri: redirect, scopes }, this.opts.env);
    if (scopes.length > 0) {
      await auth(provider, { serverUrl: entry.url!, scope: scopes.join(' ') });
    } else {
      await this.probe(server, entry, provider);
    }
    if (!provider.authorizationUrl) {
      this.opts.onGrantChanged?.(tenantId, server);
      return { authorized: true };
    }
    await this.recordPending(provider);
    return { authorizationUrl: provider.authorizationUrl.href, authorized: false };
  }

  /** Keeps the authorization `provider` started (after `auth()` answered REDIRECT) as a pending flow for the callback. */
  async recordPending(provider: TenantOAuthProvider): Promise<void> {
    const store = this.requireStore();
    if (!provider.flowState || !provider.pendingVerifier) throw new AgentLoopError('INTERNAL', 'the authorization was not started');
    // Flows the users never finished are worthless after 10 minutes: clear them as new ones come.
    await store.sweepFlows();
    await store.createFlow({
      state: provider.flowState,
      tenantId: provider.tenantId,
      server: provider.server,
      codeVerifier: provider.pendingVerifier,
      redirectUri: provider.redirectUrl,
    });
  }

  /**
   * Finishes an authorization from the callback: the pending flow named by `state` (used once),
   * its code exchanged for the tenant's tokens. The tenant and server it was for, or a clear error.
   */
  async callback(state: string, code: string, error = '', errorDescription = ''): Promise<{ tenantId: string; server: string }> {
    const store = this.requireStore();
    if (!state) throw new InvalidArgumentError('state is required');
    const flow = await store.takeFlow(state);
    if (!flow) throw new NotFoundError('This authorization link is unknown, was already used or has expired (10 minutes): start the authorization again.');
    if (error) {
      throw new AgentLoopError(
        'PERMISSION_DENIED',
        `The authorization server refused the authorization of MCP server ${flow.server}: ${error}${errorDescription ? ` (${errorDescription})` : ''}`,
      );
    }
    if (!code) throw new InvalidArgumentError('code is required');
    const { entry, oauth } = this.authorizationCodeServer(flow.tenantId, flow.server);
    const provider = new TenantOAuthProvider(store, flow.tenantId, flow.server, oauth, { kind: 'callback', flow }, this.opts.env);
    try {
      await auth(provider, { serverUrl: entry.url!, authorizationCode: code });
    } catch (err) {
      throw new AgentLoopError(
        'PERMISSION_DENIED',
        `The code exchange with the authorization server of MCP server ${flow.server} failed: ${errorMessage(err)}`,
        { cause: err },
      );
    }
    this.opts.logger.info({ tenant: flow.tenantId, mcp_server: flow.server }, 'MCP server authorized for a tenant');
    this.opts.onGrantChanged?.(flow.tenantId, flow.server);
    return { tenantId: flow.tenantId, server: flow.server };
  }

  /** The OAuth servers the tenant may use, and whether it is authorized at each. */
  async status(tenantId: string): Promise<ServerAuthorization[]> {
    const grants = this.store ? await this.store.listGrants(tenantId) : [];
    const out: ServerAuthorization[] = [];
    for (const [server, entry] of Object.entries(this.servers()).sort(([a], [b]) => a.localeCompare(b))) {
      if (!entry.oauth || !allows(entry, tenantId)) continue;
      if (entry.oauth.flow === 'client_credentials') {
        // The broker's own credentials: nothing for the tenant to do.
        out.push({ server, flow: 'client_credentials', authorized: true, expiresAtMs: 0, scope: entry.oauth.scope ?? '', refreshable: false });
        continue;
      }
      const tokens = grants.find((g) => g.server === server)?.tokens;
      const grant = grants.find((g) => g.server === server);
      out.push({
        server,
        flow: 'authorization_code',
        authorized: Boolean(tokens),
        expiresAtMs: tokens && grant?.expiresAt ? grant.expiresAt.getTime() : 0,
        scope: (tokens && grant?.scope) || '',
        refreshable: typeof tokens?.refresh_token === 'string',
      });
    }
    return out;
  }

  /** Forgets the tenant's tokens for a server (and the client registered for it); whether there were any. */
  async revoke(tenantId: string, server: string): Promise<boolean> {
    this.authorizationCodeServer(tenantId, server);
    const removed = await this.requireStore().deleteGrant(tenantId, server);
    this.opts.onGrantChanged?.(tenantId, server);
    return removed;
  }

  /** Connects with the provider: a 401 makes the SDK discover the authorization server and start an authorization (captured by the provider). */
  private async probe(server: string, entry: McpServerEntry, provider: TenantOAuthProvider): Promise<void> {
    const init = { requestInit: { headers: serverHeaders(server, entry, this.opts.env) }, authProvider: provider };
    const url = new URL(entry.url!);
    const transport = entry.connection_mode === 'sse' ? new SSEClientTransport(url, init) : new StreamableHTTPClientTransport(url, init);
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    try {
      await client.connect(transport, { timeout: PROBE_MS });
      await client.listTools(undefined, { timeout: PROBE_MS });
    } catch (err) {
      if (!provider.authorizationUrl) {
        throw new AgentLoopError('UNAVAILABLE', `MCP server ${server} could not be reached to start the authorization: ${errorMessage(err)}`, {
          cause: err,
          retryable: true,
        });
      }
    } finally {
      // A session the probe opened is not left behind on the server.
      if (transport instanceof StreamableHTTPClientTransport && transport.sessionId) await transport.terminateSession().catch(() => undefined);
      await client.close().catch(() => undefined);
    }
  }

  private authorizationCodeServer(tenantId: string, server: string): { entry: McpServerEntry; oauth: McpAuthorizationCodeEntry; store: OAuthGrantStore } {
    const entry = this.servers()[server];
    // Another tenant's server is "not found", like an unknown one.
    if (!entry || !allows(entry, tenantId)) throw new NotFoundError(`Unknown MCP server: ${server}`);
    if (entry.oauth?.flow !== 'authorization_code') {
      throw new AgentLoopError(
        'CONFLICT',
        `MCP server ${server} does not use the OAuth authorization code flow (mcp_servers.yaml oauth.flow): there is nothing to authorize`,
      );
    }
    return { entry, oauth: entry.oauth, store: this.requireStore() };
  }

  private requireStore(): OAuthGrantStore {
    if (!this.store) throw new AgentLoopError('UNAVAILABLE', 'This MCP broker has no token store for OAuth authorizations (set MYSQL_URL)');
    return this.store;
  }
}

function allows(entry: McpServerEntry, tenantId: string): boolean {
  return entry.tenants === undefined || entry.tenants.includes(tenantId);
}
