/**
 * The MCP server pool: one connection per configured server (stdio, streamable HTTP, SSE), its
 * reconnects, health pings, tool listing and calls. One file (over 400 lines) because a
 * connection's states and the pool's use of them are one state machine.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type Logger } from '@agentloop/core';
import { expandVars, type McpServerEntry } from './config.js';
import { CallLanes } from './call-lanes.js';
import { clientCapabilities, installClientFeatures, type McpCaller, type Sampler } from './client-features.js';
import {
  McpAuthorizationRequiredError,
  McpCallFailedError,
  McpCallTimeoutError,
  McpLinkLostError,
  McpServerUnavailableError,
  McpSessionLostError,
} from './errors.js';
import type { McpTool } from './naming.js';
import { oauthProvider } from './oauth.js';
import { deliverResponsesAfterNotifications } from './progress-order.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { TenantOAuth } from './tenant-oauth.js';

const CLIENT_INFO = { name: 'agentloop-mcp-broker', version: '0.1.0' };
const STDERR_TAIL_BYTES = 2048;
const MAX_TOOL_PAGES = 100;
const HEALTH_PING_MAX_MS = 5_000;
/** Longest a call that keeps reporting progress may run when its caller set no deadline. */
const DEFAULT_CALL_MAX_MS = 600_000;
/** How long a remote server has to answer a ping after its transport reported an error mid-call. */
const LINK_PING_MS = 2_000;
/** Idle time after which a tenant's connection (authorization code servers) is closed when no idle timeout is configured. */
const TENANT_IDLE_MS = 300_000;

/**
 * The key of a connection: the server id, or for a server with the authorization code flow the
 * server id and the tenant (each tenant calls it with its own token, so on its own connection).
 */
function connKey(server: string, tenantId: string | undefined): string {
  return tenantId === undefined ? server : `${server}\u0000${tenantId}`;
}

/**
 * The environment of a stdio server: PATH plus its configured `env` (with `${VAR}` expanded from
 * the broker's environment) — never the broker's own variables, which hold its secrets. (The SDK's
 * StdioClientTransport adds its sudo-like safe set as well: HOME, LOGNAME, SHELL, TERM, USER.)
 */
export function serverEnvironment(server: string, entry: Pick<McpServerEntry, 'env'>, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = { PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  for (const [k, v] of Object.entries(entry.env)) out[k] = expandVars(v, env, `servers.${server}.env.${k}`);
  return out;
}

/** Request headers of a remote server, `${VAR}` expanded. */
export function serverHeaders(server: string, entry: Pick<McpServerEntry, 'headers'>, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(Object.entries(entry.headers).map(([k, v]) => [k, expandVars(v, env, `servers.${server}.headers.${k}`)]));
}

/** The last bytes a stdio server wrote to stderr: the reason it failed, more often than not. */
class StderrTail {
  private text = '';
  push(chunk: Buffer | string): void {
    this.text = (this.text + chunk.toString()).slice(-STDERR_TAIL_BYTES);
  }
  /** ` (stderr: …)`, or '' when the server wrote nothing. */
  suffix(): string {
    const t = this.text.trim().split('\n').slice(-5).join(' | ').slice(-500);
    return t ? ` (stderr: ${t})` : '';
  }
}

/** One live MCP client connection (a spawned process for stdio, a session for sse/http). */
export class McpConnection {
  tools: McpTool[] = [];
  inflight = 0;
  lastUsed = Date.now();
  readonly startedAt = Date.now();
  /** Initialized and listed: a close from now on is a crash unless `closing`. */
  ready = false;
  /** Set when the broker closes it on purpose (idle, drop, shutdown): its close is not a crash. */
  closing = false;
  /** Pending health check after a timed-out call; calls wait for it before using the connection. */
  health: Promise<boolean> | undefined;
  idleTimer: NodeJS.Timeout | undefined;
  /** Abort switches of the calls in flight: a lost link fails them at once (see `verifyLink`). */
  readonly calls = new Set<AbortController>();
  /** The runs the calls in flight were made for: a server's sampling request is attributed to them. */
  readonly callers = new Map<AbortController, McpCaller>();
  /** Pending check of a remote link after a transport error. */
  verifying: Promise<void> | undefined;

  constructor(
    readonly server: string,
    readonly client: Client,
    readonly transport: Transport,
    readonly stderr: StderrTail,
    /** The tenant whose token it uses (authorization code servers), else undefined: shared. */
    readonly tenantId?: string,
  ) {}

  /** Its key in the pool (`connKey`). */
  get key(): string {
    return connKey(this.server, this.tenantId);
  }

  /** The spawned process id (stdio only). */
  get pid(): number | undefined {
    return this.transport instanceof StdioClientTransport ? (this.transport.pid ?? undefined) : undefined;
  }
}

export interface McpPoolOptions {
  logger: Logger;
  /** Default connect + initialize + tools/list budget (a server's `start_timeout_ms` wins). */
  startTimeoutMs: number;
  /** Default idle shutdown (a server's `idle_timeout_ms` wins); 0: never. */
  idleTimeoutMs?: number;
  /** Where `${VAR}` references are looked up (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Restart backoff after repeated failures: base and cap, ms (defaults 1 s and 60 s). */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Hard cap of a call kept alive by progress notifications, without a caller deadline (default 10 min). */
  callMaxMs?: number;
  /** A server's tool list became known or changed (started, or it sent tools/list_changed). */
  onToolsChanged?: (server: string) => void;
  /** Answers servers' sampling requests (servers with `sampling:` set); without it sampling is not declared. */
  sampler?: Sampler;
  /** Tenants' tokens for servers with `oauth: {flow: authorization_code}` (tenant-oauth.ts); without it those servers are unavailable. */
  tenantOAuth?: TenantOAuth;
  /** Idle time after which a tenant's connection is closed when the server sets no idle timeout (default 5 min). */
  tenantIdleTimeoutMs?: number;
}

/** A progress notification of a call in flight (MCP `notifications/progress`). */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface CallOptions {
  /** The tool's name as offered to the model, for messages. */
  exposedName: string;
  /** Time without an answer (or a progress notification) after which the call is abandoned. */
  timeoutMs: number;
  /** Absolute deadline (epoch ms) of the caller; also caps a call kept alive by progress. */
  deadline?: number;
  signal?: AbortSignal;
  onProgress?: (p: McpProgress) => void;
  /**
   * Another request than tools/call made the same way (lane, deadline, failure handling), e.g.
   * resources/read for the built-in resource tools (resource-tools.ts).
   */
  request?: (client: Client, options: RequestOptions) => Promise<unknown>;
  /** The run and tool call the call is made for. */
  caller?: McpCaller;
  /** The calling tenant: a server with the authorization code flow is called with this tenant's token. */
  tenantId?: string;
}

export interface McpServerStatus {
  id: string;
  mode: McpServerEntry['connection_mode'];
  state: 'stopped' | 'starting' | 'running' | 'backoff';
  pid?: number;
  /** Tools of its latest listing (kept while it is stopped). */
  tools?: number;
  failures: number;
  lastError?: string;
  /** Epoch ms before which it is not started again. */
  retryAt?: number;
}

interface Failure {
  count: number;
  retryAt: number;
  lastError: string;
}

/**
 * One MCP client connection per server per replica (seed 001 §6.1-6.2), started on first need.
 * Concurrent first uses share one start (one process); a connection that closes, crashes or sends
 * garbage is dropped and started again on next use, with an exponential backoff after repeated
 * failures (reported as a clear error meanwhile); a call that times out triggers a ping, and a
 * server that does not answer it is restarted; an idle server may be stopped.
 */
export class McpPool {
  private readonly live = new Map<string, Promise<McpConnection>>();
  private readonly conns = new Map<string, McpConnection>();
  private readonly known = new Map<string, McpTool[]>();
  /** Servers whose latest start announced the resources capability (resource-tools.ts). */
  private readonly withResources = new Set<string>();
  private readonly failures = new Map<string, Failure>();
  private readonly closing = new Set<Promise<void>>();
  private stopped = false;
  private version = 0;
  private readonly lanes: CallLanes;
  /** OAuth providers by server: a token outlives a reconnect. */
  private readonly auth = new Map<string, OAuthClientProvider>();

  constructor(
    private readonly servers: Readonly<Record<string, McpServerEntry>>,
    private readonly opts: McpPoolOptions,
  ) {
    this.lanes = new CallLanes((key) => this.servers[key.split('\u0000')[0]!]?.max_concurrent_calls ?? 1);
  }

  /** Ids of the servers with a live connection (started and not closed). */
  running(): string[] {
    return [...new Set([...this.conns.values()].map((c) => c.server))].sort();
  }

  /** Whether a server is called with each tenant's own token (`oauth: {flow: authorization_code}`). */
  perTenant(id: string): boolean {
    const oauth = this.servers[id]?.oauth;
    return oauth !== undefined && oauth.flow === 'authorization_code';
  }

  /** Closes the tenant's connection to a server (its token was revoked or replaced); the next call opens a new one. */
  dropTenant(id: string, tenantId: string, reason: string): void {
    const conn = this.conns.get(connKey(id, tenantId));
    if (conn) this.drop(conn, reason, 'info');
    this.failures.delete(connKey(id, tenantId));
  }

  /** Bumped whenever a tool list becomes known or changes (catalog cache key). */
  get toolsVersion(): number {
    return this.version;
  }

  /** The latest tool lists, by server (servers that never started are absent). */
  knownTools(): ReadonlyMap<string, readonly McpTool[]> {
    return this.known;
  }

  /** Whether the server announced resources when it last started. */
  hasResources(id: string): boolean {
    return this.withResources.has(id);
  }

  status(): McpServerStatus[] {
    return Object.entries(this.servers).map(([id, entry]) => {
      const conn = this.conns.get(id) ?? [...this.conns.values()].find((c) => c.server === id);
      const fail = this.failures.get(id);
      const state: McpServerStatus['state'] = conn ? 'running' : this.live.has(id) ? 'starting' : fail && fail.retryAt > Date.now() ? 'backoff' : 'stopped';
      const s: McpServerStatus = { id, mode: entry.connection_mode, state, failures: fail?.count ?? 0 };
      if (conn?.pid !== undefined) s.pid = conn.pid;
      const tools = this.known.get(id);
      if (tools) s.tools = tools.length;
      if (fail) {
        s.lastError = fail.lastError;
        if (fail.retryAt > Date.now()) s.retryAt = fail.retryAt;
      }
      return s;
    });
  }

  /** The server's tools: from its latest listing when known, else by starting it. */
  async tools(id: string, tenantId?: string): Promise<McpTool[]> {
    return this.known.get(id) ?? (await this.connect(id, tenantId)).tools;
  }

  /**
   * The live connection of a server, started if need be. Concurrent callers share one start; a
   * server in its restart backoff is refused with the last error and when it is tried again.
   */
  async connect(id: string, tenantId?: string): Promise<McpConnection> {
    if (this.stopped) throw new McpServerUnavailableError(`MCP server ${id} is unavailable: the MCP broker is shutting down`);
    const entry = this.servers[id];
    if (!entry) throw new McpServerUnavailableError(`Unknown MCP server: ${id}`);
    const tenant = this.perTenant(id) ? await this.tenantFor(id, tenantId) : undefined;
    const key = connKey(id, tenant);
    const existing = this.live.get(key);
    if (existing) {
      const conn = this.conns.get(key);
      if (conn?.health && !(await conn.health)) return this.connect(id, tenantId); // dropped: start afresh
      return existing;
    }
    const fail = this.failures.get(key);
    if (fail && Date.now() < fail.retryAt) {
      const secs = Math.ceil((fail.retryAt - Date.now()) / 1000);
      throw new McpServerUnavailableError(`MCP server ${id} is unavailable (${fail.lastError}); the broker tries to start it again in ${secs} s`);
    }
    const started = this.start(id, entry, tenant);
    this.live.set(key, started);
    started.then(
      (conn) => {
        if (!conn.closing) this.conns.set(key, conn);
        else if (this.live.get(key) === started) this.live.delete(key);
      },
      (err: unknown) => {
        if (this.live.get(key) === started) this.live.delete(key);
        // A refused authorization is the tenant's to fix, not a failing server: no backoff.
        if (!(err instanceof McpAuthorizationRequiredError)) this.recordFailure(key, errorMessage(err));
      },
    );
    return started;
  }

  /** The tenant of a connection to an authorization code server: one holding a token, else a clear refusal before any network. */
  private async tenantFor(id: string, tenantId: string | undefined): Promise<string> {
    const auth = this.opts.tenantOAuth;
    if (!auth) throw new McpServerUnavailableError(`MCP server ${id} uses the authorization code flow, but this broker has no token store (set MYSQL_URL)`);
    if (tenantId === undefined)
      throw new McpServerUnavailableError(`MCP server ${id} is called with each tenant's own token: it is not started without a tenant`);
    if (!(await auth.hasToken(tenantId, id))) throw new McpAuthorizationRequiredError(id);
    return tenantId;
  }

  /**
   * Calls a tool of a server, in the server's call lane (call-lanes.ts: one call at a time unless
   * the tool is read-only). Failures come back as McpBrokerErrors worded for the model; the
   * connection is dropped (restarted on next use) when it closed, crashed, sent a malformed result
   * or could not be reached, and pinged after a timeout (dropped when the ping fails too). A call
   * whose session a restarted remote server refused was never executed and is made once more on a
   * new session; one whose link broke mid-call is made again only when the tool is idempotent.
   */
  async callTool(id: string, tool: string, args: Record<string, unknown>, opts: CallOptions & { readOnly?: boolean; idempotent?: boolean }): Promise<unknown> {
    const waitSignal = laneWaitSignal(opts);
    try {
      return await this.lanes.run(
        connKey(id, this.perTenant(id) ? opts.tenantId : undefined),
        opts.readOnly === true,
        async () => {
          try {
            return await this.callOnce(id, tool, args, opts);
          } catch (err) {
            const again = err instanceof McpSessionLostError || (err instanceof McpLinkLostError && opts.idempotent === true);
            if (!again) throw err;
            this.opts.logger.info({ mcp_server: id, tool, reason: err.message.slice(0, 300) }, 'MCP call made again on a new connection');
            return await this.callOnce(id, tool, args, opts);
          }
        },
        waitSignal,
      );
    } catch (err) {
      if (waitSignal?.aborted && !opts.signal?.aborted && err === waitSignal.reason) throw new McpCallTimeoutError(opts.exposedName, id, opts.timeoutMs);
      throw err;
    }
  }

  private async callOnce(id: string, tool: string, args: Record<string, unknown>, opts: CallOptions): Promise<unknown> {
    const conn = await this.connect(id, opts.tenantId);
    // A start (or a wait for the lane) that took time comes out of the caller's deadline.
    const budget = opts.deadline === undefined ? opts.timeoutMs : Math.min(opts.timeoutMs, opts.deadline - Date.now());
    if (budget <= 0) throw new McpCallTimeoutError(opts.exposedName, id, opts.timeoutMs);
    conn.inflight++;
    clearTimeout(conn.idleTimer);
    const call = new AbortController();
    const onOuterAbort = () => call.abort(opts.signal?.reason);
    if (opts.signal?.aborted) onOuterAbort();
    else opts.signal?.addEventListener('abort', onOuterAbort, { once: true });
    conn.calls.add(call);
    if (opts.caller) conn.callers.set(call, opts.caller);
    try {
      // A server that reports progress keeps the call alive past its timeout (reset at each
      // notification), up to the caller's deadline or the hard cap (MCP_CALL_MAX_MS).
      const hardCap = opts.deadline === undefined ? (this.opts.callMaxMs ?? DEFAULT_CALL_MAX_MS) : Math.max(budget, opts.deadline - Date.now());
      const requestOptions: RequestOptions = {
        timeout: budget,
        signal: call.signal,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: hardCap,
        onprogress: (p) =>
          opts.onProgress?.({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message ? { message: p.message } : {}) }),
      };
      const result = opts.request
        ? await opts.request(conn.client, requestOptions)
        : await conn.client.callTool({ name: tool, arguments: args }, undefined, requestOptions);
      // A server that answers is healthy again: forget its earlier failures.
      this.failures.delete(conn.key);
      return result;
    } catch (err) {
      throw this.callFailure(conn, opts.exposedName, err, budget, opts.signal, call.signal.reason);
    } finally {
      conn.calls.delete(call);
      conn.callers.delete(call);
      opts.signal?.removeEventListener('abort', onOuterAbort);
      conn.inflight--;
      conn.lastUsed = Date.now();
      this.armIdle(conn);
    }
  }

  /**
   * Stops the server (its calls in flight fail), forgets its failures and backoff, and starts it
   * again (`reload_mcp_server`, seed 004); resolves once it is up, rejects when it does not start.
   */
  async restart(id: string): Promise<McpConnection> {
    if (!this.servers[id]) throw new McpServerUnavailableError(`Unknown MCP server: ${id}`);
    const starting = this.live.get(id);
    if (starting) await starting.catch(() => undefined);
    this.closeServer(id, 'restarted by an operator (reload_mcp_server)');
    return this.connect(id);
  }

  /** Closes every connection of a server (each tenant's, for an authorization code server) and forgets its failures. */
  closeServer(id: string, reason: string): void {
    for (const conn of [...this.conns.values()].filter((c) => c.server === id)) this.drop(conn, reason, 'info');
    for (const key of [...this.failures.keys()].filter((k) => k === id || k.startsWith(`${id}\u0000`))) this.failures.delete(key);
  }

  /** Closes every connection and refuses new starts (broker shutdown). */
  async closeAll(): Promise<void> {
    this.stopped = true;
    const starting = [...this.live.values()];
    await Promise.allSettled(starting);
    for (const conn of [...this.conns.values()]) this.drop(conn, 'the broker is stopping', 'debug');
    await Promise.allSettled([...this.closing]);
  }

  /** Closes a connection on purpose; the next use of its server starts it again. */
  drop(conn: McpConnection, reason: string, level: 'debug' | 'info' | 'warn' = 'warn'): void {
    if (conn.closing) return;
    conn.closing = true;
    clearTimeout(conn.idleTimer);
    if (this.conns.get(conn.key) === conn) {
      this.conns.delete(conn.key);
      this.live.delete(conn.key);
    }
    this.opts.logger[level]({ mcp_server: conn.server, pid: conn.pid, reason }, 'stopping MCP server');
    this.closeQuietly(conn.client);
  }

  private closeQuietly(client: Client): void {
    const p = client.close().catch(() => undefined);
    this.closing.add(p);
    void p.finally(() => this.closing.delete(p));
  }

  private recordFailure(id: string, message: string): void {
    const count = (this.failures.get(id)?.count ?? 0) + 1;
    // The first failure is retried at once (a one-off crash); repeated ones back off exponentially.
    const base = this.opts.backoffBaseMs ?? 1_000;
    const delay = count <= 1 ? 0 : Math.min(this.opts.backoffMaxMs ?? 60_000, base * 2 ** (count - 2));
    this.failures.set(id, { count, retryAt: Date.now() + delay, lastError: message });
  }

  private armIdle(conn: McpConnection): void {
    let idle = this.servers[conn.server]?.idle_timeout_ms ?? this.opts.idleTimeoutMs ?? 0;
    // Connections per tenant are bounded by closing the idle ones even when shared ones stay up.
    if (conn.tenantId !== undefined && idle <= 0) idle = this.opts.tenantIdleTimeoutMs ?? TENANT_IDLE_MS;
    if (idle <= 0 || conn.inflight > 0 || conn.closing) return;
    clearTimeout(conn.idleTimer);
    conn.idleTimer = setTimeout(() => {
      if (conn.inflight === 0) this.drop(conn, `unused for ${idle} ms`, 'info');
    }, idle);
    conn.idleTimer.unref();
  }

  private transport(id: string, entry: McpServerEntry, stderr: StderrTail, tenantId: string | undefined): Transport {
    const env = this.opts.env ?? process.env;
    switch (entry.connection_mode) {
      case 'stdio': {
        const t = new StdioClientTransport({
          command: entry.command!,
          args: entry.args,
          env: serverEnvironment(id, entry, env),
          ...(entry.cwd ? { cwd: entry.cwd } : {}),
          stderr: 'pipe',
        });
        // Read stderr always: an unread pipe fills up and blocks the server.
        t.stderr?.on('data', (chunk: Buffer) => {
          stderr.push(chunk);
          this.opts.logger.debug({ mcp_server: id, stderr: chunk.toString().trimEnd().slice(0, 1000) }, 'MCP server stderr');
        });
        return t;
      }
      case 'sse':
        return new SSEClientTransport(new URL(entry.url!), { requestInit: { headers: serverHeaders(id, entry, env) }, ...this.authOf(id, entry, tenantId) });
      case 'http':
        return new StreamableHTTPClientTransport(new URL(entry.url!), {
          requestInit: { headers: serverHeaders(id, entry, env) },
          ...this.authOf(id, entry, tenantId),
        });
    }
  }

  private authOf(id: string, entry: McpServerEntry, tenantId: string | undefined): { authProvider?: OAuthClientProvider } {
    if (!entry.oauth) return {};
    if (entry.oauth.flow === 'authorization_code') {
      if (!this.opts.tenantOAuth || tenantId === undefined) throw new McpAuthorizationRequiredError(id);
      return { authProvider: this.opts.tenantOAuth.provider(tenantId, id, entry.oauth) };
    }
    let provider = this.auth.get(id);
    if (!provider) {
      provider = oauthProvider(id, entry.oauth, this.opts.env ?? process.env);
      this.auth.set(id, provider);
    }
    return { authProvider: provider };
  }

  private async start(id: string, entry: McpServerEntry, tenantId: string | undefined): Promise<McpConnection> {
    const log = this.opts.logger.child({ mcp_server: id, ...(tenantId !== undefined ? { tenant: tenantId } : {}) });
    const budget = entry.start_timeout_ms ?? this.opts.startTimeoutMs;
    const deadline = Date.now() + budget;
    const stderr = new StderrTail();
    let transport: Transport;
    try {
      transport = this.transport(id, entry, stderr, tenantId);
    } catch (err) {
      throw new McpServerUnavailableError(`MCP server ${id} cannot start: ${errorMessage(err)}`, { cause: err });
    }
    const client = new Client(CLIENT_INFO, {
      capabilities: clientCapabilities(entry, this.opts.sampler),
      listChanged: {
        // The server announced a changed tool list (the closure runs only after `c` exists).
        tools: { autoRefresh: false, debounceMs: 100, onChanged: () => void this.refresh(c) },
      },
    });
    const c = new McpConnection(id, client, transport, stderr, tenantId);
    installClientFeatures(client, id, entry, () => [...c.callers.values()], this.opts.sampler);
    client.onclose = () => this.closed(c);
    client.onerror = (err) => {
      log.debug({ err: errorMessage(err) }, 'MCP transport error');
      // A remote server that dies mid-call is reported only here (the request itself would wait
      // for its whole timeout): check the link and fail the calls in flight at once if it is gone.
      if (entry.connection_mode !== 'stdio') this.verifyLink(c, errorMessage(err));
    };
    log.info({ mode: entry.connection_mode, command: entry.command, args: entry.args, url: entry.url }, 'Starting MCP server');
    try {
      await client.connect(transport, { timeout: budget });
      deliverResponsesAfterNotifications(transport);
      c.tools = await listAllTools(client, Math.max(1, deadline - Date.now()));
    } catch (err) {
      c.closing = true;
      // Let the last stderr bytes arrive: they usually say why.
      await new Promise((r) => setImmediate(r));
      this.closeQuietly(client);
      const refused = authorizationRefusal(id, err);
      if (refused) throw refused;
      const what = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `command not found: ${entry.command}` : errorMessage(err);
      log.warn({ err: what, stderr: stderr.suffix() || undefined }, 'MCP server did not start');
      throw new McpServerUnavailableError(`MCP server ${id} did not start: ${what}${stderr.suffix()}`, { cause: err });
    }
    if (this.stopped) {
      c.closing = true;
      this.closeQuietly(client);
      throw new McpServerUnavailableError(`MCP server ${id} is unavailable: the MCP broker is shutting down`);
    }
    c.ready = true;
    if (client.getServerCapabilities()?.resources) this.withResources.add(id);
    else this.withResources.delete(id);
    this.known.set(id, c.tools);
    this.version++;
    this.opts.onToolsChanged?.(id);
    log.info({ mode: entry.connection_mode, pid: c.pid, tools: c.tools.map((t) => t.name) }, 'MCP server started');
    this.armIdle(c);
    return c;
  }

  /** The server announced a changed tool list. */
  private async refresh(conn: McpConnection): Promise<void> {
    if (conn.closing) return;
    try {
      conn.tools = await listAllTools(conn.client, this.servers[conn.server]?.start_timeout_ms ?? this.opts.startTimeoutMs);
      this.known.set(conn.server, conn.tools);
      this.version++;
      this.opts.onToolsChanged?.(conn.server);
      this.opts.logger.info({ mcp_server: conn.server, tools: conn.tools.map((t) => t.name) }, 'MCP server tools changed');
    } catch (err) {
      this.opts.logger.warn({ mcp_server: conn.server, err: errorMessage(err) }, 'MCP server tools could not be listed again');
    }
  }

  /** The transport closed: on purpose (ignored) or because the server exited or the link broke. */
  private closed(conn: McpConnection): void {
    clearTimeout(conn.idleTimer);
    if (this.conns.get(conn.key) === conn) {
      this.conns.delete(conn.key);
      this.live.delete(conn.key);
    }
    // Closed on purpose, or died while starting (start() reports that failure itself).
    if (conn.closing || !conn.ready) {
      conn.closing = true;
      return;
    }
    conn.closing = true;
    const lived = Date.now() - conn.startedAt;
    // A server that ran fine for a long while before it died starts its backoff afresh.
    if (lived > (this.opts.backoffMaxMs ?? 60_000)) this.failures.delete(conn.key);
    const why = `the server exited or closed the connection${conn.stderr.suffix()}`;
    this.recordFailure(conn.key, why);
    this.opts.logger.warn(
      { mcp_server: conn.server, pid: conn.pid, lived_ms: lived, reason: why },
      'MCP server connection closed; it is restarted on next use',
    );
  }

  private callFailure(conn: McpConnection, tool: string, err: unknown, timeoutMs: number, signal: AbortSignal | undefined, abortReason: unknown): Error {
    const id = conn.server;
    const msg = errorMessage(err).slice(0, 1000);
    const refused = authorizationRefusal(id, err);
    if (refused) {
      // The token was refused (revoked, expired without refresh, a scope the call needs is missing).
      this.drop(conn, "the server refused the tenant's token", 'info');
      return refused;
    }
    if (abortReason instanceof McpLinkLostError) {
      return new McpLinkLostError(`MCP server ${id} ${abortReason.message} during the call to ${tool}; the effect of the call is unknown.`, { cause: err });
    }
    if (isSessionRefused(err)) {
      this.drop(conn, 'the server no longer knows its session (it restarted)', 'info');
      return new McpSessionLostError(`MCP server ${id} no longer knows the session of the call to ${tool} (it restarted); the call was not made.`, {
        cause: err,
      });
    }
    if ((err instanceof McpError && err.code === ErrorCode.RequestTimeout) || signal?.aborted) {
      this.checkHealth(conn, timeoutMs);
      return new McpCallTimeoutError(tool, id, timeoutMs, { cause: err });
    }
    if (conn.closing || (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)) {
      return new McpCallFailedError(
        `MCP server ${id} closed the connection during the call to ${tool} (it exited or crashed)${conn.stderr.suffix()}; the effect of the call is unknown. The server is started again on the next call.`,
        {
          cause: err,
        },
      );
    }
    if (err instanceof McpError) {
      // The server (or the SDK's output-schema check) refused this call; the connection is fine.
      return new McpCallFailedError(`MCP server ${id} rejected the call to ${tool}: ${msg}`, { cause: err });
    }
    if (connectionRefused(err)) {
      // Nothing listens any more: the request never left, so the call may go elsewhere (a fallback).
      this.drop(conn, 'connection refused');
      return new McpServerUnavailableError(`MCP server ${id} cannot be reached (connection refused); the call to ${tool} was not made.`, { cause: err });
    }
    // A result that fails the protocol's schema, or a broken link: start afresh next time.
    this.drop(conn, `call failed: ${msg}`);
    const malformed = err !== null && typeof err === 'object' && 'issues' in err;
    return new McpCallFailedError(
      malformed
        ? `MCP server ${id} sent a malformed result for ${tool}: ${msg}. The server is restarted on the next call.`
        : `MCP server ${id} could not complete the call to ${tool}: ${msg}. The connection is restarted on the next call.`,
      { cause: err },
    );
  }

  /**
   * After a transport error on a remote connection with calls in flight: a server that answers a
   * short ping keeps its connection (the SDK reconnects its streams by itself); one that does not
   * has gone away, so its calls in flight fail now instead of at their timeout, and the
   * connection is dropped (started again on the next call).
   */
  private verifyLink(conn: McpConnection, why: string): void {
    if (!conn.ready || conn.closing || conn.calls.size === 0 || conn.verifying) return;
    conn.verifying = conn.client
      .ping({ timeout: LINK_PING_MS })
      .then(
        () => undefined,
        (err: unknown) => {
          const lost = new McpLinkLostError(`lost the connection (${why.slice(0, 200)}; a ping failed: ${errorMessage(err).slice(0, 200)})`);
          for (const call of conn.calls) call.abort(lost);
          this.drop(conn, `lost the connection: ${why}`);
        },
      )
      .finally(() => {
        conn.verifying = undefined;
      });
  }

  /**
   * After a timed-out call: a server that still answers a ping keeps its connection (the call was
   * just slow, and the SDK told it to cancel); one that does not is hung and is restarted. Calls
   * arriving meanwhile wait for the verdict (see connect).
   */
  private checkHealth(conn: McpConnection, timeoutMs: number): void {
    if (conn.health || conn.closing) return;
    conn.health = conn.client
      .ping({ timeout: Math.max(100, Math.min(HEALTH_PING_MAX_MS, timeoutMs)) })
      .then(
        () => true,
        () => false,
      )
      .then((ok) => {
        conn.health = undefined;
        if (!ok) this.drop(conn, 'it did not answer a ping after a timed-out call');
        return ok;
      });
  }
}

/** The tenant's authorization was refused or is missing (the SDK's UnauthorizedError, or the provider's own refusal). */
function authorizationRefusal(server: string, err: unknown): McpAuthorizationRequiredError | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof McpAuthorizationRequiredError) return e;
    if (e instanceof UnauthorizedError) return new McpAuthorizationRequiredError(server, 'the server refused its token', { cause: err });
  }
  return undefined;
}

/** A remote server answered that it does not know the call's session (HTTP 404, or 400 naming the session). */
function isSessionRefused(err: unknown): boolean {
  if (!(err instanceof StreamableHTTPError)) return false;
  return err.code === 404 || (err.code === 400 && /session/i.test(err.message));
}

/** fetch could not open a connection to a remote server (undici reports the cause's errno code). */
function connectionRefused(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === 'ECONNREFUSED') return true;
  }
  return false;
}

/** Aborts a wait for the server's call lane when the caller's signal aborts or its deadline passes. */
function laneWaitSignal(opts: { deadline?: number; signal?: AbortSignal }): AbortSignal | undefined {
  const signals: AbortSignal[] = [];
  if (opts.signal) signals.push(opts.signal);
  if (opts.deadline !== undefined) signals.push(AbortSignal.timeout(Math.max(0, opts.deadline - Date.now())));
  return signals.length === 0 ? undefined : AbortSignal.any(signals);
}

/** Every page of tools/list. */
async function listAllTools(client: Client, timeoutMs: number): Promise<McpTool[]> {
  const deadline = Date.now() + timeoutMs;
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const res = await client.listTools(cursor ? { cursor } : undefined, { timeout: Math.max(1, deadline - Date.now()) });
    tools.push(...(res.tools as McpTool[]));
    cursor = res.nextCursor;
    if (!cursor) break;
  }
  return tools;
}
