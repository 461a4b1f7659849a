import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { errorMessage, type Logger } from '@agentloop/core';
import { expandVars, type McpServerEntry } from './config.js';

/** A tool as an MCP server lists it. */
export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { idempotentHint?: boolean; readOnlyHint?: boolean };
}

interface Connection {
  client: Client;
  tools: McpTool[];
}

/** The environment a stdio server gets: its own `env` entries plus PATH — never the broker's secrets. */
export function serverEnvironment(entry: McpServerEntry, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = { PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  if (env.HOME) out.HOME = env.HOME;
  for (const [k, v] of Object.entries(entry.env)) out[k] = expandVars(v, env);
  return out;
}

/**
 * One MCP client connection per server, started on first need (seed 001 §6.2). Concurrent first
 * uses share one start; a connection that closes or fails is dropped and started again on next use,
 * after a backoff when it keeps failing.
 */
export class McpPool {
  private readonly live = new Map<string, Promise<Connection>>();
  private readonly failures = new Map<string, { count: number; until: number; message: string }>();

  constructor(
    private readonly servers: Readonly<Record<string, McpServerEntry>>,
    private readonly opts: { logger: Logger; startTimeoutMs: number; env?: NodeJS.ProcessEnv },
  ) {}

  /** Started servers' ids (for tests and status). */
  running(): string[] {
    return [...this.live.keys()];
  }

  get(id: string): Promise<Connection> {
    const existing = this.live.get(id);
    if (existing) return existing;
    const entry = this.servers[id];
    if (!entry) return Promise.reject(new Error(`unknown MCP server ${id}`));
    const fail = this.failures.get(id);
    if (fail && Date.now() < fail.until) {
      return Promise.reject(new Error(`MCP server ${id} is unavailable (${fail.message}); retrying in ${Math.ceil((fail.until - Date.now()) / 1000)} s`));
    }
    const started = this.start(id, entry);
    this.live.set(id, started);
    started.then(
      () => this.failures.delete(id),
      (err: unknown) => {
        this.live.delete(id);
        const count = (this.failures.get(id)?.count ?? 0) + 1;
        // Immediate retry after the first failure, then exponential backoff up to a minute.
        const delay = count <= 1 ? 0 : Math.min(60_000, 500 * 2 ** (count - 2));
        this.failures.set(id, { count, until: Date.now() + delay, message: errorMessage(err) });
      },
    );
    return started;
  }

  /** Drops a connection (after a crash or transport error); the next use starts the server again. */
  drop(id: string): void {
    const c = this.live.get(id);
    this.live.delete(id);
    void c?.then((conn) => conn.client.close()).catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    const all = [...this.live.values()];
    this.live.clear();
    await Promise.allSettled(all.map(async (c) => (await c).client.close()));
  }

  private async start(id: string, entry: McpServerEntry): Promise<Connection> {
    const log = this.opts.logger.child({ mcp_server: id });
    const client = new Client({ name: 'agentloop-mcp-broker', version: '1' });
    const env = this.opts.env ?? process.env;
    const headers = Object.fromEntries(Object.entries(entry.headers).map(([k, v]) => [k, expandVars(v, env)]));
    const transport =
      entry.connection_mode === 'stdio'
        ? new StdioClientTransport({ command: entry.command!, args: entry.args, env: serverEnvironment(entry, env), ...(entry.cwd ? { cwd: entry.cwd } : {}), stderr: 'ignore' })
        : entry.connection_mode === 'sse'
          ? new SSEClientTransport(new URL(entry.url!), { requestInit: { headers } })
          : new StreamableHTTPClientTransport(new URL(entry.url!), { requestInit: { headers } });
    log.info({ mode: entry.connection_mode, command: entry.command, url: entry.url }, 'starting MCP server');
    const timeout = entry.start_timeout_ms ?? this.opts.startTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      const { tools } = await client.listTools(undefined, { timeout });
      client.onclose = () => {
        log.warn('MCP server connection closed; it restarts on next use');
        this.live.delete(id);
      };
      log.info({ tools: tools.map((t) => t.name) }, 'MCP server started');
      return { client, tools: tools as McpTool[] };
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'MCP server did not start');
      await client.close().catch(() => undefined);
      throw new Error(`MCP server ${id} did not start: ${errorMessage(err)}`, { cause: err });
    }
  }
}
