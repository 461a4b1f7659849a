/**
 * The MCP conformance suite's client under test (`@modelcontextprotocol/conformance client
 * --command …`, scripts/mcp-conformance.sh): AgentLoop's MCP client — the broker's pool, with the
 * capabilities and OAuth it declares in production — pointed at the scenario's server.
 *
 *   node conformance-client.js <server-url>
 *
 * MCP_CONFORMANCE_SCENARIO names the scenario; MCP_CONFORMANCE_CONTEXT (JSON) carries its client
 * credentials when it has some. It connects (initialize, tools/list), calls `add_numbers` when
 * offered (else the first tool, without arguments), and exits 0 on success, 1 on a failure. A
 * harness has no user: a server's elicitation is accepted with the requested schema's defaults.
 *
 * Without client credentials the server is configured for the authorization code flow, and this
 * program is the user's browser too: when the SDK starts an authorization, it follows the
 * authorization URL (the suite's authorization server redirects at once), hands the code to the
 * broker's Callback path (oauth-flows.ts, the grants table in an in-memory SQLite store) and tries
 * again — at most MAX_AUTHORIZATIONS times, so a server that never accepts the token ends it.
 */
import { createLogger, errorMessage } from '@agentloop/core';
import { createSqliteStore, SqlStore } from '@agentloop/store';
import { parseMcpFile } from './config.js';
import { acceptDefaults } from './elicitation.js';
import { McpAuthorizationRequiredError } from './errors.js';
import { TenantAuthorizations } from './oauth-flows.js';
import { McpPool } from './pool.js';
import { TenantOAuthProvider } from './tenant-oauth.js';

const TENANT = 'conformance';
const SERVER = 'conformance';
/** Never contacted: the authorization server's redirect is read, not followed. */
const REDIRECT_URI = 'http://127.0.0.1/mcp/oauth/callback';
/** The client ID metadata document URL the suite's `auth/basic-cimd` scenario expects. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const MAX_AUTHORIZATIONS = 3;

const url = process.argv.at(-1);
if (!url || !/^https?:\/\//.test(url)) {
  process.stderr.write('usage: conformance-client <server-url>\n');
  process.exit(2);
}
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
};
const oauth = !context.client_id
  ? { flow: 'authorization_code', client_metadata_url: CLIENT_METADATA_URL }
  : context.client_secret
    ? { client_id: context.client_id, client_secret: context.client_secret }
    : context.private_key_pem
      ? { client_id: context.client_id, private_key: context.private_key_pem, algorithm: context.signing_algorithm ?? 'ES256' }
      : undefined;
const file = parseMcpFile(JSON.stringify({ servers: { [SERVER]: { connection_mode: 'http', url, ...(oauth ? { oauth } : {}) } } }));
const logger = createLogger({ service: 'mcp-conformance-client', level: process.env.LOG_LEVEL ?? 'warn' });
const store = createSqliteStore({ path: ':memory:' });
await store.migrate();
const grants = (store as SqlStore).mcpOAuth;
const authorizations = new TenantAuthorizations(() => file.servers, grants, { logger });
/** The provider of the latest connection: an interactive one, whose authorization URL this program follows. */
let latest: TenantOAuthProvider | undefined;
const pool = new McpPool(file.servers, {
  logger,
  startTimeoutMs: 20_000,
  tenantOAuth: {
    provider: (tenantId, server, entry) =>
      (latest = new TenantOAuthProvider(grants, tenantId, server, entry, { kind: 'authorize', redirectUri: REDIRECT_URI })),
    // The first connection has no token: it is the one that starts the authorization.
    hasToken: async () => true,
  },
});

/** The user's part: open the authorization URL, come back to the callback with the code. */
async function authorizeInBrowser(provider: TenantOAuthProvider): Promise<void> {
  await authorizations.recordPending(provider);
  const res = await fetch(provider.authorizationUrl!, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (!location) throw new Error(`the authorization server answered ${res.status} without a redirect`);
  const back = new URL(location);
  await authorizations.callback(back.searchParams.get('state') ?? '', back.searchParams.get('code') ?? '', back.searchParams.get('error') ?? '');
}

async function session(): Promise<void> {
  const tools = await pool.tools(SERVER, TENANT);
  const tool = tools.find((t) => t.name === 'add_numbers') ?? tools[0];
  if (tool) {
    const args = tool.name === 'add_numbers' ? { a: 5, b: 3 } : {};
    const caller = { tenantId: TENANT, runId: 'conformance', toolCallId: 'call-1', toolName: tool.name, elicit: acceptDefaults };
    const result = await pool.callTool(SERVER, tool.name, args, { exposedName: tool.name, timeoutMs: 20_000, tenantId: TENANT, caller });
    process.stdout.write(`${JSON.stringify(result)}\n`);
  }
}

try {
  for (let authorized = 0; ; authorized++) {
    try {
      await session();
      break;
    } catch (err) {
      const provider = latest;
      if (!(err instanceof McpAuthorizationRequiredError) || !provider?.authorizationUrl || authorized >= MAX_AUTHORIZATIONS) throw err;
      await authorizeInBrowser(provider);
      pool.dropTenant(SERVER, TENANT, 'authorized again');
    }
  }
  await pool.closeAll();
  process.exit(0);
} catch (err) {
  process.stderr.write(`${process.env.MCP_CONFORMANCE_SCENARIO ?? 'scenario'}: ${errorMessage(err)}\n`);
  await pool.closeAll();
  process.exit(1);
}
