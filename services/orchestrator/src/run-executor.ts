import { Command } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { BaseMessage } from '@langchain/core/messages';
import { create, toBinary, WebhookJobSchema, RunStatus, type RunJob } from '@agentloop/proto';
import type { RunEventStream } from '@agentloop/bus';
import type { JobQueue } from '@agentloop/queue';
import type { Store, RunStatusName, JsonObject } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import { buildAgentGraph, MAX_LOOPS_MAX, MAX_LOOPS_MIN, type AgentGraph, type ModelRouter, type RunContext } from './graph.js';
import type { ModelRegistry, ModelSlot, ResolvedModel } from './models/registry.js';
import type { PromptLanguage } from './prompts.js';
import type { HistoryOptions } from './history.js';
import { parseModelPref } from './routing.js';
import { runUsageFor, ZERO_USAGE, type RunUsage } from './usage.js';
import type { ToolClient } from './tool-client.js';
import { parseInputMessages, toJsonValue } from './serialize.js';
import { RunInputError } from './errors.js';

export interface RunExecutorDeps {
  store: Store;
  events: RunEventStream;
  webhooks: JobQueue;
  tools: ToolClient;
  models: ModelRegistry;
  checkpointer: BaseCheckpointSaver;
  logger: Logger;
  config: {
    maxLoopsDefault: number;
    runTimeoutMs: number;
    webhookAttempts: number;
    webhookBackoffMs: number;
    /** LangGraph durability: "sync" in cluster mode so a crash loses no finished step. */
    durability: 'sync' | 'async' | 'exit';
    /** PROMPT_LANGUAGE (default en). */
    language?: PromptLanguage;
    /** MAX_MESSAGE_HISTORY / MESSAGE_HISTORY_STRATEGY (default 40, clean). */
    history?: Partial<HistoryOptions>;
    /** COMPACT_TOKEN_BUDGET; 0 or absent disables automatic compaction. */
    compactTokenBudget?: number;
    /** AGENT_NAMES (default ["general"]). */
    agentNames?: readonly string[];
  };
}

/** Namespaced checkpoint thread id: a tenant can never address another tenant's checkpoints. */
export const checkpointThreadId = (tenantId: string, threadId: string): string => `${tenantId}:${threadId}`;

const STATUS: Record<RunStatusName, RunStatus> = {
  pending: RunStatus.PENDING,
  running: RunStatus.RUNNING,
  success: RunStatus.SUCCESS,
  error: RunStatus.ERROR,
  timeout: RunStatus.TIMEOUT,
  interrupted: RunStatus.INTERRUPTED,
};

type GraphInput = Parameters<AgentGraph['stream']>[0];

/**
 * Executes one RunJob: status transitions, the LangGraph agent loop with the
 * checkpointer, events per step, final values on the thread, and the webhook.
 */
export class RunExecutor {
  private readonly graph: AgentGraph;
  private readonly contexts = new Map<string, RunContext>();

  constructor(private readonly deps: RunExecutorDeps) {
    this.graph = buildAgentGraph({
      tools: deps.tools,
      checkpointer: deps.checkpointer,
      ledger: deps.store,
      runContext: (id) => this.contexts.get(id),
      ...(deps.config.language ? { language: deps.config.language } : {}),
      ...(deps.config.history ? { history: deps.config.history } : {}),
      ...(deps.config.compactTokenBudget !== undefined ? { compactTokenBudget: deps.config.compactTokenBudget } : {}),
      ...(deps.config.agentNames ? { agentNames: deps.config.agentNames } : {}),
    });
  }

  async execute(job: RunJob, attempt: number, workerSignal: AbortSignal): Promise<void> {
    const { store, events } = this.deps;
    const log = this.deps.logger.child({ run_id: job.runId, thread_id: job.threadId, tenant: job.tenantId });
    const existing = await store.getRun(job.tenantId, job.runId);
    if (!existing) {
      log.warn('run record not found; dropping job');
      return;
    }
    if (['success', 'error', 'timeout', 'interrupted'].includes(existing.status)) {
      log.info({ status: existing.status }, 'run already finished; nothing to do');
      return;
    }
    await store.updateRun(job.tenantId, job.runId, { status: 'running', startedAt: new Date(), incrementAttempts: true }, ['pending', 'running']);
    await store.updateThread(job.tenantId, job.threadId, { status: 'busy' });

    const timeout = AbortSignal.timeout(Number(job.timeoutMs) > 0 ? Number(job.timeoutMs) : this.deps.config.runTimeoutMs);
    const signal = AbortSignal.any([timeout, workerSignal]);
    let status: RunStatusName = 'success';
    let error: { error: string; message: string } | undefined;
    let values: JsonObject | null = null;
    let resolved: ResolvedModel | undefined;
    const cpConfig = { configurable: { thread_id: checkpointThreadId(job.tenantId, job.threadId), run_id: job.runId } };

    try {
      const config = parseJsonObject(job.configJson, 'config');
      const configurable = (config.configurable ?? {}) as JsonObject;
      resolved = this.deps.models.resolve(configurable.model);
      // A slot named in `configurable.model` is a preference like `model_pref`; the scripted provider pins the model.
      const modelPref = parseModelPref(configurable.model_pref, 'config.configurable.model_pref') ?? selectedSlot(configurable.model);
      const router: ModelRouter | undefined =
        resolved.provider === 'scripted' ? undefined : { configured: new Set(this.deps.models.configuredSlots()), forSlot: (slot) => this.deps.models.resolve(slot) };
      log.info({ model: resolved.label, provider: resolved.provider, attempt }, resolved.provider === 'scripted' ? 'run started (SCRIPTED model provider)' : 'run started');
      const maxLoops = parseMaxLoops(configurable.max_loops ?? config.max_loops, this.deps.config.maxLoopsDefault);
      await this.deps.tools.ensureWorkspace(job.tenantId, job.threadId).catch((err: unknown) => {
        log.warn({ err: errorMessage(err) }, 'workspace not prepared; tools will create it on first use');
      });

      this.contexts.set(job.runId, { runId: job.runId, tenantId: job.tenantId, threadId: job.threadId, model: resolved, ...(router ? { router } : {}), modelPref, logger: log, signal });
      // A run that already started once (crash, stalled job, retry) resumes from its checkpoint.
      const input = await this.graphInput(job, cpConfig, maxLoops, Math.max(attempt, existing.attempts));
      const stream = await this.graph.stream(input, {
        ...cpConfig,
        streamMode: ['values', 'updates'],
        recursionLimit: maxLoops * 2 + 10,
        signal,
        durability: this.deps.config.durability,
      });
      for await (const chunk of stream) {
        const [mode, data] = chunk as [string, unknown];
        const json = toJsonValue(mode === 'values' ? publicValues(data as JsonObject, job.runId) : data);
        if (mode === 'values') values = json as JsonObject;
        await events.publish(job.runId, job.threadId, mode, json);
      }
      const final = await this.graph.getState(cpConfig);
      values = toJsonValue(publicValues(final.values as JsonObject, job.runId)) as JsonObject;
    } catch (err) {
      if (timeout.aborted) {
        status = 'timeout';
        error = { error: 'TimeoutError', message: `The run exceeded its time limit of ${Number(job.timeoutMs) || this.deps.config.runTimeoutMs} ms.` };
      } else if (workerSignal.aborted) {
        // Shutdown: leave the run resumable from its last checkpoint; the queue hands it to another worker.
        this.contexts.delete(job.runId);
        log.warn('worker stopping; run left resumable');
        throw err;
      } else {
        status = 'error';
        error = { error: err instanceof Error ? err.name : 'Error', message: errorMessage(err) };
      }
      log.error({ err: error }, 'run failed');
      try {
        const state = await this.graph.getState(cpConfig);
        values = toJsonValue(publicValues(state.values as JsonObject, job.runId)) as JsonObject;
      } catch {
        /* keep the last published values */
      }
    } finally {
      this.contexts.delete(job.runId);
    }

    await this.finish(job, status, values, error, resolved, log);
  }

  private async graphInput(job: RunJob, cpConfig: { configurable: Record<string, unknown> }, maxLoops: number, attempt: number): Promise<GraphInput> {
    if (attempt > 0) {
      // A retry of this run (worker crash, stalled job): continue from its last checkpoint instead of re-adding the input.
      const state = await this.graph.getState(cpConfig);
      // The input sets context_id = run id, so an unfinished checkpoint of this very run is recognisable.
      if ((state.values as { context_id?: unknown }).context_id === job.runId) {
        // Continue from the checkpoint. `state.next` cannot tell "finished" from "a step ran but its
        // successor checkpoint was never written" (tasks with saved writes are not listed), and
        // resuming a finished graph with a null input runs nothing — so always resume.
        return null;
      }
    }
    if (job.commandJson) {
      const command = parseJsonObject(job.commandJson, 'command');
      if ('resume' in command) return new Command({ resume: command.resume }) as unknown as GraphInput;
      throw new RunInputError('command must contain "resume"');
    }
    const rawInput: unknown = job.inputJson ? JSON.parse(job.inputJson) : null;
    const messages: BaseMessage[] = parseInputMessages(rawInput);
    // `input.model_pref` sets the thread's preference (null clears it).
    const hasPref = !!rawInput && typeof rawInput === 'object' && 'model_pref' in rawInput;
    const modelPref = hasPref ? parseModelPref((rawInput as { model_pref?: unknown }).model_pref, 'input.model_pref') : undefined;
    if (messages.length === 0) {
      // Nothing new: continue an unfinished checkpoint (crash resume), else there is nothing to do.
      const state = await this.graph.getState(cpConfig);
      if (state.next.length > 0) return null;
      throw new RunInputError('input.messages is empty: send at least one message');
    }
    return { messages, loops: 0, max_loops: maxLoops, finalize_reason: null, context_id: job.runId, thread_id: job.threadId, ...(modelPref !== undefined ? { model_pref: modelPref } : {}) };
  }

  private async finish(
    job: RunJob,
    status: RunStatusName,
    values: JsonObject | null,
    error: { error: string; message: string } | undefined,
    resolved: ResolvedModel | undefined,
    log: Logger,
  ): Promise<void> {
    const { store, events } = this.deps;
    if (error) await events.publish(job.runId, job.threadId, 'error', error);
    if (values) await store.updateThread(job.tenantId, job.threadId, { values, status: status === 'success' ? 'idle' : 'error' });
    else await store.updateThread(job.tenantId, job.threadId, { status: status === 'success' ? 'idle' : 'error' });
    await store.updateRun(job.tenantId, job.runId, { status, endedAt: new Date(), error: error?.message ?? null }, ['pending', 'running']);
    // Read the record before `end`: a stateless run's thread is deleted by the gateway once it sees `end`.
    const run = job.webhookUrl ? await store.getRun(job.tenantId, job.runId) : undefined;
    await events.publish(job.runId, job.threadId, 'end', null);
    log.info({ status, model: resolved?.label }, 'run finished');

    if (job.webhookUrl) {
      const payload = {
        run_id: job.runId,
        thread_id: job.threadId,
        assistant_id: job.assistantId,
        status,
        created_at: run?.createdAt.toISOString(),
        updated_at: run?.updatedAt.toISOString(),
        metadata: run?.metadata ?? {},
        model: resolved ? { provider: resolved.provider, label: resolved.label } : null,
        values: values ?? {},
        ...(error ? { error: error.message, error_type: error.error } : {}),
        webhook_sent_at: new Date().toISOString(),
      };
      const hook = create(WebhookJobSchema, {
        deliveryId: job.runId,
        url: job.webhookUrl,
        runId: job.runId,
        threadId: job.threadId,
        tenantId: job.tenantId,
        status: STATUS[status],
        payloadJson: JSON.stringify(payload),
      });
      await this.deps.webhooks.enqueue(toBinary(WebhookJobSchema, hook), {
        jobId: job.runId,
        attempts: this.deps.config.webhookAttempts,
        backoffMs: this.deps.config.webhookBackoffMs,
      });
    }
    if (job.ephemeral) {
      await this.deps.checkpointer.deleteThread(checkpointThreadId(job.tenantId, job.threadId));
      await this.deps.tools.deleteWorkspace(job.tenantId, job.threadId).catch(() => undefined);
    }
  }
}

/**
 * State values as shown to clients: internal bookkeeping fields stay private.
 * `token_usage` = { run: this run's tokens and model calls, thread: every call on the thread }.
 */
export function publicValues(v: JsonObject | undefined, runId: string): JsonObject {
  if (!v) return {};
  const { messages, loops, max_loops, finalize_reason, todos, token_usage, run_usage } = v as Record<string, unknown>;
  return {
    messages: messages ?? [],
    loops,
    max_loops,
    finalize_reason,
    ...(todos !== undefined ? { todos } : {}),
    token_usage: {
      run: runUsageFor(runId, run_usage as RunUsage | undefined),
      thread: (token_usage as JsonObject | undefined) ?? { ...ZERO_USAGE },
    },
  } as JsonObject;
}

/** The slot named by a `configurable.model` already validated by the registry, if it names one. */
function selectedSlot(selection: unknown): ModelSlot | null {
  if (typeof selection === 'string') return selection as ModelSlot;
  if (selection && typeof selection === 'object' && 'slot' in selection) return (selection as { slot: ModelSlot }).slot;
  return null;
}

function parseJsonObject(s: string, what: string): JsonObject {
  if (!s) return {};
  let v: unknown;
  try {
    v = JSON.parse(s);
  } catch (err) {
    throw new RunInputError(`${what} is not valid JSON`, { cause: err });
  }
  if (v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new RunInputError(`${what} must be an object`);
  return v as JsonObject;
}

export function parseMaxLoops(v: unknown, def: number): number {
  if (v === undefined || v === null) return def;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < MAX_LOOPS_MIN || n > MAX_LOOPS_MAX) {
    throw new RunInputError(`max_loops must be an integer between ${MAX_LOOPS_MIN} and ${MAX_LOOPS_MAX}, got ${JSON.stringify(v)}`);
  }
  return n;
}

