import { ToolRunner, WorkspaceRequest_Action, type ToolSpec } from '@agentloop/proto';
import {
  Headers,
  MCP_TOOLS_RPC,
  SKILL_TOOLS_RPC,
  TOOL_RUNNER_RPC,
  serviceClient,
  subscribeToolProgress,
  type Bus,
  type Subscription,
  type ToolProgress,
  type ServiceBinding,
  type ServiceClient,
  type ServiceShape,
} from '@agentloop/bus';
import { TimeoutError, UnavailableError, errorMessage } from '@agentloop/core';

type ToolProtocol = 'listTools' | 'executeTool';

/**
 * A service that offers tools over the tool protocol (ListTools / ExecuteTool): the tool-runner,
 * and beside it the skill sandbox (`skill`, `run_skill_script`) and the MCP broker.
 */
export interface ToolProvider {
  name: string;
  /** Its subjects and deadlines (@agentloop/bus services.ts). */
  rpc: ServiceBinding<ServiceShape<typeof ToolRunner>, ToolProtocol>;
  /** Answers replay-only / re-execute requests from its replay log (only the tool-runner does). */
  replays: boolean;
  /** The model still works when this provider is absent (its tools are just not offered). */
  optional: boolean;
  /** It publishes the progress of its calls (libs/bus tool-progress.ts): worth a subscription per call. */
  reportsProgress?: boolean;
}

export const TOOL_RUNNER_PROVIDER: ToolProvider = { name: 'tool-runner', rpc: TOOL_RUNNER_RPC, replays: true, optional: false };
export const SKILLS_PROVIDER: ToolProvider = { name: 'skill-sandbox', rpc: SKILL_TOOLS_RPC, replays: false, optional: true };
export const MCP_PROVIDER: ToolProvider = { name: 'mcp-broker', rpc: MCP_TOOLS_RPC, replays: false, optional: true, reportsProgress: true };

/** A workspace file as the tool-runner lists it. */
export interface WorkspaceFileInfo {
  /** Workspace-relative POSIX path, e.g. "outputs/report.md". */
  path: string;
  name: string;
  size: number;
  modifiedMs: number;
  /** Kind by extension (seed 001 §3.1). */
  type: string;
}

export interface ToolCallInput {
  tenantId: string;
  threadId: string;
  runId: string;
  toolCallId: string;
  name: string;
  args: Record<string, unknown>;
  /** The tool was @mentioned in the latest user message: it may come from the discovered pool (disabled tools too). */
  onDemand?: boolean;
  /** The caller is a delegated agent: tools without available_to_subagent are refused. */
  subagent?: boolean;
  /** Thread whose workspace the call uses (a delegated agent's: its parent's); default `threadId`. */
  workspaceThreadId?: string;
  /** MCP: the user's answer to the elicitation an earlier attempt of this call raised (JSON {action, content?}). */
  elicitationAnswerJson?: string;
}

/**
 * What the model may see this call (seed 000 §2.6): tools allowed by the
 * active skill, tools @mentioned in the latest user message (loaded on
 * demand from the discovered pool), and whether the caller is a delegated agent.
 */
export interface ToolVisibility {
  allowed?: readonly string[];
  mentioned?: readonly string[];
  subagent?: boolean;
}

/** What an MCP server asked the user during a call (proto ToolElicitation): the run interrupts with it. */
export interface ToolCallElicitation {
  server: string;
  message: string;
  mode: 'form' | 'url';
  /** JSON Schema of the form (mode form), else null. */
  requestedSchema: unknown;
  /** The page to open (mode url), else null. */
  url: string | null;
}

export interface ToolCallResult {
  content: string;
  isError: boolean;
  errorCode?: string;
  /** Images and audio of the result (MCP tools), for a model slot that accepts them (graph/tool-media.ts). */
  media?: ToolMedia[];
  /** The call needs the user's input (an MCP elicitation): no result yet; retried with the answer. */
  elicitation?: ToolCallElicitation;
}

/** One image or audio block of a tool result, base64 as it is kept in the ToolMessage. */
export interface ToolMedia {
  kind: 'image' | 'audio';
  mimeType: string;
  base64: string;
  /** Workspace-relative path the provider saved it to; '' when it did not. */
  savedPath: string;
}

/**
 * The orchestrator's side of the tool-runner contract. A tool failure, a
 * timeout or an absent tool-runner all become a result whose content starts
 * with "Error:" — the loop goes on and the model decides (seed 000 §4.3.1).
 */
export class ToolClient {
  /** Short-lived list cache per tenant and visibility; bounded so it cannot grow without limit. */
  private readonly cache = new Map<string, { at: number; tools: ToolSpec[] }>();
  private readonly idempotent = new Map<string, boolean>();
  /** Display names (seed 003) from the latest listings, for the `tools` stream events. */
  private readonly displayNames = new Map<string, string>();
  /** Which provider offered each tool name in the latest listings. */
  private readonly owner = new Map<string, ToolProvider>();
  private readonly providers: readonly ToolProvider[];
  /** One typed client per provider, in the order of `providers`. */
  private readonly clients: ReadonlyMap<ToolProvider, ServiceClient<ServiceShape<typeof ToolRunner>, ToolProtocol>>;
  private readonly runner: ServiceClient<ServiceShape<typeof ToolRunner>>;

  constructor(
    private readonly bus: Bus,
    private readonly opts: { callTimeoutMs: number; listTimeoutMs?: number; listCacheMs?: number; providers?: readonly ToolProvider[] },
  ) {
    this.providers = opts.providers ?? [TOOL_RUNNER_PROVIDER];
    this.clients = new Map(this.providers.map((p) => [p, serviceClient(bus, p.rpc)]));
    this.runner = serviceClient(bus, ToolRunner);
  }

  /**
   * The tools visible to the model (seed 000 §2.6): the tool-runner's
   * persistent tools (enabled and available_to_subagent), then `allowed`,
   * then `mentioned` (loaded on demand, disabled tools included). Cached
   * briefly per tenant and visibility.
   */
  async listTools(tenantId: string, visibility: ToolVisibility = {}): Promise<ToolSpec[]> {
    const now = Date.now();
    const request = listRequest(tenantId, visibility);
    const key = JSON.stringify([tenantId, request.allowed, request.mentioned, request.subagent]);
    const hit = this.cache.get(key);
    if (hit && now - hit.at < (this.opts.listCacheMs ?? 5_000)) return hit.tools;
    // Every provider is asked in parallel; the first one listing a name owns it. An optional
    // provider that does not answer only means its tools are not offered this time.
    const replies = await Promise.allSettled(
      this.providers.map((p) => this.clients.get(p)!.listTools(request.wire, { timeoutMs: this.opts.listTimeoutMs ?? 5_000, tenantId })),
    );
    const tools: ToolSpec[] = [];
    const seen = new Set<string>();
    replies.forEach((r, i) => {
      const provider = this.providers[i]!;
      if (r.status === 'rejected') {
        if (!provider.optional) throw r.reason;
        return;
      }
      for (const t of r.value.tools) {
        if (seen.has(t.name)) continue;
        seen.add(t.name);
        tools.push(t);
        this.owner.set(t.name, provider);
      }
    });
    for (const t of tools) {
      this.idempotent.set(t.name, t.metadata?.idempotent === true);
      if (t.metadata?.displayName) this.displayNames.set(t.name, t.metadata.displayName);
    }
    if (this.cache.size >= 256) this.cache.clear();
    this.cache.set(key, { at: now, tools });
    return tools;
  }

  /** Drops the cached listings (a cluster reload: the providers' tools changed); returns how many were dropped. */
  forgetListings(): number {
    const n = this.cache.size;
    this.cache.clear();
    return n;
  }

  /** Creates the workspace; with `runId`, the tool-runner also records what outputs/ holds at the run's first start. */
  async ensureWorkspace(tenantId: string, threadId: string, timeoutMs = 10_000, runId = ''): Promise<void> {
    const res = await this.runner.workspace({ tenantId, threadId, action: WorkspaceRequest_Action.ENSURE, runId }, { timeoutMs, tenantId });
    if (res.error) throw new Error(`Workspace for thread ${threadId} could not be prepared: ${res.error.message}`);
  }

  async deleteWorkspace(tenantId: string, threadId: string, timeoutMs = 10_000): Promise<void> {
    await this.runner.workspace({ tenantId, threadId, action: WorkspaceRequest_Action.DELETE }, { timeoutMs, tenantId });
  }

  /**
   * Regular files of a workspace's folders modified since a time (a run's
   * artifacts). Throws when the tool-runner reports an error or does not answer.
   */
  async listFiles(
    tenantId: string,
    threadId: string,
    opts: { folders?: readonly string[]; runId?: string; modifiedSinceMs?: number; maxFiles?: number; timeoutMs?: number } = {},
  ): Promise<{ files: WorkspaceFileInfo[]; truncated: boolean }> {
    const req = {
      tenantId,
      threadId,
      action: WorkspaceRequest_Action.LIST,
      folders: [...(opts.folders ?? ['outputs'])],
      modifiedSinceMs: BigInt(Math.max(0, Math.floor(opts.modifiedSinceMs ?? 0))),
      maxFiles: opts.maxFiles ?? 0,
      runId: opts.runId ?? '',
    };
    const res = await this.runner.workspace(req, { timeoutMs: opts.timeoutMs ?? 10_000, tenantId });
    if (res.error) throw new Error(`Files of thread ${threadId} could not be listed: ${res.error.message}`);
    return {
      truncated: res.truncated,
      files: res.files.map((f) => ({ path: f.path, name: f.name, size: Number(f.size), modifiedMs: Number(f.modifiedMs), type: f.type })),
    };
  }

  /**
   * Where a path given by a model really lands in a workspace (the tool-runner resolves it as a
   * write would: normalization, symlinks, containment) and, for an existing file, its last
   * `tailBytes` bytes. The approval rules judge this instead of the model's spelling of the path.
   * Throws when the tool-runner does not answer; a refused path comes back as `refused`.
   */
  async inspectPath(
    tenantId: string,
    threadId: string,
    filePath: string,
    opts: { tailBytes?: number; timeoutMs?: number } = {},
  ): Promise<{ relativePath: string; exists: boolean; tail: string } | { refused: string }> {
    const req = { tenantId, threadId, action: WorkspaceRequest_Action.INSPECT, path: filePath, tailBytes: opts.tailBytes ?? 0 };
    const res = await this.runner.workspace(req, { timeoutMs: opts.timeoutMs ?? 5_000, tenantId });
    if (res.error || res.relativePath === '') return { refused: res.error?.message || 'the path could not be resolved' };
    return { relativePath: res.relativePath, exists: res.exists, tail: res.tail };
  }

  /** The name clients show while the tool runs ("Running Python code…"), when its listing gave one. */
  displayName(name: string): string | undefined {
    return this.displayNames.get(name);
  }

  /** Whether a tool declared itself idempotent in its metadata (unknown tools: false, the safe answer). */
  isIdempotent(name: string): boolean {
    return this.idempotent.get(name) === true;
  }

  /**
   * What became of a call sent before a crash, asked without executing it:
   * the recorded reply, 'not-executed' when no tool-runner ever received it,
   * or undefined when that is unknown (still running, its tool-runner died
   * mid-way, or no tool-runner answers).
   */
  async recordedOutcome(call: ToolCallInput): Promise<ToolCallResult | 'not-executed' | undefined> {
    // Only a provider with a replay log can tell; asking another would run the call.
    if (!this.providerOf(call.name).replays) return undefined;
    const res = await this.execute(call, undefined, { [Headers.replayOnly]: '1' });
    if (res.errorCode === 'NOT_EXECUTED') return 'not-executed';
    if (res.errorCode === 'IN_PROGRESS' || res.errorCode === 'TIMEOUT' || res.errorCode === 'UNAVAILABLE' || res.errorCode === 'INTERNAL') return undefined;
    return res;
  }

  /** Runs an idempotent call again although an earlier attempt started it. */
  reexecute(call: ToolCallInput): Promise<ToolCallResult> {
    return this.execute(call, undefined, this.providerOf(call.name).replays ? { [Headers.reexecute]: '1' } : {});
  }

  /** The provider of a tool (from the latest listings); unknown names go to the first provider. */
  providerOf(name: string): ToolProvider {
    return this.owner.get(name) ?? this.providers[0]!;
  }

  /**
   * Runs a call on its provider. `onProgress` receives the progress the provider reports while the
   * call runs (the MCP broker relays its servers' progress notifications, libs/bus tool-progress.ts).
   */
  async execute(
    call: ToolCallInput,
    traceparent?: string,
    extraHeaders: Record<string, string> = {},
    onProgress?: (p: ToolProgress) => void,
  ): Promise<ToolCallResult> {
    const provider = this.providerOf(call.name);
    let progress: Subscription | undefined;
    if (onProgress && provider.reportsProgress && call.runId && call.toolCallId) {
      // Subscribed before the request is sent, so the first notification is not missed.
      progress = await subscribeToolProgress(this.bus, call, onProgress).catch(() => undefined);
    }
    try {
      return await this.executeOn(provider, call, traceparent, extraHeaders);
    } finally {
      await progress?.unsubscribe();
    }
  }

  private async executeOn(
    provider: ToolProvider,
    call: ToolCallInput,
    traceparent: string | undefined,
    extraHeaders: Record<string, string>,
  ): Promise<ToolCallResult> {
    const req = {
      tenantId: call.tenantId,
      // The wire's thread_id names the workspace; the ledger keeps the caller's own thread.
      threadId: call.workspaceThreadId || call.threadId,
      runId: call.runId,
      toolCallId: call.toolCallId,
      toolName: call.name,
      argsJson: JSON.stringify(call.args ?? {}),
      onDemand: call.onDemand ?? false,
      subagent: call.subagent ?? false,
      elicitationAnswerJson: call.elicitationAnswerJson ?? '',
    };
    const headers: Record<string, string> = {
      [Headers.idempotencyKey]: `${call.runId}:${call.toolCallId}`,
      ...extraHeaders,
    };
    if (traceparent) headers[Headers.traceparent] = traceparent;
    try {
      let res = await this.clients.get(provider)!.executeTool(req, { timeoutMs: this.opts.callTimeoutMs, tenantId: call.tenantId, headers });
      // A name no listing offered went to the first provider; when that one does not know it,
      // another may still own it and explain (e.g. the MCP broker: "Tool X is disabled in the MCP configuration").
      if (!this.owner.has(call.name) && isUnknownTool(res)) {
        for (const other of this.providers.filter((p) => p !== provider)) {
          const alt = await this.clients
            .get(other)!
            .executeTool(req, { timeoutMs: this.opts.callTimeoutMs, tenantId: call.tenantId, headers })
            .catch(() => undefined);
          if (alt && !isUnknownTool(alt)) {
            res = alt;
            break;
          }
        }
      }
      if (res.error) {
        const content = res.content.startsWith('Error:') ? res.content : `Error: ${res.error.message}`;
        return { content, isError: true, errorCode: res.error.code };
      }
      if (res.elicitation) return { content: '', isError: false, elicitation: elicitationOf(res.elicitation) };
      const media = toolMedia(res.media);
      return { content: res.content, isError: false, ...(media.length > 0 ? { media } : {}) };
    } catch (err) {
      if (err instanceof TimeoutError) {
        return {
          content: `Error: Tool ${call.name} did not answer within ${this.opts.callTimeoutMs} ms (the ${provider.name} may have crashed or be overloaded). Its effect, if any, is unknown.`,
          isError: true,
          errorCode: 'TIMEOUT',
        };
      }
      if (err instanceof UnavailableError) {
        return { content: `Error: No ${provider.name} is available to run ${call.name}; try again later.`, isError: true, errorCode: 'UNAVAILABLE' };
      }
      return { content: `Error: Tool ${call.name} failed: ${errorMessage(err)}`, isError: true, errorCode: 'INTERNAL' };
    }
  }
}

/** The reply's media blocks of a known kind, base64-encoded for the ToolMessage. */
function toolMedia(blocks: readonly { kind: string; mimeType: string; data: Uint8Array; savedPath: string }[] | undefined): ToolMedia[] {
  return (blocks ?? [])
    .filter((b) => (b.kind === 'image' || b.kind === 'audio') && b.data.length > 0)
    .map((b) => ({ kind: b.kind as ToolMedia['kind'], mimeType: b.mimeType, base64: Buffer.from(b.data).toString('base64'), savedPath: b.savedPath }));
}

/** A provider's answer that it has no tool of that name at all. */
function isUnknownTool(res: { error?: { code: string; message: string } | undefined }): boolean {
  return res.error?.code === 'NOT_FOUND' && /^Unknown tool\b/.test(res.error.message);
}

/** The list request with normalised (sorted, de-duplicated) visibility fields. */
function listRequest(tenantId: string, v: ToolVisibility) {
  const norm = (xs: readonly string[] | undefined) => [...new Set(xs ?? [])].sort();
  const allowed = norm(v.allowed);
  const mentioned = norm(v.mentioned);
  const subagent = v.subagent ?? false;
  // `visible` always: the reply is then the same tier (persistent → allowed → mentioned)
  // whether or not this message mentions anything.
  return { allowed, mentioned, subagent, wire: { tenantId, allowed, mentioned, subagent, visible: true } };
}

/** The wire's ToolElicitation as the graph uses it (the schema parsed; a schema that is not JSON is kept as text). */
function elicitationOf(e: { server: string; message: string; mode: string; requestedSchemaJson: string; url: string }): ToolCallElicitation {
  let requestedSchema: unknown = null;
  if (e.requestedSchemaJson) {
    try {
      requestedSchema = JSON.parse(e.requestedSchemaJson) as unknown;
    } catch {
      requestedSchema = e.requestedSchemaJson;
    }
  }
  return { server: e.server, message: e.message, mode: e.mode === 'url' ? 'url' : 'form', requestedSchema, url: e.url || null };
}
