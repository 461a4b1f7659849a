/**
 * OAuth authorization code grants of remote MCP servers, per tenant (issue 14; migration 0019):
 * what the MCP broker's OAuthClientProvider keeps for a (tenant, server), and the pending flows
 * the gateway's callback finishes. Every statement about a grant is scoped by tenant; a flow is
 * found by its `state` alone (the callback carries no API key: the state is the capability) and
 * can be taken once.
 *
 * Tokens are stored as the authorization server issued them (no encryption key facility exists
 * in the store): whoever can read the database can use them (docs/mcp-client-features.md).
 */
import type { RepositoryContext } from './context.js';
import { checkId, isDuplicateKey } from './rows.js';
import type { JsonObject } from '../types.js';

/** A pending authorization is worthless after this long (the user did not come back). */
export const MCP_OAUTH_FLOW_TTL_MS = 10 * 60_000;

/** What is kept for one (tenant, server). JSON documents are the MCP SDK's shapes, opaque here. */
export interface McpOAuthGrant {
  tenantId: string;
  server: string;
  tokens: JsonObject | null;
  clientInfo: JsonObject | null;
  discovery: JsonObject | null;
  /** When the access token expires; null: unknown or no token. */
  expiresAt: Date | null;
  scope: string | null;
  updatedAt: Date;
}

/** Fields of a grant to set; absent ones are left as they are, null clears one. */
export interface McpOAuthGrantPatch {
  tokens?: JsonObject | null;
  clientInfo?: JsonObject | null;
  discovery?: JsonObject | null;
}

export interface McpOAuthFlow {
  state: string;
  tenantId: string;
  server: string;
  codeVerifier: string;
  redirectUri: string;
  createdAt: Date;
}

const json = (v: JsonObject | null | undefined): string | null | undefined => (v === undefined ? undefined : v === null ? null : JSON.stringify(v));
const parse = (v: string | null): JsonObject | null => (v === null ? null : (JSON.parse(v) as JsonObject));

export class McpOAuthRepository {
  constructor(private readonly ctx: RepositoryContext) {}

  async getGrant(tenantId: string, server: string): Promise<McpOAuthGrant | undefined> {
    const row = await this.ctx.db.selectFrom('mcp_oauth_grants').selectAll().where('tenant_id', '=', tenantId).where('server', '=', server).executeTakeFirst();
    return row && toGrant(row);
  }

  /** The tenant's grants, by server id. */
  async listGrants(tenantId: string): Promise<McpOAuthGrant[]> {
    const rows = await this.ctx.db.selectFrom('mcp_oauth_grants').selectAll().where('tenant_id', '=', tenantId).orderBy('server').execute();
    return rows.map(toGrant);
  }

  /** Sets some fields of the tenant's grant for a server, creating it when absent. */
  async patchGrant(tenantId: string, server: string, patch: McpOAuthGrantPatch): Promise<void> {
    checkId('tenantId', tenantId);
    checkId('server', server);
    const now = this.ctx.now();
    const set: Record<string, string | number | null> = { updated_at: now };
    const tokens = json(patch.tokens);
    if (tokens !== undefined) {
      set.tokens = tokens;
      set.expires_at = tokenExpiry(patch.tokens ?? null, now);
      set.scope = typeof patch.tokens?.scope === 'string' ? patch.tokens.scope : null;
    }
    const clientInfo = json(patch.clientInfo);
    if (clientInfo !== undefined) set.client_info = clientInfo;
    const discovery = json(patch.discovery);
    if (discovery !== undefined) set.discovery = discovery;
    try {
      await this.ctx.db
        .insertInto('mcp_oauth_grants')
        .values({ tenant_id: tenantId, server, tokens: null, client_info: null, discovery: null, expires_at: null, scope: null, ...set, updated_at: now })
        .execute();
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      await this.ctx.db.updateTable('mcp_oauth_grants').set(set).where('tenant_id', '=', tenantId).where('server', '=', server).execute();
    }
  }

  /** Forgets the tenant's grant for a server; whether there was one. */
  async deleteGrant(tenantId: string, server: string): Promise<boolean> {
    const res = await this.ctx.db.deleteFrom('mcp_oauth_grants').where('tenant_id', '=', tenantId).where('server', '=', server).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Records a started authorization under its `state`. */
  async createFlow(flow: Omit<McpOAuthFlow, 'createdAt'>): Promise<void> {
    checkId('tenantId', flow.tenantId);
    checkId('server', flow.server);
    checkId('state', flow.state);
    await this.ctx.db
      .insertInto('mcp_oauth_flows')
      .values({
        state: flow.state,
        tenant_id: flow.tenantId,
        server: flow.server,
        code_verifier: flow.codeVerifier,
        redirect_uri: flow.redirectUri,
        created_at: this.ctx.now(),
      })
      .execute();
  }

  /**
   * Takes the pending flow named by `state`: deleted as it is read, so a second callback with the
   * same state (a replay, a double click) finds nothing. Undefined when unknown, already used or
   * older than MCP_OAUTH_FLOW_TTL_MS.
   */
  async takeFlow(state: string): Promise<McpOAuthFlow | undefined> {
    const row = await this.ctx.db.selectFrom('mcp_oauth_flows').selectAll().where('state', '=', state).executeTakeFirst();
    if (!row) return undefined;
    const res = await this.ctx.db.deleteFrom('mcp_oauth_flows').where('state', '=', state).executeTakeFirst();
    // Another callback deleted it first: that one owns the flow.
    if (Number(res.numDeletedRows) !== 1) return undefined;
    if (this.ctx.now() - Number(row.created_at) > MCP_OAUTH_FLOW_TTL_MS) return undefined;
    return {
      state: row.state,
      tenantId: row.tenant_id,
      server: row.server,
      codeVerifier: row.code_verifier,
      redirectUri: row.redirect_uri,
      createdAt: new Date(Number(row.created_at)),
    };
  }

  /** Deletes flows older than MCP_OAUTH_FLOW_TTL_MS; how many. */
  async sweepFlows(): Promise<number> {
    const res = await this.ctx.db
      .deleteFrom('mcp_oauth_flows')
      .where('created_at', '<', this.ctx.now() - MCP_OAUTH_FLOW_TTL_MS)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}

/** `expires_in` (seconds from issue) as an absolute time; null without one. */
function tokenExpiry(tokens: JsonObject | null, now: number): number | null {
  const s = tokens?.expires_in;
  return typeof s === 'number' && Number.isFinite(s) ? now + Math.round(s * 1000) : null;
}

function toGrant(row: {
  tenant_id: string;
  server: string;
  tokens: string | null;
  client_info: string | null;
  discovery: string | null;
  expires_at: number | string | null;
  scope: string | null;
  updated_at: number | string;
}): McpOAuthGrant {
  return {
    tenantId: row.tenant_id,
    server: row.server,
    tokens: parse(row.tokens),
    clientInfo: parse(row.client_info),
    discovery: parse(row.discovery),
    expiresAt: row.expires_at === null ? null : new Date(Number(row.expires_at)),
    scope: row.scope,
    updatedAt: new Date(Number(row.updated_at)),
  };
}
