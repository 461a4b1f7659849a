import { readFileSync } from 'node:fs';
import {
  MCP_TOOLS_RPC,
  publishMcpToolsChanged,
  replicaInstance,
  serveClusterReload,
  serveMcpServerReload,
  serveService,
  type Bus,
  type McpServerReloadResult,
  type Subscription,
} from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { McpOAuth } from '@agentloop/proto';
import { WorkspaceManager } from '@agentloop/workspace';
import { DEFAULT_MCP_CONFIG_PATH, loadMcpFile, type McpBrokerConfig, type McpFile, type McpServerEntry } from './config.js';
import { executeTool } from './handlers/execute.js';
import { listTools } from './handlers/list.js';
import { oauthHandlers } from './handlers/oauth.js';
import { TenantAuthorizations } from './oauth-flows.js';
import { tenantOAuthFor, type OAuthGrantStore } from './tenant-oauth.js';
import { McpPool, type McpServerStatus } from './pool.js';
import { McpToolProvider, type ExecuteInput, type ListInput } from './provider.js';
import { mcpPathRedactor } from './redaction.js';
import { busSampler } from './sampling-relay.js';

/**
 * Subjects served (queue group `mcp-broker`), with the tool-runner's messages (declared once in
 * MCP_TOOLS_RPC of @agentloop/bus): list: ListToolsRequest → ListToolsResponse; execute:
 * ExecuteToolRequest → ExecuteToolResponse.
 */
export const MCP_SUBJECTS = {
  toolsList: MCP_TOOLS_RPC.methods.listTools.subject,
  toolsExecute: MCP_TOOLS_RPC.methods.executeTool.subject,
} as const;

export const MCP_BROKER_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface McpBroker {
  start(): Promise<void>;
  /** Stops serving, then closes every MCP connection (stdio servers are terminated). */
  stop(): Promise<void>;
  /** What each configured (enabled) server is doing: stopped, starting, running, backoff. */
  status(): McpServerStatus[];
  /** Re-reads mcp_servers.yaml on this replica (what `POST /admin/reload` does on every replica). */
  reload(): Promise<Record<string, unknown>>;
  /** Restarts one server on this replica (what `POST /admin/mcp/servers/{id}/reload` does on every replica). */
  restartServer(id: string): Promise<Omit<McpServerReloadResult, 'instance'>>;
  readonly pool: McpPool;
  readonly provider: McpToolProvider;
}

export interface McpBrokerDeps {
  bus: Bus;
  logger: Logger;
  config: McpBrokerConfig;
  /** The parsed mcp_servers.yaml; default: read from `config.MCP_CONFIG` (or the package's example). */
  file?: McpFile;
  /** Where `${VAR}` references are looked up; default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Restart backoff after repeated failures (defaults 1 s doubling to 60 s). */
  backoff?: { baseMs?: number; maxMs?: number };
  /**
   * Tenants' OAuth grants for servers with the authorization code flow (`McpOAuthRepository` of
   * @agentloop/store); without it those servers are unavailable.
   */
  oauthStore?: OAuthGrantStore;
}

/**
 * The MCP broker (seed 001 Part 6): a pool of MCP client connections (stdio, SSE, streamable
 * HTTP) started lazily, whose tools it offers over the tool protocol — so the orchestrator treats
 * it as one more tool provider. Each replica keeps its own connections.
 */
export async function createMcpBroker(deps: McpBrokerDeps): Promise<McpBroker> {
  const logger = deps.logger.child({ component: 'mcp-broker' });
  const instance = replicaInstance();
  // The tool-runner's workspaces (same volume): results' images, audio and blobs go to their outputs/mcp/.
  const workspaces = new WorkspaceManager({ root: deps.config.WORKSPACE_ROOT, logger });
  // An injected file (tests) is what a reload reads again; otherwise MCP_CONFIG is re-read.
  const readFile = async () => deps.file ?? (await loadMcpFile(deps.config.MCP_CONFIG));
  let current = generation(deps, logger, await readFile(), workspaces);
  let subs: Subscription[] = [];
  const authorizations = new TenantAuthorizations(() => current.servers, deps.oauthStore, {
    logger,
    ...(deps.env ? { env: deps.env } : {}),
    // This replica's connection of the tenant uses the old token: open it again on the next call.
    // (Other replicas' connections read the token on each request, and a refused one is dropped.)
    onGrantChanged: (tenant, server) => current.pool.dropTenant(server, tenant, 'its OAuth authorization changed'),
  });

  /** Re-reads mcp_servers.yaml: new servers are offered, removed ones stop (their calls in flight fail). */
  const reload = async (): Promise<Record<string, unknown>> => {
    const next = generation(deps, logger, await readFile(), workspaces);
    const previous = current;
    current = next;
    await previous.pool.closeAll();
    logger.info({ servers: Object.keys(next.servers) }, 'mcp_servers.yaml reloaded');
    startAtBoot(next, logger);
    return { servers: Object.keys(next.servers) };
  };

  const restartServer = async (id: string): Promise<Omit<McpServerReloadResult, 'instance'>> => {
    const g = current;
    if (!g.servers[id]) {
      const why = g.file.servers[id] ? 'it is disabled in mcp_servers.yaml' : 'no such server in mcp_servers.yaml';
      return { ok: false, unknown: true, error: `MCP server ${id} cannot be reloaded: ${why}` };
    }
    logger.info({ mcp_server: id }, 'restarting MCP server on request');
    if (g.pool.perTenant(id)) {
      // Nothing to start without a tenant: each tenant's connection opens again on its next call.
      g.pool.closeServer(id, 'restarted by an operator (reload_mcp_server)');
      return { ok: true, state: 'stopped', tools: g.pool.knownTools().get(id)?.length ?? 0 };
    }
    try {
      const conn = await g.pool.restart(id);
      return { ok: true, state: 'running', tools: conn.tools.length };
    } catch (err) {
      return { ok: false, state: g.pool.status().find((s) => s.id === id)?.state ?? 'stopped', error: g.redactor.redact(errorMessage(err)) };
    }
  };

  return {
    get pool() {
      return current.pool;
    },
    get provider() {
      return current.provider;
    },
    status: () => current.pool.status(),
    reload,
    restartServer,
    async start() {
      if (subs.length > 0) return;
      // The handlers read the current generation on every call, so a reload applies to the next one.
      const provider = { list: (i: ListInput) => current.provider.list(i), execute: (i: ExecuteInput) => current.provider.execute(i) };
      const impl = { listTools: listTools(provider, logger), executeTool: executeTool(provider, logger, deps.bus) };
      subs = [
        await serveService(deps.bus, MCP_TOOLS_RPC, impl, {
          logger,
          version: MCP_BROKER_VERSION,
          description: 'AgentLoop MCP client pool: MCP servers as tools',
          redact: (text) => current.redactor.redact(text),
        }),
        // The gateway's /mcp/servers/{id}/authorize, /mcp/oauth/callback, /mcp/servers/authorizations.
        await serveService(
          deps.bus,
          McpOAuth,
          oauthHandlers(() => authorizations),
          {
            logger,
            version: MCP_BROKER_VERSION,
            description: 'AgentLoop MCP broker: OAuth authorization code flow per tenant',
          },
        ),
        // POST /admin/reload (libs/bus cluster-reload.ts).
        await serveClusterReload(deps.bus, { service: MCP_TOOLS_RPC.queue, instance, logger, reload }),
        // POST /admin/mcp/servers/{id}/reload (libs/bus mcp-admin.ts).
        await serveMcpServerReload(deps.bus, { instance, logger, restart: restartServer }),
      ];
      logger.info(
        { servers: Object.keys(current.servers), configured: Object.keys(current.file.servers).length, lazy_startup: current.file.global.lazy_startup },
        'mcp-broker serving',
      );
      startAtBoot(current, logger);
    },
    async stop() {
      await Promise.allSettled(subs.map((s) => s.unsubscribe()));
      subs = [];
      await current.pool.closeAll();
    },
  };
}

/** What one reading of mcp_servers.yaml builds: the enabled servers, their pool and the tool provider over it. */
interface Generation {
  file: McpFile;
  servers: Record<string, McpServerEntry>;
  pool: McpPool;
  provider: McpToolProvider;
  redactor: ReturnType<typeof mcpPathRedactor>;
}

function generation(deps: McpBrokerDeps, logger: Logger, file: McpFile, workspaces: WorkspaceManager): Generation {
  const servers: Record<string, McpServerEntry> = Object.fromEntries(Object.entries(file.servers).filter(([, s]) => s.enabled));
  const disabledServers: Record<string, McpServerEntry> = Object.fromEntries(Object.entries(file.servers).filter(([, s]) => !s.enabled));
  const pool = new McpPool(servers, {
    logger,
    startTimeoutMs: deps.config.MCP_START_TIMEOUT_MS,
    idleTimeoutMs: deps.config.MCP_IDLE_TIMEOUT_MS,
    callMaxMs: deps.config.MCP_CALL_MAX_MS,
    sampler: busSampler(deps.bus, (id) => servers[id]?.sampling),
    ...(deps.oauthStore ? { tenantOAuth: tenantOAuthFor(deps.oauthStore, deps.env) } : {}),
    ...(deps.env ? { env: deps.env } : {}),
    ...(deps.backoff?.baseMs !== undefined ? { backoffBaseMs: deps.backoff.baseMs } : {}),
    ...(deps.backoff?.maxMs !== undefined ? { backoffMaxMs: deps.backoff.maxMs } : {}),
    // Orchestrators drop their cached listings: a server that finished starting after a run listed
    // its tools is offered on that run's next model call (libs/bus mcp-admin.ts).
    onToolsChanged: (server) =>
      void publishMcpToolsChanged(deps.bus, server).catch((err: unknown) =>
        logger.warn({ mcp_server: server, err: errorMessage(err) }, 'could not announce changed MCP tools'),
      ),
  });
  // The broker's error text names no host path (stderr tails, spawn errors): see redaction.ts.
  const redactor = mcpPathRedactor(servers, deps.config.MCP_CONFIG ?? (deps.file ? undefined : DEFAULT_MCP_CONFIG_PATH));
  const provider = new McpToolProvider(servers, pool, {
    logger,
    callTimeoutMs: deps.config.MCP_CALL_TIMEOUT_MS,
    maxResultBytes: deps.config.MCP_MAX_RESULT_BYTES,
    redact: (text) => redactor.redact(text),
    disabledServers,
    media: { workspaces, maxBytes: deps.config.MCP_MAX_MEDIA_BYTES },
    maxResultMediaBytes: deps.config.MCP_MAX_RESULT_MEDIA_BYTES,
  });
  return { file, servers, pool, provider, redactor };
}

/**
 * Starts servers in the background at boot (and after a reload): every server with
 * `lazy_startup: false`, and with lazy startup still the ones a run lists without being asked
 * (server or some tool `always_available`), so a slow start (`npx -y` downloading the package)
 * is not missed by the first run. Other servers start on first use.
 */
function startAtBoot(g: Generation, logger: Logger): void {
  const ids = Object.entries(g.servers)
    .filter(([, s]) => !g.file.global.lazy_startup || s.always_available || Object.values(s.tools).some((t) => t.enabled && t.always_available))
    // A server called with each tenant's token starts on a tenant's first call.
    .filter(([id]) => !g.pool.perTenant(id))
    .map(([id]) => id);
  for (const id of ids) {
    g.pool.connect(id).catch((err: unknown) => logger.warn({ mcp_server: id, err: errorMessage(err) }, 'MCP server did not start at boot'));
  }
}
