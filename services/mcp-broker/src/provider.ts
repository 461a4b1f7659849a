import { AgentLoopError, errorMessage, JsonDepthError, MAX_JSON_DEPTH, parseJsonWithin, type Logger } from '@agentloop/core';
import { ToolMetadataSchema, ToolSpecSchema, create, type ToolSpec } from '@agentloop/proto';
import type { McpServerEntry } from './config.js';
import type { WorkspaceManager } from '@agentloop/workspace';
import { CallElicitation, parseElicitationAnswer, type ElicitationAnswer, type ElicitationRequest } from './elicitation.js';
import { DisabledMcpToolError, McpArgumentsError, McpCallTimeoutError, McpServerUnavailableError, UnknownMcpToolError } from './errors.js';
import { formatResult, type CallToolResultLike } from './format.js';
import { resultMedia, saveResultMedia, type MediaBlock, type MediaTarget } from './media.js';
import { buildCatalog, candidateServers, disabledToolNamed, sanitizeName, serverPrefix, type Catalog, type CatalogTool } from './naming.js';
import { resourceArgsProblem, resourceRequest, resourceToolName, resourceTools } from './resource-tools.js';
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
  /** The thread whose workspace receives the result's images, audio and blobs (outputs/mcp/). */
  threadId?: string;
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
  /** The user's answer to the elicitation an earlier attempt of this call raised (JSON, elicitation.ts). */
  elicitationAnswerJson?: string;
}

export interface ExecuteOutput {
  /** For the model; starts with "Error:" when `error` is set. */
  content: string;
  error?: { code: string; message: string; retryable: boolean };
  durationMs: number;
  idempotent: boolean;
  /** The result's images and audio, bounded, for a model that can take them (media.ts `resultMedia`). */
  media?: MediaBlock[];
  /** The call needs the user's input (the server's elicitation): the run interrupts and retries it with the answer. */
  elicitation?: ElicitationRequest;
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
  /** Servers switched off in the configuration: their tools answer "disabled", not "unknown". */
  disabledServers?: Readonly<Record<string, McpServerEntry>>;
  /** Where binary result parts are saved (media.ts); without it they are only summarized. */
  media?: { workspaces: WorkspaceManager; maxBytes: number };
  /** Total decoded bytes of the images and audio passed back with one result (0: none). Default 0. */
  maxResultMediaBytes?: number;
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
    const catalog = withResourceTools(buildCatalog(this.servers, this.pool.knownTools()), this.servers, (id) => this.pool.hasResources(id));
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
    if (needed.length > 0) await this.startAll(needed, input.deadline, input.tenantId);

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
      const resolved = await this.resolve(input.toolName, input.tenantId);
      idempotent = resolved.tool.idempotent;
      const args = parseArgs(input.toolName, input.argsJson);
      let answer: ElicitationAnswer | undefined;
      if (input.elicitationAnswerJson) {
        try {
          answer = parseElicitationAnswer(input.elicitationAnswerJson);
        } catch (err) {
          throw new McpArgumentsError(input.toolName, errorMessage(err));
        }
      }
      // Only a tool that may run again can wait for the user: the run retries it with the answer.
      const elicitation = new CallElicitation({ retryable: resolved.tool.idempotent, ...(answer ? { answer } : {}) });
      let deadline: number | undefined;
      if (input.deadline !== undefined) {
        deadline = input.deadline - replyMargin(input.deadline - Date.now());
        if (deadline <= Date.now()) throw new McpCallTimeoutError(input.toolName, resolved.tool.server, 0);
      }
      const { served, raw, note } = await this.callWithFallback(resolved, args, input, deadline, elicitation);
      if (elicitation.needed) return { content: '', durationMs: Date.now() - started, idempotent, elicitation: elicitation.needed };
      if (elicitation.refused) throw new McpArgumentsError(input.toolName, elicitation.refused);
      const saved =
        this.opts.media && input.threadId
          ? await saveResultMedia(raw.content, this.mediaTarget(input.tenantId, input.threadId), served.server, sanitizeName(served.tool.name))
          : undefined;
      const readTool = this.pool.hasResources(served.server) ? resourceToolName(served.server, 'read_resource') : undefined;
      const { text, isError } = formatResult(raw, this.opts.maxResultBytes, {
        ...(saved ? { saved } : {}),
        ...(readTool ? { readResourceTool: readTool } : {}),
      });
      const declined = elicitation.declinedNote(input.toolName);
      const content = [note, text, declined].filter((part) => part !== undefined).join('\n');
      const durationMs = Date.now() - started;
      if (isError) return { content: `Error: ${content}`, error: { code: 'TOOL_FAILED', message: content, retryable: false }, durationMs, idempotent };
      const media = resultMedia(raw.content, saved, {
        maxBlockBytes: this.opts.media?.maxBytes ?? 0,
        maxTotalBytes: this.opts.maxResultMediaBytes ?? 0,
      });
      if (media.omitted > 0) this.opts.logger.info({ tool: input.toolName, omitted: media.omitted }, 'MCP media over the size limits: named in the text only');
      return { content, durationMs, idempotent, ...(media.blocks.length > 0 ? { media: media.blocks } : {}) };
    } catch (err) {
      const redact = this.opts.redact ?? ((text: string) => text);
      const wire =
        err instanceof AgentLoopError
          ? { code: err.code, message: redact(err.message), retryable: err.retryable }
          : { code: 'INTERNAL', message: `The MCP broker failed: ${redact(errorMessage(err))}`, retryable: false };
      return { content: `Error: ${wire.message}`, error: wire, durationMs: Date.now() - started, idempotent };
    }
  }

  /**
   * Calls the tool; while its server is unavailable (not started, in backoff, unreachable), the
   * same MCP tool of the server's `fallback` (and of that one's, in turn) instead (seed 004
   * "Error Recovery"). The note tells the model which server answered and why.
   */
  private async callWithFallback(
    first: Resolved,
    args: Record<string, unknown>,
    input: ExecuteInput,
    deadline: number | undefined,
    elicitation: CallElicitation,
  ): Promise<{ served: CatalogTool; raw: CallToolResultLike; note?: string }> {
    let t = first.tool;
    let down = first.unavailable;
    const skipped: string[] = [];
    const visited = [t.server];
    for (;;) {
      if (!down) {
        try {
          return {
            served: t,
            raw: await this.callOne(t, args, input, deadline, elicitation),
            ...(skipped.length > 0 ? { note: (this.opts.redact ?? String)(fallbackNote(t.server, skipped)) } : {}),
          };
        } catch (err) {
          if (!(err instanceof McpServerUnavailableError)) throw err;
          down = err;
        }
      }
      const next = await this.fallbackOf(t, input.tenantId, visited);
      if (!next) throw down;
      skipped.push(`${t.server} is unavailable (${down.message})`);
      t = next.tool;
      visited.push(t.server);
      down = next.unavailable;
    }
  }

  private async callOne(
    t: CatalogTool,
    args: Record<string, unknown>,
    input: ExecuteInput,
    deadline: number | undefined,
    elicitation: CallElicitation,
  ): Promise<CallToolResultLike> {
    const callOpts: Parameters<McpPool['callTool']>[3] = {
      exposedName: input.toolName,
      timeoutMs: this.servers[t.server]?.timeout_ms ?? this.opts.callTimeoutMs,
      readOnly: t.tool.annotations?.readOnlyHint === true,
      idempotent: t.idempotent,
      tenantId: input.tenantId,
    };
    if (t.builtin) {
      const problem = resourceArgsProblem(t.builtin, args);
      if (problem) throw new McpArgumentsError(input.toolName, problem);
      callOpts.request = resourceRequest(t.builtin, args);
    }
    if (deadline !== undefined) callOpts.deadline = deadline;
    if (input.signal) callOpts.signal = input.signal;
    if (input.onProgress) callOpts.onProgress = input.onProgress;
    if (input.runId) {
      callOpts.caller = {
        tenantId: input.tenantId,
        runId: input.runId,
        toolCallId: input.toolCallId ?? '',
        toolName: input.toolName,
        elicit: (server, params) => elicitation.respond(server, params),
      };
    }
    return (await this.pool.callTool(t.server, t.tool.name, args, callOpts)) as CallToolResultLike;
  }

  /** The same MCP tool on `t.server`'s fallback server, started if need be (its own failure carried along). */
  private async fallbackOf(t: CatalogTool, tenantId: string, visited: readonly string[]): Promise<Resolved | undefined> {
    const id = this.servers[t.server]?.fallback;
    if (!id || visited.includes(id) || !this.servers[id] || !this.allows(id, tenantId)) return undefined;
    let unavailable: McpServerUnavailableError | undefined;
    try {
      await this.pool.tools(id, tenantId);
    } catch (err) {
      unavailable = err instanceof McpServerUnavailableError ? err : new McpServerUnavailableError(errorMessage(err));
    }
    const same = this.catalog().tools.find((c) => c.server === id && (t.builtin ? c.builtin === t.builtin : !c.builtin && c.tool.name === t.tool.name));
    if (same) return { tool: same, ...(unavailable ? { unavailable } : {}) };
    // Its tools are unknown (it never started): try it under the same MCP name, or go on down the chain.
    if (unavailable) return { tool: { ...t, server: id, config: undefined, alwaysAvailable: false }, unavailable };
    return undefined;
  }

  private mediaTarget(tenantId: string, threadId: string): MediaTarget {
    const media = this.opts.media!;
    return { workspaces: media.workspaces, tenantId, threadId, maxBytes: media.maxBytes };
  }

  /**
   * The offered tool `name` stands for, starting the servers that may own it when it is not known
   * yet. A server that fails to start but has a fallback yields the tool as far as its name tells
   * (`unavailable` set), so the call can go to the fallback.
   */
  private async resolve(name: string, tenantId: string): Promise<Resolved> {
    let t = this.catalog().byName.get(name);
    if (t && !this.allows(t.server, tenantId)) throw new UnknownMcpToolError(name);
    if (!t) {
      const candidates = candidateServers(this.servers, name).filter((id) => this.allows(id, tenantId) && !this.pool.knownTools().has(id));
      const results = await Promise.allSettled(candidates.map((id) => this.pool.tools(id, tenantId)));
      t = this.catalog().byName.get(name);
      if (t && !this.allows(t.server, tenantId)) throw new UnknownMcpToolError(name);
      if (!t) {
        const failedAt = results.findIndex((r) => r.status === 'rejected');
        if (failedAt >= 0) {
          const reason = (results[failedAt] as PromiseRejectedResult).reason as unknown;
          const err = reason instanceof McpServerUnavailableError ? reason : new McpServerUnavailableError(errorMessage(reason));
          const server = candidates[failedAt]!;
          const guessed = this.servers[server]?.fallback ? guessTool(server, this.servers[server], name) : undefined;
          if (guessed) return { tool: guessed, unavailable: err };
          throw reason instanceof AgentLoopError ? reason : err;
        }
      }
    }
    if (t) return { tool: t };
    const disabled = disabledToolNamed(this.servers, name);
    if (disabled && this.allows(disabled.server, tenantId)) throw new DisabledMcpToolError(name);
    // A server switched off (`enabled: false`) has none of its tools callable, by prefix or alias.
    const off = this.opts.disabledServers ?? {};
    if (candidateServers(off, name).some((id) => off[id]?.tenants === undefined || off[id].tenants.includes(tenantId))) throw new DisabledMcpToolError(name);
    throw new UnknownMcpToolError(name);
  }

  /** Starts servers in parallel, waiting at most until shortly before the deadline; later ones join the next listing. */
  private async startAll(ids: readonly string[], deadline: number | undefined, tenantId: string): Promise<void> {
    const starts = ids.map((id) =>
      this.pool.tools(id, tenantId).then(
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

/** A tool resolved for a call; `unavailable`: its server is known to be down (try the fallback). */
interface Resolved {
  tool: CatalogTool;
  unavailable?: McpServerUnavailableError;
}

function fallbackNote(server: string, skipped: readonly string[]): string {
  return `[answered by fallback MCP server ${server}: ${skipped.join('; ')}]`;
}

/** The catalog plus the built-in resource tools of each server announcing resources. */
function withResourceTools(catalog: Catalog, servers: Readonly<Record<string, McpServerEntry>>, hasResources: (id: string) => boolean): Catalog {
  const extra = Object.keys(servers)
    .filter((id) => hasResources(id))
    .flatMap((id) => resourceTools(id, servers[id]!, catalog.byName));
  if (extra.length === 0) return catalog;
  const byName = new Map(catalog.byName);
  for (const t of extra) byName.set(t.name, t);
  return { ...catalog, tools: [...catalog.tools, ...extra], byName };
}

/** The tool a name stands for on a server whose tools are not known (by alias, else the `<server>_` prefix). */
function guessTool(server: string, entry: McpServerEntry, name: string): CatalogTool | undefined {
  const aliased = Object.entries(entry.tools).find(([, t]) => t.alias === name)?.[0];
  const toolName = aliased ?? (name.startsWith(serverPrefix(server)) ? name.slice(serverPrefix(server).length) : undefined);
  if (!toolName) return undefined;
  return { name, server, tool: { name: toolName, inputSchema: { type: 'object' } }, config: entry.tools[toolName], alwaysAvailable: false, idempotent: false };
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
