import { AgentLoopError, type Logger } from '@agentloop/core';
import { ToolDisabledError, ToolError, ToolTimeoutError, UnknownToolError } from './errors.js';
import type { ToolContext, ToolDefinition, ToolRegistry } from './registry.js';
import { validateWorkspaceId, type Workspace, type WorkspaceManager } from '@agentloop/workspace';

export interface ExecuteInput {
  tenantId: string;
  threadId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  /** JSON object of arguments; empty means `{}`. */
  argsJson: string;
  /** The tool was @mentioned: it may be a disabled tool from the discovered pool. */
  onDemand?: boolean;
  /** The caller is a sub-agent: only tools available_to_subagent run. */
  subagent?: boolean;
}

export interface ExecuteOptions {
  /** Aborted when the caller's deadline passes (HandlerContext.signal). */
  signal?: AbortSignal;
  /** Absolute deadline, epoch ms, from the request. */
  deadline?: number;
}

export interface ToolFailure {
  code: string;
  message: string;
  retryable: boolean;
}

export interface ToolResult {
  /** Text for the ToolMessage; starts with "Error: " when `error` is set. */
  content: string;
  error?: ToolFailure;
  durationMs: number;
  /** This call may be repeated without further effect (known once the arguments parsed). */
  idempotent: boolean;
}

export interface ToolExecutorOptions {
  registry: ToolRegistry;
  workspaces: WorkspaceManager;
  logger: Logger;
  /** Budget of a call whose request carries no deadline. */
  defaultTimeoutMs: number;
}

/**
 * Runs one tool call behind an error boundary (seed 000 §4.3.1): it always
 * resolves to a result, never rejects. Failures become "Error: ..." content
 * plus a structured `error`; a tool that outlives its budget is abandoned.
 */
export class ToolExecutor {
  constructor(private readonly opts: ToolExecutorOptions) {}

  async execute(input: ExecuteInput, options: ExecuteOptions = {}): Promise<ToolResult> {
    const started = performance.now();
    // Built on first use: most calls log nothing at the default level, and a child logger with its
    // six bindings per call showed in the profile (issue 9).
    let child: Logger | undefined;
    const log = (): Logger =>
      (child ??= this.opts.logger.child({
        component: 'executor',
        tool: input.toolName,
        tenant: input.tenantId,
        thread_id: input.threadId,
        run_id: input.runId,
        tool_call_id: input.toolCallId,
      }));
    let workspace: Workspace | undefined;
    let idempotent = false;
    try {
      const def = this.resolve(input);
      const args = this.opts.registry.parseArgs(def, input.argsJson);
      idempotent = this.opts.registry.isIdempotent(def, args);
      const now = Date.now();
      const budgetMs = this.budgetMs(options.deadline, now);
      const budgetEnds = now + budgetMs;
      const content = await runWithBudget(input.toolName, budgetMs, options.signal, log, async (signal) => {
        let ensured: Workspace | undefined;
        if (def.usesWorkspace !== false) ensured = await this.opts.workspaces.ensure(input.tenantId, input.threadId, { runId: input.runId });
        else {
          // The ids are held to the same shape as when the workspace is created.
          validateWorkspaceId('tenant_id', input.tenantId);
          validateWorkspaceId('thread_id', input.threadId);
        }
        workspace = ensured;
        signal.throwIfAborted();
        const ctx: ToolContext = {
          get workspace() {
            // Declared not to use it: the workspace was not created, and a write must not go unseen.
            if (!ensured) throw new Error(`tool ${input.toolName} declared that it does not use the workspace`);
            return ensured;
          },
          signal,
          deadline: budgetEnds,
          get logger() {
            return log();
          },
          tenantId: input.tenantId,
          threadId: input.threadId,
          runId: input.runId,
          toolCallId: input.toolCallId,
        };
        return def.execute(args, ctx);
      });
      const durationMs = elapsed(started);
      if (this.opts.logger.isLevelEnabled('debug')) log().debug({ duration_ms: durationMs }, 'tool succeeded');
      return { content, durationMs, idempotent };
    } catch (err) {
      const error = this.describe(err, workspace);
      const durationMs = elapsed(started);
      if (error.code === 'TOOL_FAILED') log().error({ err, duration_ms: durationMs }, `tool failed: ${error.message}`);
      else log().warn({ code: error.code, duration_ms: durationMs }, `tool failed: ${error.message}`);
      return { content: `Error: ${error.message}`, error, durationMs, idempotent };
    }
  }

  /**
   * The tool this call may run: an enabled one, or with `onDemand` any
   * discovered one (seed 000 §2.6, @mention loading); sub-agents only get
   * tools available_to_subagent. The definition is taken once, so a reload
   * during the call does not affect it.
   */
  /**
   * Whether running this call twice has no additional effect (the tool's metadata, or its
   * per-call `isIdempotent`). False when the call would fail to resolve or parse: the safe answer.
   */
  isIdempotentCall(input: ExecuteInput): boolean {
    try {
      const def = this.resolve(input);
      return this.opts.registry.isIdempotent(def, this.opts.registry.parseArgs(def, input.argsJson));
    } catch {
      return false;
    }
  }

  private resolve(input: ExecuteInput): ToolDefinition {
    const record = this.opts.registry.lookup(input.toolName);
    if (!record) throw new UnknownToolError(input.toolName);
    if (!record.enabled && !input.onDemand) throw new ToolDisabledError(input.toolName);
    if (input.subagent && !record.metadata.availableToSubagent) {
      throw new ToolError('PERMISSION_DENIED', `Tool ${input.toolName} is not available to sub-agents`);
    }
    return record.def;
  }

  /**
   * With a deadline, the tool must end a little before it so the "timed out"
   * reply still reaches the caller: 10% of the remaining time, 20 ms to 1 s.
   */
  private budgetMs(deadline: number | undefined, now: number): number {
    if (deadline === undefined) return this.opts.defaultTimeoutMs;
    const remaining = deadline - now;
    const margin = Math.min(1_000, Math.max(20, Math.floor(remaining * 0.1)));
    return Math.max(0, remaining - margin);
  }

  private describe(err: unknown, workspace: Workspace | undefined): ToolFailure {
    // AgentLoopErrors (ToolError and friends) carry a message written for the model.
    if (err instanceof AgentLoopError) return { code: err.code, message: this.redact(err.message, workspace), retryable: err.retryable };
    const name = err instanceof Error ? err.name : 'Error';
    const text = err instanceof Error ? err.message : typeof err === 'string' ? err : safeJson(err);
    return { code: 'TOOL_FAILED', message: `Unexpected error: ${name}: ${this.redact(text, workspace)}`, retryable: false };
  }

  private redact(text: string, workspace: Workspace | undefined): string {
    return workspace ? workspace.redact(text) : this.opts.workspaces.redact(text);
  }
}

/**
 * Races the tool against its budget and the caller's signal. The tool gets an
 * AbortSignal to stop early; one that ignores it is abandoned (its eventual
 * result is dropped and logged).
 */
async function runWithBudget(
  tool: string,
  budgetMs: number,
  outer: AbortSignal | undefined,
  log: () => Logger,
  fn: (signal: AbortSignal) => Promise<string>,
): Promise<string> {
  const ctrl = new AbortController();
  const expire = () => ctrl.abort(new ToolTimeoutError(tool, budgetMs));
  const timer = setTimeout(expire, budgetMs);
  // No budget left (deadline already passed): fail without starting the tool.
  if (outer?.aborted || budgetMs <= 0) expire();
  else outer?.addEventListener('abort', expire, { once: true });

  const abandoned = new Promise<never>((_, reject) => {
    if (ctrl.signal.aborted) reject(ctrl.signal.reason);
    else ctrl.signal.addEventListener('abort', () => reject(ctrl.signal.reason), { once: true });
  });
  abandoned.catch(() => undefined);
  const work = ctrl.signal.aborted ? abandoned : Promise.resolve().then(() => fn(ctrl.signal));
  let settled = false;
  work.then(
    () => {
      if (settled) log().info('abandoned tool finished after its budget');
    },
    () => undefined,
  );
  try {
    return await Promise.race([work, abandoned]);
  } finally {
    settled = true;
    clearTimeout(timer);
    outer?.removeEventListener('abort', expire);
  }
}

function elapsed(started: number): number {
  return Math.max(0, Math.round(performance.now() - started));
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
