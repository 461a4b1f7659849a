/**
 * The OAuth authorization code flow of a remote MCP server, per tenant (issue 14): an
 * OAuthClientProvider of the MCP SDK for one (tenant, server), backed by the grants table
 * (migration 0019, `McpOAuthRepository` of @agentloop/store), so any broker replica uses, refreshes
 * and revokes the same tokens. The SDK does the protocol (discovery, dynamic client registration
 * or client ID metadata documents, PKCE, code exchange, refresh); this file only keeps its state.
 *
 * A provider is made for one purpose:
 * - `call`: a tenant's connection to the server. It never starts an authorization — there is no
 *   user to send to a browser during a tool call — so when the SDK would, the call fails with
 *   McpAuthorizationRequiredError, which tells the model where the user authorizes.
 * - `authorize`: the McpOAuth Authorize RPC. It captures the authorization URL, the PKCE verifier
 *   and the state the SDK produced; the RPC stores them as a pending flow.
 * - `callback`: the McpOAuth Callback RPC. It hands the SDK the pending flow's verifier and
 *   redirect URI for the code exchange.
 */
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpOAuthFlow, McpOAuthGrant, McpOAuthGrantPatch } from '@agentloop/store';
import type { McpAuthorizationCodeEntry } from './client-config.js';
import { expandVars } from './config.js';
import { McpAuthorizationRequiredError } from './errors.js';

/** What the broker needs of the grants table (McpOAuthRepository of @agentloop/store). */
export interface OAuthGrantStore {
  getGrant(tenantId: string, server: string): Promise<McpOAuthGrant | undefined>;
  listGrants(tenantId: string): Promise<McpOAuthGrant[]>;
  patchGrant(tenantId: string, server: string, patch: McpOAuthGrantPatch): Promise<void>;
  deleteGrant(tenantId: string, server: string): Promise<boolean>;
  createFlow(flow: Omit<McpOAuthFlow, 'createdAt'>): Promise<void>;
  takeFlow(state: string): Promise<McpOAuthFlow | undefined>;
  sweepFlows(): Promise<number>;
}

export type TenantOAuthPurpose =
  { kind: 'call' } | { kind: 'authorize'; redirectUri: string; scopes?: readonly string[] } | { kind: 'callback'; flow: McpOAuthFlow };

/**
 * The redirect URI a `call` provider reports. The SDK treats a provider without one as a
 * non-interactive (client credentials) client, which a user-delegated grant is not; it is never
 * sent anywhere, because a `call` provider refuses to start an authorization.
 */
const CALL_REDIRECT_URI = 'http://localhost/mcp/oauth/callback';

export class TenantOAuthProvider implements OAuthClientProvider {
  private verifier: string | undefined;
  /** The state of the authorization this provider starts (`authorize` only). */
  readonly flowState: string | undefined;
  /** Where the SDK would send the user (`authorize` only), once `auth()` answered REDIRECT. */
  authorizationUrl: URL | undefined;

  constructor(
    private readonly store: OAuthGrantStore,
    readonly tenantId: string,
    readonly server: string,
    private readonly entry: McpAuthorizationCodeEntry,
    private readonly purpose: TenantOAuthPurpose,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    if (purpose.kind === 'authorize') this.flowState = randomBytes(32).toString('base64url');
    if (purpose.kind === 'callback') this.verifier = purpose.flow.codeVerifier;
  }

  get redirectUrl(): string {
    switch (this.purpose.kind) {
      case 'authorize':
        return this.purpose.redirectUri;
      case 'callback':
        return this.purpose.flow.redirectUri;
      case 'call':
        return this.entry.redirect_uri ?? CALL_REDIRECT_URI;
    }
  }

  get clientMetadataUrl(): string | undefined {
    return this.entry.client_metadata_url;
  }

  get clientMetadata(): OAuthClientMetadata {
    const scopes = this.purpose.kind === 'authorize' && this.purpose.scopes?.length ? this.purpose.scopes : this.entry.scopes;
    return {
      client_name: this.entry.client_name,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: this.entry.client_secret ? 'client_secret_basic' : 'none',
      ...(scopes?.length ? { scope: scopes.join(' ') } : {}),
    };
  }

  state(): string {
    if (!this.flowState) throw new McpAuthorizationRequiredError(this.server);
    return this.flowState;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const grant = await this.grant();
    // A call never registers a client: without a grant (never authorized, or revoked on another
    // replica while this connection lived) the user has to authorize first.
    if (this.purpose.kind === 'call' && (!grant?.tokens || (!this.entry.client_id && !grant.clientInfo))) {
      throw new McpAuthorizationRequiredError(this.server);
    }
    if (this.entry.client_id) {
      const where = `servers.${this.server}.oauth`;
      return {
        client_id: expandVars(this.entry.client_id, this.env, `${where}.client_id`),
        ...(this.entry.client_secret ? { client_secret: expandVars(this.entry.client_secret, this.env, `${where}.client_secret`) } : {}),
      };
    }
    return (grant?.clientInfo ?? undefined) as OAuthClientInformationMixed | undefined;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    // A configured client is the configuration's; only a registered one is kept per tenant.
    if (this.entry.client_id) return;
    await this.store.patchGrant(this.tenantId, this.server, { clientInfo: { ...info } });
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    // Read every time (one primary-key lookup per request): a revoke on any replica applies at once.
    return ((await this.grant())?.tokens ?? undefined) as OAuthTokens | undefined;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.store.patchGrant(this.tenantId, this.server, { tokens: { ...tokens } });
  }

  redirectToAuthorization(url: URL): void {
    if (this.purpose.kind !== 'authorize') {
      throw new McpAuthorizationRequiredError(this.server, 'its token is missing, expired or lacks a scope the call needs');
    }
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new McpAuthorizationRequiredError(this.server, 'no authorization is in progress');
    return this.verifier;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.store.patchGrant(this.tenantId, this.server, { discovery: JSON.parse(JSON.stringify(state)) as Record<string, unknown> });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return ((await this.grant())?.discovery ?? undefined) as OAuthDiscoveryState | undefined;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    switch (scope) {
      case 'all':
        await this.store.deleteGrant(this.tenantId, this.server);
        return;
      case 'client':
        await this.store.patchGrant(this.tenantId, this.server, { clientInfo: null });
        return;
      case 'tokens':
        await this.store.patchGrant(this.tenantId, this.server, { tokens: null });
        return;
      case 'discovery':
        await this.store.patchGrant(this.tenantId, this.server, { discovery: null });
        return;
      case 'verifier':
        this.verifier = undefined;
        return;
    }
  }

  /** The PKCE verifier of the authorization this provider started (`authorize`, after REDIRECT). */
  get pendingVerifier(): string | undefined {
    return this.verifier;
  }

  private grant(): Promise<McpOAuthGrant | undefined> {
    return this.store.getGrant(this.tenantId, this.server);
  }
}

/** What the pool needs for the servers with the authorization code flow (pool.ts `tenantOAuth`). */
export interface TenantOAuth {
  /** The provider of a tenant's connection to the server. */
  provider(tenantId: string, server: string, entry: McpAuthorizationCodeEntry): OAuthClientProvider;
  /** Whether the tenant holds a token for the server (checked before connecting: no token, no connection). */
  hasToken(tenantId: string, server: string): Promise<boolean>;
}

/** Tool calls' providers over the grants table: they use and refresh tokens, never start an authorization. */
export function tenantOAuthFor(store: OAuthGrantStore, env: NodeJS.ProcessEnv = process.env): TenantOAuth {
  return {
    provider: (tenantId, server, entry) => new TenantOAuthProvider(store, tenantId, server, entry, { kind: 'call' }, env),
    hasToken: async (tenantId, server) => Boolean((await store.getGrant(tenantId, server))?.tokens),
  };
}
