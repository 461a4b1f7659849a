import { AgentLoopError, errorMessage, JsonDepthError, MAX_JSON_DEPTH, parseJsonWithin, type Logger } from '@agentloop/core';
import { ToolMetadataSchema, ToolSpecSchema, create, type ToolSpec } from '@agentloop/proto';
import type { McpServerEntry } from './config.js';
import { DisabledMcpToolError, McpArgumentsError, McpCallTimeoutError, McpServerUnavailableError, UnknownMcpToolError } from './errors.js';
import { formatResult, type CallToolResultLike } from './format.js';
import { buildCatalog, candidateServers, disabledToolNamed, serverPrefix, type Catalog, type CatalogTool } from './naming.js';
import type { McpPool, McpProgress } from './pool.js';

export interface ListInput {
  tenantId: string;
  /** Names the user @mentioned: exposed tool names or server ids. */
  mentioned?: readonly string[];
  /** Names the active skill allows; treated like mentions (a skill may name an MCP tool or server). */
  allowed?: readonly string[];
  /** Absolute deadline (epoch ms): servers still starting by then are left out of this listing. */
  deadline?: number;
}

export interface ListOutput {
  tools: ToolSpec[];
  /** Requested names that are neither an offered MCP tool nor a server id visible to the tenant. */
  notFound: string[];
}

export interface ExecuteInput {
  tenantId: string;
  toolName: string;
  argsJson: string;
  /** Absolute deadline (epoch ms) of the request; the call is abandoned in time to answer before it. */
  deadline?: number;
  signal?: AbortSignal;
  /** The calling run (sampling and elicitation requests of the server are attributed to it). */
  runId?: string;
  toolCallId?: string;
  /** Progress notifications of the server for this call (they also keep it alive, pool.ts). */
  onProgress?: (p: McpProgress) => void;
}

export interface ExecuteOutput {
  /** For the model; starts with "Error:" when `error` is set. */
  content: string;
  error?: { code: string; message: string; retryable: boolean };
  durationMs: number;
  idempotent: boolean;
}

export interface McpToolProviderOptions {
  logger: Logger;
  callTimeoutMs: number;
  maxResultBytes: number;
  /**
   * Applied to the broker's own error messages before they reach the model (host paths → names,
   * redaction.ts); tool results, the server's answer, are not touched. Default: none.
   */
  redact?: (text: string) => string;
}

/** Time kept in hand before a caller's deadline so the reply still reaches it (a late reply is dropped). */
function replyMargin(remainingMs: number): number {
  return Math.min(1_000, Math.max(100, Math.floor(remainingMs / 5)));
}

/**
 * The MCP servers' tools over the tool protocol's semantics (seed 001 §6.4-6.5): which tools a run
 * sees (always_available ones, plus @mentioned tools and servers, within the tenant allowlists) and
 * calling one (name → server and MCP tool, arguments, budget, result formatting).
 */
export class McpToolProvider {
  private cached: { version: number; catalog: Catalog } | undefined;
  private readonly reported = new Set<string>();

  constructor(
    private readonly servers: Readonly<Record<string, McpServerEntry>>,
    private readonly pool: McpPool,
    private readonly opts: McpToolProviderOptions,
  ) {}

  /** Whether a tenant may use a server (no `tenants` list: everyone). */
  allows(server: string, tenantId: string): boolean {
    const tenants = this.servers[server]?.tenants;
    return tenants === undefined || tenants.includes(tenantId);
  }

  /** The offered tools of every server whose tool list is known, names de-collided. */
  catalog(): Catalog {
    const version = this.pool.toolsVersion;
    if (this.cached?.version === version) return this.cached.catalog;
    const catalog = buildCatalog(this.servers, this.pool.knownTools());
    for (const c of catalog.collisions) {
      const key = `${c.name}:${c.claimants.join(',')}`;
      if (this.reported.has(key)) continue;
      this.reported.add(key);
      this.opts.logger.warn({ name: c.name, claimants: c.claimants, resolved: c.resolved }, 'MCP tool name collision; generated names get a hash suffix');
    }
    this.cached = { version, catalog };
    return catalog;
  }

  async list(input: ListInput): Promise<ListOutput> {
    const requested = [...new Set([...(input.mentioned ?? []), ...(input.allowed ?? [])])];
    const visible = Object.keys(this.servers).filter((id) => this.allows(id, input.tenantId));
    // Start only servers with something to show: always-available tools, or a mention that may be theirs.
    const needed = visible.filter((id) => {
      if (this.pool.knownTools().has(id)) return false;
      const entry = this.servers[id]!;
      const always = entry.always_available || Object.values(entry.tools).some((t) => t.enabled && t.always_available);
      return always || requested.some((n) => n === id || n.startsWith(serverPrefix(id)) || Object.values(entry.tools).some((t) => t.alias === n));
    });
    if (needed.length > 0) await this.startAll(needed, input.deadline);

    const tools = this.catalog().tools.filter(
      (t) => this.allows(t.server, input.tenantId) && (t.alwaysAvailable || requested.includes(t.server) || requested.includes(t.name)),
    );
    const names = new Set(tools.map((t) => t.name));
    const notFound = requested.filter((n) => !names.has(n) && !visible.includes(n));
    return { tools: tools.map((t) => this.spec(t)), notFound };
  }

  async execute(input: ExecuteInput): Promise<ExecuteOutput> {
    const started = Date.now();
    let idempotent = false;
    try {
      const t = await this.resolve(input.toolName, input.tenantId);
      idempotent = t.idempotent;
      const args = parseArgs(input.toolName, input.argsJson);
      const entry = this.servers[t.server]!;
      const timeoutMs = entry.timeout_ms ?? this.opts.callTimeoutMs;
      let deadline: number | undefined;
      if (input.deadline !== undefined) {
        deadline = input.deadline - replyMargin(input.deadline - Date.now());
        if (deadline <= Date.now()) throw new McpCallTimeoutError(input.toolName, t.server, 0);
      }
      const callOpts: Parameters<McpPool['callTool']>[3] = {
        exposedName: input.toolName,
        timeoutMs,
        readOnly: t.tool.annotations?.readOnlyHint === true,
        idempotent: t.idempotent,
      };
      if (deadline !== undefined) callOpts.deadline = deadline;
      if (input.signal) callOpts.signal = input.signal;
      if (input.onProgress) callOpts.onProgress = input.onProgress;
      if (input.runId) callOpts.caller = { tenantId: input.tenantId, runId: input.runId, toolCallId: input.toolCallId ?? '', toolName: input.toolName };
      const raw = await this.pool.callTool(t.server, t.tool.name, args, callOpts);
      const { text, isError } = formatResult(raw as CallToolResultLike, this.opts.maxResultBytes);
      const durationMs = Date.now() - started;
      if (isError) return { content: `Error: ${text}`, error: { code: 'TOOL_FAILED', message: text, retryable: false }, durationMs, idempotent };
      return { content: text, durationMs, idempotent };
    } catch (err) {
      const redact = this.opts.redact ?? ((text: string) => text);
      const wire =
        err instanceof AgentLoopError
          ? { code: err.code, message: redact(err.message), retryable: err.retryable }
          : { code: 'INTERNAL', message: `The MCP broker failed: ${redact(errorMessage(err))}`, retryable: false };
      return { content: `Error: ${wire.message}`, error: wire, durationMs: Date.now() - started, idempotent };
    }
  }

  /** The offered tool `name` stands for, starting the servers that may own it when it is not known yet. */
  private async resolve(name: string, tenantId: string): Promise<CatalogTool> {
    let t = this.catalog().byName.get(name);
    if (t && !this.allows(t.server, tenantId)) throw new UnknownMcpToolError(name);
    if (!t) {
      const candidates = candidateServers(this.servers, name).filter((id) => this.allows(id, tenantId) && !this.pool.knownTools().has(id));
      const results = await Promise.allSettled(candidates.map((id) => this.pool.tools(id)));
      t = this.catalog().byName.get(name);
      if (t && !this.allows(t.server, tenantId)) throw new UnknownMcpToolError(name);
      if (!t) {
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason instanceof AgentLoopError ? failed.reason : new McpServerUnavailableError(errorMessage(failed.reason));
      }
    }
    if (t) return t;
    const disabled = disabledToolNamed(this.servers, name);
    if (disabled && this.allows(disabled.server, tenantId)) throw new DisabledMcpToolError(name);
    throw new UnknownMcpToolError(name);
  }

  /** Starts servers in parallel, waiting at most until shortly before the deadline; later ones join the next listing. */
  private async startAll(ids: readonly string[], deadline: number | undefined): Promise<void> {
    const starts = ids.map((id) =>
      this.pool.tools(id).then(
        () => undefined,
        (err: unknown) => this.opts.logger.warn({ mcp_server: id, err: errorMessage(err) }, 'MCP server tools not listed'),
      ),
    );
    const all = Promise.all(starts).then(() => undefined);
    if (deadline === undefined) return all;
    const wait = deadline - Date.now() - replyMargin(deadline - Date.now());
    if (wait <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise<void>((r) => (timer = setTimeout(r, wait)))]);
    clearTimeout(timer);
  }

  private spec(t: CatalogTool): ToolSpec {
    const description = t.config?.description ?? t.tool.description ?? t.tool.title ?? t.tool.annotations?.title ?? t.tool.name;
    return create(ToolSpecSchema, {
      name: t.name,
      description: `[${t.server}] ${description}`,
      parametersJsonSchema: JSON.stringify(t.tool.inputSchema ?? { type: 'object' }),
      metadata: create(ToolMetadataSchema, {
        category: 'mcp',
        tags: [t.server],
        idempotent: t.idempotent,
        displayName: `${t.server}: ${t.tool.title ?? t.tool.annotations?.title ?? t.tool.name}`,
        availableToSubagent: true,
        enabled: true,
      }),
    });
  }
}

function parseArgs(tool: string, argsJson: string): Record<string, unknown> {
  let v: unknown;
  try {
    // Depth-limited: the SDK serializes the arguments recursively (a 10,000-deep array is a RangeError).
    v = argsJson.trim() === '' ? {} : parseJsonWithin(argsJson, MAX_JSON_DEPTH);
  } catch (err) {
    if (err instanceof JsonDepthError) throw new McpArgumentsError(tool, `nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects (the limit)`);
    throw new McpArgumentsError(tool, `not valid JSON (${errorMessage(err)})`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new McpArgumentsError(tool, 'expected a JSON object');
  return v as Record<string, unknown>;
}
