import { readFileSync } from 'node:fs';
import { Headers, type Bus, type BusMessage, type Subscription } from '@agentloop/bus';
import { AgentLoopError, errorMessage, type Logger } from '@agentloop/core';
import {
  ErrorSchema,
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  ToolMetadataSchema,
  ToolSpecSchema,
  create,
  fromBinary,
  toBinary,
  type ToolSpec,
} from '@agentloop/proto';
import { loadMcpFile, type McpBrokerConfig, type McpFile, type McpServerEntry } from './config.js';
import { McpPool, type McpTool } from './pool.js';

export const MCP_SUBJECTS = { toolsList: 'agentloop.mcp.tools.list', toolsExecute: 'agentloop.mcp.tools.execute' } as const;
export const MCP_BROKER_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

class McpError extends AgentLoopError {}

/** `<server>_<tool>` made a valid tool name. */
export function exposedName(server: string, tool: string, entry: McpServerEntry): string {
  const alias = entry.tools[tool]?.alias;
  if (alias) return alias;
  return `${server}_${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
}

/** An MCP CallToolResult as text for the model, capped. */
export function formatResult(result: { content?: unknown; isError?: boolean; structuredContent?: unknown }, maxBytes: number): { text: string; isError: boolean } {
  const parts: string[] = [];
  for (const c of Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : []) {
    if (c.type === 'text' && typeof c.text === 'string') parts.push(c.text);
    else if (c.type === 'image' || c.type === 'audio') parts.push(`[${c.type}: ${String(c.mimeType ?? 'unknown')}, ${typeof c.data === 'string' ? Math.floor((c.data.length * 3) / 4) : 0} bytes]`);
    else if (c.type === 'resource' || c.type === 'resource_link') {
      const r = (c.resource ?? c) as Record<string, unknown>;
      parts.push(typeof r.text === 'string' ? r.text : `[resource: ${String(r.uri ?? 'unknown')}]`);
    }
  }
  let text = parts.join('\n');
  if (text === '' && result.structuredContent !== undefined) text = JSON.stringify(result.structuredContent);
  if (Buffer.byteLength(text) > maxBytes) text = `${Buffer.from(text).subarray(0, maxBytes).toString('utf8')}\n[result truncated at ${maxBytes} bytes]`;
  return { text: text || '(no content)', isError: result.isError === true };
}

export interface McpBroker {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly pool: McpPool;
}

/**
 * The MCP broker (seed 001 Part 6): a pool of MCP client connections (stdio, SSE, streamable HTTP)
 * started lazily, whose tools it offers over the tool protocol — so the orchestrator treats it as
 * one more tool provider. Tools marked always_available are listed for every run (starting their
 * server on the first listing); the others only when @mentioned (by name or by server id).
 */
export async function createMcpBroker(deps: { bus: Bus; logger: Logger; config: McpBrokerConfig; file?: McpFile; env?: NodeJS.ProcessEnv }): Promise<McpBroker> {
  const logger = deps.logger.child({ component: 'mcp-broker' });
  const file = deps.file ?? (await loadMcpFile(deps.config.MCP_CONFIG));
  const servers = Object.fromEntries(Object.entries(file.servers).filter(([, s]) => s.enabled));
  const pool = new McpPool(servers, { logger, startTimeoutMs: deps.config.MCP_START_TIMEOUT_MS, ...(deps.env ? { env: deps.env } : {}) });
  let subs: Subscription[] = [];

  const allowed = (id: string, tenant: string) => {
    const t = servers[id]?.tenants;
    return !t || t.includes(tenant);
  };

  const tenantOf = (msg: BusMessage, body: string) => {
    const header = msg.headers[Headers.tenant];
    if (body && header && body !== header) throw new McpError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
    return body || header || '';
  };

  /** Which server and tool an exposed name stands for (from config aliases and the naming rule). */
  const resolve = (name: string): { server: string; tool: string } | undefined => {
    for (const [id, s] of Object.entries(servers)) {
      for (const [tool, t] of Object.entries(s.tools)) if (t.alias === name) return { server: id, tool };
    }
    const ids = Object.keys(servers).sort((a, b) => b.length - a.length);
    for (const id of ids) if (name.startsWith(`${id}_`)) return { server: id, tool: name.slice(id.length + 1) };
    return undefined;
  };

  const spec = (server: string, t: McpTool, entry: McpServerEntry): ToolSpec =>
    create(ToolSpecSchema, {
      name: exposedName(server, t.name, entry),
      description: `[${server}] ${entry.tools[t.name]?.description ?? t.description ?? t.name}`,
      parametersJsonSchema: JSON.stringify(t.inputSchema ?? { type: 'object' }),
      metadata: create(ToolMetadataSchema, {
        category: 'mcp',
        tags: [server],
        idempotent: t.annotations?.idempotentHint === true || t.annotations?.readOnlyHint === true,
        displayName: `${server}: ${t.name}`,
        availableToSubagent: true,
        enabled: true,
      }),
    });

  const listTools = async (tenant: string, mentioned: readonly string[]): Promise<ToolSpec[]> => {
    const out: ToolSpec[] = [];
    for (const [id, entry] of Object.entries(servers)) {
      if (!allowed(id, tenant)) continue;
      const alwaysNames = Object.entries(entry.tools).filter(([, t]) => t.enabled && t.always_available);
      const mentionedHere = mentioned.some((m) => m === id || resolve(m)?.server === id);
      // Nothing of this server to show: do not start it.
      if (!entry.always_available && alwaysNames.length === 0 && !mentionedHere) continue;
      let tools: McpTool[];
      try {
        tools = (await pool.get(id)).tools;
      } catch (err) {
        logger.warn({ mcp_server: id, err: errorMessage(err) }, 'MCP server tools not listed');
        continue;
      }
      for (const t of tools) {
        const cfg = entry.tools[t.name];
        if (cfg?.enabled === false) continue;
        const name = exposedName(id, t.name, entry);
        const always = entry.always_available || cfg?.always_available === true;
        if (always || mentionedHere) out.push(spec(id, t, entry));
        else if (mentioned.includes(name)) out.push(spec(id, t, entry));
      }
    }
    return out;
  };

  const execute = async (tenant: string, name: string, argsJson: string): Promise<{ text: string; isError: boolean }> => {
    const target = resolve(name);
    if (!target || !servers[target.server]) throw new McpError('NOT_FOUND', `Unknown tool: ${name}`);
    const entry = servers[target.server]!;
    if (!allowed(target.server, tenant)) throw new McpError('NOT_FOUND', `Unknown tool: ${name}`);
    if (entry.tools[target.tool]?.enabled === false) throw new McpError('NOT_FOUND', `Tool ${name} is disabled`);
    let args: Record<string, unknown>;
    try {
      const v: unknown = argsJson ? JSON.parse(argsJson) : {};
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('expected a JSON object');
      args = v as Record<string, unknown>;
    } catch (err) {
      throw new McpError('INVALID_ARGUMENT', `Invalid arguments for ${name}: ${errorMessage(err)}`);
    }
    let conn;
    try {
      conn = await pool.get(target.server);
    } catch (err) {
      throw new McpError('UNAVAILABLE', errorMessage(err));
    }
    const timeout = entry.timeout_ms ?? deps.config.MCP_CALL_TIMEOUT_MS;
    try {
      const res = await conn.client.callTool({ name: target.tool, arguments: args }, undefined, { timeout });
      return formatResult(res as { content?: unknown; isError?: boolean; structuredContent?: unknown }, deps.config.MCP_MAX_RESULT_BYTES);
    } catch (err) {
      const msg = errorMessage(err);
      // A protocol-level tool error keeps the connection; anything else (timeout, closed) drops it.
      if (!/MCP error -32602|MCP error -32601/.test(msg)) pool.drop(target.server);
      const timedOut = /timed out|timeout/i.test(msg);
      throw new McpError(timedOut ? 'TIMEOUT' : 'TOOL_FAILED', `MCP tool ${name} failed: ${msg}`);
    }
  };

  return {
    pool,
    async start() {
      if (subs.length > 0) return;
      const opts = { queue: 'mcp-broker', version: MCP_BROKER_VERSION, description: 'AgentLoop MCP client pool' };
      subs.push(
        await deps.bus.serve(MCP_SUBJECTS.toolsList, opts, async (msg) => {
          const req = fromBinary(ListToolsRequestSchema, msg.data);
          let tools: ToolSpec[] = [];
          try {
            tools = await listTools(tenantOf(msg, req.tenantId), req.mentioned);
          } catch (err) {
            logger.warn({ err: errorMessage(err) }, 'listing MCP tools failed');
          }
          return toBinary(ListToolsResponseSchema, create(ListToolsResponseSchema, { tools }));
        }),
        await deps.bus.serve(MCP_SUBJECTS.toolsExecute, opts, async (msg) => {
          try {
            const req = fromBinary(ExecuteToolRequestSchema, msg.data);
            const started = Date.now();
            const res = await execute(tenantOf(msg, req.tenantId), req.toolName, req.argsJson);
            logger.info({ tool: req.toolName, ms: Date.now() - started, error: res.isError || undefined }, 'MCP tool call');
            return toBinary(
              ExecuteToolResponseSchema,
              create(ExecuteToolResponseSchema, res.isError ? { content: `Error: ${res.text}`, error: { code: 'TOOL_FAILED', message: res.text, retryable: false } } : { content: res.text }),
            );
          } catch (err) {
            const wire =
              err instanceof AgentLoopError
                ? create(ErrorSchema, { code: err.code, message: err.message, retryable: err.retryable })
                : create(ErrorSchema, { code: 'INTERNAL', message: `The MCP broker failed: ${errorMessage(err)}`, retryable: false });
            return toBinary(ExecuteToolResponseSchema, create(ExecuteToolResponseSchema, { content: `Error: ${wire.message}`, error: wire }));
          }
        }),
      );
      logger.info({ servers: Object.keys(servers), lazy: file.global.lazy_startup }, 'mcp-broker serving');
      if (!file.global.lazy_startup) for (const id of Object.keys(servers)) void pool.get(id).catch(() => undefined);
    },
    async stop() {
      await Promise.allSettled(subs.map((s) => s.unsubscribe()));
      subs = [];
      await pool.closeAll();
    },
  };
}
