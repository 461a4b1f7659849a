import { readFileSync } from 'node:fs';
import { MCP_TOOLS_RPC, serveService, type Bus, type Subscription } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { DEFAULT_MCP_CONFIG_PATH, loadMcpFile, type McpBrokerConfig, type McpFile, type McpServerEntry } from './config.js';
import { executeTool } from './handlers/execute.js';
import { listTools } from './handlers/list.js';
import { McpPool, type McpServerStatus } from './pool.js';
import { McpToolProvider } from './provider.js';
import { mcpPathRedactor } from './redaction.js';

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
}

/**
 * The MCP broker (seed 001 Part 6): a pool of MCP client connections (stdio, SSE, streamable
 * HTTP) started lazily, whose tools it offers over the tool protocol — so the orchestrator treats
 * it as one more tool provider. Each replica keeps its own connections.
 */
export async function createMcpBroker(deps: McpBrokerDeps): Promise<McpBroker> {
  const logger = deps.logger.child({ component: 'mcp-broker' });
  const file = deps.file ?? (await loadMcpFile(deps.config.MCP_CONFIG));
  const servers: Record<string, McpServerEntry> = Object.fromEntries(Object.entries(file.servers).filter(([, s]) => s.enabled));
  const pool = new McpPool(servers, {
    logger,
    startTimeoutMs: deps.config.MCP_START_TIMEOUT_MS,
    idleTimeoutMs: deps.config.MCP_IDLE_TIMEOUT_MS,
    callMaxMs: deps.config.MCP_CALL_MAX_MS,
    ...(deps.env ? { env: deps.env } : {}),
    ...(deps.backoff?.baseMs !== undefined ? { backoffBaseMs: deps.backoff.baseMs } : {}),
    ...(deps.backoff?.maxMs !== undefined ? { backoffMaxMs: deps.backoff.maxMs } : {}),
  });
  // The broker's error text names no host path (stderr tails, spawn errors): see redaction.ts.
  const redactor = mcpPathRedactor(servers, deps.config.MCP_CONFIG ?? (deps.file ? undefined : DEFAULT_MCP_CONFIG_PATH));
  const provider = new McpToolProvider(servers, pool, {
    logger,
    callTimeoutMs: deps.config.MCP_CALL_TIMEOUT_MS,
    maxResultBytes: deps.config.MCP_MAX_RESULT_BYTES,
    redact: (text) => redactor.redact(text),
  });
  let subs: Subscription[] = [];

  return {
    pool,
    provider,
    status: () => pool.status(),
    async start() {
      if (subs.length > 0) return;
      const impl = { listTools: listTools(provider, logger), executeTool: executeTool(provider, logger) };
      subs = [
        await serveService(deps.bus, MCP_TOOLS_RPC, impl, {
          logger,
          version: MCP_BROKER_VERSION,
          description: 'AgentLoop MCP client pool: MCP servers as tools',
          redact: (text) => redactor.redact(text),
        }),
      ];
      logger.info(
        { servers: Object.keys(servers), configured: Object.keys(file.servers).length, lazy_startup: file.global.lazy_startup },
        'mcp-broker serving',
      );
      if (!file.global.lazy_startup) {
        for (const id of Object.keys(servers)) {
          pool.connect(id).catch((err: unknown) => logger.warn({ mcp_server: id, err: errorMessage(err) }, 'MCP server did not start at boot'));
        }
      }
    },
    async stop() {
      await Promise.allSettled(subs.map((s) => s.unsubscribe()));
      subs = [];
      await pool.closeAll();
    },
  };
}
