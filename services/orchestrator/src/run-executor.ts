import { Command } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { BaseMessage } from '@langchain/core/messages';
import { fromBinary, RunJobSchema, type RunJob } from '@agentloop/proto';
import type { RunEventStream } from '@agentloop/bus';
import { ReleaseJobError, type JobQueue } from '@agentloop/queue';
import { RunLifecycle, TERMINAL_RUN_STATUSES, type Store, type RunRecord, type JsonObject, type RunErrorInfo, type TerminalRunStatus } from '@agentloop/store';
import { UnavailableError, assertNever, errorMessage, type Logger } from '@agentloop/core';
import { buildAgentGraph, MAX_LOOPS_MAX, MAX_LOOPS_MIN, type AgentGraph, type ModelRouter, type RunContext } from './graph.js';
import type { ModelRegistry, ModelSlot, ResolvedModel } from './models/registry.js';
import type { PromptLanguage } from './prompts.js';
import type { HistoryOptions } from './history.js';
import { parseModelPref } from './routing.js';
import { runUsageFor, ZERO_USAGE, type RunUsage } from './usage.js';
import type { ApprovalClient } from './approval-client.js';
import type { SkillsClient } from './skills-client.js';
import { extractTraceContext, instruments, SpanKind, SpanStatusCode, withSpan, type Span } from '@agentloop/telemetry';
import type { ToolClient } from './tool-client.js';
import { parseInputMessages, toJsonValue } from './serialize.js';
import { RunInputError } from './errors.js';
import { announceRunEnds, type EndContext } from './run-end.js';
import { classifyFailure, terminalStatusOf, type RunOutcome } from './run-outcome.js';
import type { StepLease } from './step-gate.js';
import { DEFAULT_DELEGATION_LIMITS, DelegationCoordinator, isDelegationRequest, pendingDelegation, type DelegationLimits, type DelegationRequest } from './delegation.js';

export interface RunExecutorDeps {
  store: Store;
  events: RunEventStream;
  webhooks: JobQueue;
  /** The `runs` queue: delegated agents' runs and their parents' resumes are enqueued on it. Without it, delegate_task is unavailable. */
  runs?: JobQueue;
  tools: ToolClient;
  /** Skills for @mentions (the skill sandbox). */
  skills?: Pick<SkillsClient, 'names' | 'load'>;
  /** Tool approval (APPROVAL_MODE=required); absent: tool calls are not checked. */
  approvals?: Pick<ApprovalClient, 'check' | 'record'>;
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
    /** PUBLIC_BASE_URL: artifact URLs are absolute when set, else paths. */
    publicBaseUrl?: string | undefined;
    /** MAX_MESSAGE_HISTORY / MESSAGE_HISTORY_STRATEGY (default 40, clean). */
    history?: Partial<HistoryOptions>;
    /** COMPACT_TOKEN_BUDGET; 0 or absent disables automatic compaction. */
    compactTokenBudget?: number;
    /** AGENT_NAMES (default ["general"]). */
    agentNames?: readonly string[];
    /** DELEGATION_MAX_DEPTH / _MAX_PARALLEL, and the attempts of child and resume jobs (default 1 level, 8, 3 × 1000 ms). */
    delegation?: Partial<DelegationLimits> & { attempts?: number; backoffMs?: number };
  };
}

/** Namespaced checkpoint thread id: a tenant can never address another tenant's checkpoints. */
export const checkpointThreadId = (tenantId: string, threadId: string): string => `${tenantId}:${threadId}`;

type GraphInput = Parameters<AgentGraph['stream']>[0];

/**
 * Executes one RunJob: status transitions, the LangGraph agent loop with the
 * checkpointer, events per step, final values on the thread, and the webhook.
 */
export class RunExecutor {
  private readonly graph: AgentGraph;
  private readonly contexts = new Map<string, RunContext>();
  /** Cancel switches of the runs executing here, by run id. */
  private readonly cancels = new Map<string, AbortController>();
  /** Set by drain(): every run stops at its next checkpoint and is handed back to the queue. */
  private draining = false;
  private readonly delegation: DelegationCoordinator | undefined;
  /** The run lifecycle (take, end; the thread handed to its next deferred run); its `run.ended` subscribers announce the end. */
  readonly lifecycle: RunLifecycle<EndContext>;

  constructor(private readonly deps: RunExecutorDeps) {
    const d = deps.config.delegation ?? {};
    const limits: DelegationLimits = { maxDepth: d.maxDepth ?? DEFAULT_DELEGATION_LIMITS.maxDepth, maxParallel: d.maxParallel ?? DEFAULT_DELEGATION_LIMITS.maxParallel };
    this.lifecycle = new RunLifecycle<EndContext>(deps.store, { ...(deps.runs ? { jobs: deps.runs } : {}), logger: deps.logger.child({ component: 'lifecycle' }) });
    this.delegation = deps.runs
      ? new DelegationCoordinator({
          store: deps.store,
          lifecycle: this.lifecycle,
          runs: deps.runs,
          logger: deps.logger.child({ component: 'delegation' }),
          ...(deps.config.language ? { language: deps.config.language } : {}),
          attempts: d.attempts ?? 3,
          backoffMs: d.backoffMs ?? 1_000,
        })
      : undefined;
    announceRunEnds(this.lifecycle, {
      events: deps.events,
      webhooks: deps.webhooks,
      checkpointer: deps.checkpointer,
      tools: deps.tools,
      delegation: this.delegation,
      logger: deps.logger,
      webhookAttempts: deps.config.webhookAttempts,
      webhookBackoffMs: deps.config.webhookBackoffMs,
      checkpointThreadId,
    });
    this.graph = buildAgentGraph({
      ...(this.delegation ? { delegation: limits } : {}),
      tools: deps.tools,
      checkpointer: stopAfterCheckpointWhen(deps.checkpointer, () => this.draining),
      ledger: deps.store,
      runContext: (id) => this.contexts.get(id),
      ...(deps.config.language ? { language: deps.config.language } : {}),
      ...(deps.config.history ? { history: deps.config.history } : {}),
      ...(deps.config.compactTokenBudget !== undefined ? { compactTokenBudget: deps.config.compactTokenBudget } : {}),
      ...(deps.config.agentNames ? { agentNames: deps.config.agentNames } : {}),
      ...(deps.approvals ? { approvals: deps.approvals } : {}),
      ...(deps.skills ? { skills: deps.skills } : {}),
    });
  }

  /**
   * Graceful shutdown: lets every step in flight finish, then stops each run at the checkpoint
   * that step writes and hands the run back to the queue (ReleaseJobError), so another worker
   * resumes it from there. Runs that finish before their next checkpoint end normally.
   */
  drain(): void {
    this.draining = true;
  }

  /**
   * Runs the job. `attempt` counts earlier attempts of this job; `attempts` is how many the queue
   * allows in all. A transient infrastructure failure (store, checkpoints, event stream or queue
   * unreachable, e.g. while a server restarts) is rethrown so the queue tries again later and the
   * run resumes from its checkpoint — except on the last attempt, where the run ends as `error`.
   */
  execute(job: RunJob, attempt: number, workerSignal: AbortSignal, attempts = Number.POSITIVE_INFINITY, lease?: StepLease): Promise<void> {
    // One span per execution, in the trace of the request that created the run (or of the parent run).
    return withSpan(
      'agentloop.run',
      {
        kind: SpanKind.CONSUMER,
        parent: extractTraceContext(job.traceparent),
        attributes: { 'agentloop.run_id': job.runId, 'agentloop.thread_id': job.threadId, 'agentloop.tenant': job.tenantId, 'agentloop.attempt': attempt, 'agentloop.delegated': !!job.delegation },
      },
      (span) => this.executeRun(job, attempt, workerSignal, attempts, span, lease),
    );
  }

  private async executeRun(job: RunJob, attempt: number, workerSignal: AbortSignal, attempts: number, span: Span, lease: StepLease | undefined): Promise<void> {
    const { store } = this.deps;
    const log = this.deps.logger.child({ run_id: job.runId, thread_id: job.threadId, tenant: job.tenantId });
    const existing = await store.getRun(job.tenantId, job.runId);
    if (!existing) {
      log.warn('run record not found; dropping job');
      return;
    }
    if (TERMINAL_RUN_STATUSES.includes(existing.status)) {
      // This job ran before (a retry, or a stalled job taken over) and recorded the outcome, but may
      // have died before announcing it: announce again. A repeated `end` is harmless, the webhook
      // job id dedupes the delivery, and a delegated run's parent is told (again) that it finished.
      log.info({ status: existing.status }, 'run already finished; announcing its end again');
      const thread = await store.getThread(job.tenantId, job.threadId);
      await this.lifecycle.replayEnd(existing, { job, model: this.modelOf(job) }, thread?.values ?? null);
      return;
    }
    const cpConfig = { configurable: { thread_id: checkpointThreadId(job.tenantId, job.threadId), run_id: job.runId } };
    // The resume of a run suspended on delegated agents: only while it still waits on that step.
    let resumeInput: GraphInput | undefined;
    if (job.resumeDelegationId) {
      const decided = await this.delegationResumeInput(job, cpConfig, attempt);
      if (decided === 'stale') {
        log.info({ delegation_id: job.resumeDelegationId }, 'run no longer waits on this delegation step; resume job dropped');
        return;
      }
      resumeInput = decided;
    }
    // started_at is the first start: later attempts (crash resume, delegation resume) keep it, so a
    // run's artifacts are the outputs written since it first started.
    const startedAt = existing.startedAt ?? new Date();
    // Listen for a cancel before taking the run: a cancel recorded from now on either stops the
    // take below (the run is no longer pending/running) or reaches this controller.
    const cancel = new AbortController();
    this.cancels.set(job.runId, cancel);
    try {
      const taken = await this.lifecycle.start(existing);
      switch (taken.kind) {
        case 'started':
          break;
        case 'ended': {
          log.info({ status: taken.run.status }, 'run ended (cancelled) before it started; announcing its end');
          const thread = await store.getThread(job.tenantId, job.threadId);
          await this.lifecycle.replayEnd(taken.run, { job, model: this.modelOf(job) }, thread?.values ?? null, undefined);
          return;
        }
        case 'deferred':
          // Its thread's current run hands it the thread (and enqueues it again) when it ends.
          log.warn('run still waits for its thread; job dropped');
          return;
        case 'missing':
          log.warn('run record not found; dropping job');
          return;
        default:
          assertNever(taken, 'start result');
      }
      await this.executeTaken(job, { attempt, attempts, workerSignal, existing, startedAt, cpConfig, resumeInput, cancel: cancel.signal, lease }, log, span);
    } finally {
      if (this.cancels.get(job.runId) === cancel) this.cancels.delete(job.runId);
    }
  }

  /**
   * Aborts a run this executor is executing (a client cancelled it; the record already says
   * `interrupted`). Returns false when the run is not executing here.
   */
  cancel(runId: string, reason = 'cancelled'): boolean {
    const c = this.cancels.get(runId);
    if (!c) return false;
    c.abort(new RunCancelledError(reason));
    return true;
  }

  private async executeTaken(job: RunJob, run: Parameters<RunExecutor['runGraph']>[1], log: Logger, span: Span): Promise<void> {

    const metrics = instruments();
    const runStarted = performance.now();
    metrics.runsStarted.add(1);
    metrics.runsActive.add(1);
    let outcome = 'handed_back';
    try {
      outcome = await this.runGraph(job, run, log, span);
    } finally {
      metrics.runsActive.add(-1);
      metrics.runDuration.record((performance.now() - runStarted) / 1000, { outcome });
      span.setAttribute('agentloop.outcome', outcome);
    }
  }

  /** The graph part of a run; returns how this execution ended (a run status, `suspended`, or `interrupted`). */
  private async runGraph(
    job: RunJob,
    run: {
      attempt: number;
      attempts: number;
      workerSignal: AbortSignal;
      existing: RunRecord;
      startedAt: Date;
      cpConfig: { configurable: Record<string, unknown> };
      resumeInput: GraphInput | undefined;
      /** Aborted when a client cancels the run. */
      cancel: AbortSignal;
      /** The run's slot of the worker's CPU gate, given back while it waits on its model. */
      lease?: StepLease | undefined;
    },
    log: Logger,
    span: Span,
  ): Promise<string> {
    const { attempt, attempts, workerSignal, existing, startedAt, cpConfig, resumeInput, cancel, lease } = run;
    const { events } = this.deps;
    const timeout = AbortSignal.timeout(Number(job.timeoutMs) > 0 ? Number(job.timeoutMs) : this.deps.config.runTimeoutMs);
    const signal = AbortSignal.any([timeout, workerSignal, cancel]);
    let outcome: RunOutcome = { kind: 'success' };
    let values: JsonObject | null = null;
    let resolved: ResolvedModel | undefined;
    let waiting: DelegationRequest | undefined;
    const depth = job.delegation?.depth ?? 0;

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
      await this.deps.tools.ensureWorkspace(job.tenantId, job.workspaceThreadId || job.threadId, 10_000, job.runId).catch((err: unknown) => {
        log.warn({ err: errorMessage(err) }, 'workspace not prepared; tools will create it on first use');
      });

      this.contexts.set(job.runId, {
        runId: job.runId,
        tenantId: job.tenantId,
        threadId: job.threadId,
        model: resolved,
        ...(router ? { router } : {}),
        modelPref,
        logger: log,
        signal,
        depth,
        ...(job.workspaceThreadId ? { workspaceThreadId: job.workspaceThreadId } : {}),
        ephemeral: job.ephemeral,
        runConfig: config,
        apiKeyId: job.apiKeyId,
        ...(lease ? { stepLease: lease } : {}),
      });
      // A run that already started once (crash, stalled job, retry) resumes from its checkpoint.
      const input = job.resumeDelegationId ? (resumeInput as GraphInput) : await this.graphInput(job, cpConfig, maxLoops, Math.max(attempt, existing.attempts));
      const stream = await this.graph.stream(input, {
        ...cpConfig,
        streamMode: ['values', 'updates'],
        // agent → approve → await_approval → tools → delegate → human: at most six steps per loop.
        recursionLimit: maxLoops * 6 + 10,
        signal,
        durability: this.deps.config.durability,
      });
      for await (const chunk of stream) {
        const [mode, data] = chunk as [string, unknown];
        // A delegation interrupt is internal: clients see the `delegate` update published below instead.
        if (mode === 'updates' && isDelegationInterrupt(data)) continue;
        const json = toJsonValue(mode === 'values' ? publicValues(data as JsonObject, job.runId) : data);
        if (mode === 'values') values = json as JsonObject;
        await events.publish(job.runId, job.threadId, mode, json);
      }
      const final = await this.graph.getState(cpConfig);
      values = toJsonValue(publicValues(final.values as JsonObject, job.runId)) as JsonObject;
      waiting = pendingDelegation(final);
      // Waiting for a human (tool approval, ask_human): the run ends, the thread is `interrupted`,
      // and the values carry `__interrupt__` as LangGraph Platform reports it; a `command.resume` continues.
      const pendingInterrupts = humanInterrupts(final);
      if (waiting) outcome = { kind: 'suspended' };
      else if (pendingInterrupts.length > 0) {
        outcome = { kind: 'waits_for_human' };
        values = { ...values, __interrupt__: pendingInterrupts } as JsonObject;
        log.info({ interrupts: pendingInterrupts.map((i) => (i.value as { type?: unknown } | null)?.type) }, 'run waits for a human');
      }
    } catch (err) {
      outcome = classifyFailure(err, {
        cancel,
        timeout,
        timeoutMs: Number(job.timeoutMs) || this.deps.config.runTimeoutMs,
        workerSignal,
        draining: this.draining,
        transient: isTransientInfraError(err),
        attempt,
        attempts,
      });
      switch (outcome.kind) {
        case 'worker_stopping':
          // Shutdown: leave the run resumable from its last checkpoint; the queue hands it to another worker.
          log.warn('worker stopping; run left resumable');
          throw err;
        case 'handed_back':
          // Graceful shutdown: the step in flight finished and was checkpointed; another worker resumes from there.
          log.info({ err: errorMessage(err) }, 'worker draining: run handed back after its last checkpoint');
          throw new ReleaseJobError(`run ${job.runId} handed back by a draining worker`, { cause: err });
        case 'retry_later':
          // The store, the checkpoints or the event stream are unreachable for now: the queue retries
          // the job (with backoff) and the next attempt resumes from the last checkpoint.
          log.warn({ err: errorMessage(err), attempt: attempt + 1, attempts }, 'infrastructure unavailable; run left resumable for a retry');
          throw err;
        case 'cancelled':
          // The client cancelled (the record is already `interrupted`): stop where the run is.
          log.info({ reason: outcome.reason }, 'run cancelled');
          break;
        case 'timeout':
        case 'failed':
          log.error({ err: outcome.error }, 'run failed');
          break;
        case 'success':
        case 'waits_for_human':
        case 'suspended':
          break;
        default:
          assertNever(outcome, 'run outcome');
      }
      try {
        const state = await this.graph.getState(cpConfig);
        values = toJsonValue(publicValues(state.values as JsonObject, job.runId)) as JsonObject;
      } catch {
        /* keep the last published values */
      }
    } finally {
      this.contexts.delete(job.runId);
    }

    if (resolved) span.setAttribute('agentloop.model', resolved.label);
    if (outcome.kind === 'suspended' && waiting) {
      await this.suspend(job, waiting, depth, log);
      return 'suspended';
    }
    const status = terminalStatusOf(outcome);
    if (status === undefined) throw new Error(`internal: run outcome ${outcome.kind} reached the end of the run`);
    const error = outcome.kind === 'timeout' || outcome.kind === 'failed' ? outcome.error : undefined;
    const waitsForHuman = outcome.kind === 'waits_for_human';
    await this.finish(job, status, values, error, resolved, log, startedAt, waitsForHuman);
    instruments().runsFinished.add(1, { status: waitsForHuman ? 'interrupted' : status });
    if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    return waitsForHuman ? 'interrupted' : status;
  }

  /**
   * The job failed for good without the run recording an outcome (e.g. the store or the event
   * stream was unreachable before the run could start, on its last attempt): record the run as
   * failed and announce it — `end`, webhook, and a delegated run's parent, which would otherwise
   * stay suspended. Best effort; a run that already ended is left alone.
   */
  async abandon(job: RunJob, cause: unknown): Promise<void> {
    const log = this.deps.logger.child({ run_id: job.runId, thread_id: job.threadId, tenant: job.tenantId });
    const existing = await this.deps.store.getRun(job.tenantId, job.runId);
    if (!existing || TERMINAL_RUN_STATUSES.includes(existing.status)) return;
    const error = { error: 'Error', message: `The run could not be executed: ${errorMessage(cause)}` };
    log.error({ err: error.message }, 'run abandoned after its last attempt');
    await this.deps.events.publish(job.runId, job.threadId, 'error', error);
    const ended = await this.lifecycle.end({ tenantId: job.tenantId, runId: job.runId, status: 'error', error, cause: 'abandoned' }, { job, model: null });
    if (ended.kind === 'already_ended') await this.lifecycle.replayEnd(ended.run, { job, model: null }, null);
  }

  /**
   * The run's queue job failed for good at queue level (a poison run: its worker died more than
   * RUN_MAX_STALLED times) or is gone, without the run recording an outcome (the sweeper):
   * dead-letter it with the reason — an `error` event, then the lifecycle's `deadLetter`
   * transition, whose `run.ended` subscribers send the webhook and notify a delegation parent.
   * `payload` is the job as the queue still has it; else the job stored with the run is used.
   * Returns whether this call ended the run.
   */
  async deadLetter(run: RunRecord, reason: string, payload: Uint8Array | undefined): Promise<boolean> {
    const log = this.deps.logger.child({ run_id: run.runId, thread_id: run.threadId, tenant: run.tenantId });
    const stored = await this.lifecycle.storedJob(run.tenantId, run.runId);
    let job: RunJob | undefined;
    for (const bytes of [stored?.payload, payload]) {
      if (job || !bytes) continue;
      try {
        job = fromBinary(RunJobSchema, bytes);
      } catch (err) {
        log.warn({ err: errorMessage(err) }, 'unreadable run job');
      }
    }
    const d = this.deps.config.delegation;
    const keep = !stored && payload ? { payload, attempts: d?.attempts ?? 3, backoffMs: d?.backoffMs ?? 1000 } : undefined;
    const current = await this.deps.store.getRun(run.tenantId, run.runId);
    if (!current || TERMINAL_RUN_STATUSES.includes(current.status)) return false;
    log.error({ reason }, 'run dead-lettered');
    // Before the transition, whose `run.ended` subscriber publishes `end`.
    await this.deps.events.publish(run.runId, run.threadId, 'error', { error: 'DeadLetterError', message: `The run was dead-lettered: ${reason}` }).catch(() => undefined);
    const ended = await this.lifecycle.deadLetter({ tenantId: run.tenantId, runId: run.runId, reason, job: keep }, job ? { job, model: null } : undefined);
    return ended.kind === 'ended';
  }

  /**
   * The graph is suspended on delegated agents: start them and end this job, so the run holds
   * no worker slot while they work. The run stays `running` (thread `busy`); the last child to
   * finish enqueues its resume. A failure here fails the job, and its retry re-raises the interrupt.
   */
  private async suspend(job: RunJob, request: DelegationRequest, depth: number, log: Logger): Promise<void> {
    if (!this.delegation) throw new Error('internal: the graph delegated but no runs queue is configured');
    await this.delegation.start(job, request, depth);
    await this.deps.events.publish(job.runId, job.threadId, 'updates', {
      delegate: {
        status: 'waiting_children',
        delegation_id: request.delegation_id,
        children: request.children.map((c) => ({ run_id: c.run_id, thread_id: c.thread_id, tool_call_id: c.tool_call_id, task: c.task })),
      },
    });
    log.info({ delegation_id: request.delegation_id, children: request.children.map((c) => c.run_id) }, 'run suspended while delegated agents run');
  }

  /**
   * Input of a resume job: the children's results when the run still waits on that step;
   * null when this very job ran before and got past it (a retry); else 'stale' (a duplicate).
   */
  private async delegationResumeInput(job: RunJob, cpConfig: { configurable: Record<string, unknown> }, attempt: number): Promise<GraphInput | 'stale'> {
    const state = await this.graph.getState(cpConfig);
    const pending = pendingDelegation(state);
    if (pending?.delegation_id === job.resumeDelegationId) {
      const command = parseJsonObject(job.commandJson, 'command');
      return new Command({ resume: command.resume }) as unknown as GraphInput;
    }
    if (attempt > 0 && (state.values as { context_id?: unknown }).context_id === job.runId) return null;
    return 'stale';
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
    return {
      messages,
      loops: 0,
      max_loops: maxLoops,
      finalize_reason: null,
      context_id: job.runId,
      thread_id: job.threadId,
      // A delegated agent's context links to its parent's (seed 001 §5.3): it gets the delegated prompt and no ask_human.
      ...(job.delegation ? { parent_context: job.delegation.parentRunId } : {}),
      ...(modelPref !== undefined ? { model_pref: modelPref } : {}),
    };
  }

  private async finish(
    job: RunJob,
    status: TerminalRunStatus,
    values: JsonObject | null,
    error: RunErrorInfo | undefined,
    resolved: ResolvedModel | undefined,
    log: Logger,
    startedAt: Date,
    waitsForHuman = false,
  ): Promise<void> {
    const { events } = this.deps;
    if (values) {
      const artifacts = await this.artifacts(job, startedAt, log);
      values = { ...values, artifacts };
      // The stream's last `values` predates the listing and the interrupt: clients following it see them too.
      if (artifacts.length > 0 || waitsForHuman) await events.publish(job.runId, job.threadId, 'values', values);
    }
    if (error) await events.publish(job.runId, job.threadId, 'error', error);
    // One transition: the record, the thread's values and status, the thread handed to its next
    // deferred run; the `run.ended` subscribers announce it (end event, webhook, cleanup, parent).
    const model = resolved ? { provider: resolved.provider, label: resolved.label } : null;
    const ended = await this.lifecycle.end({ tenantId: job.tenantId, runId: job.runId, status, error, values, waitsForHuman, cause: 'finished' }, { job, model });
    if (ended.kind === 'already_ended') {
      // The record ended first (a cancel): announce what it says, so events, webhook and record agree.
      if (ended.run.status !== status) log.info({ ran_to: status, recorded: ended.run.status }, 'run record ended first; announcing the recorded status');
      await this.lifecycle.replayEnd(ended.run, { job, model }, values, ended.run.status === status ? error : undefined);
    }
  }

  /**
   * The run's artifacts (seed 003 "The Output Pipeline"): files under outputs/ that are new or
   * changed since the run first started (the tool-runner compares with what it recorded then;
   * without that record, by modification time), with a download URL. Best effort: a tool-runner
   * that does not answer leaves the run without artifacts, never fails it.
   */
  private async artifacts(job: RunJob, startedAt: Date, log: Logger): Promise<JsonObject[]> {
    const workspaceThread = job.workspaceThreadId || job.threadId;
    try {
      const { files, truncated } = await this.deps.tools.listFiles(job.tenantId, workspaceThread, {
        folders: ['outputs'],
        runId: job.runId,
        modifiedSinceMs: startedAt.getTime(),
        maxFiles: 200,
      });
      if (truncated) log.warn({ listed: files.length }, 'more than 200 artifacts; the rest are not reported');
      const base = this.deps.config.publicBaseUrl ?? '';
      return files.map((f) => ({
        name: f.name,
        path: f.path,
        size: f.size,
        type: f.type,
        modified_at: new Date(f.modifiedMs).toISOString(),
        url: `${base}/threads/${encodeURIComponent(workspaceThread)}/files/${f.path.split('/').map(encodeURIComponent).join('/')}`,
      }));
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'artifacts not listed');
      return [];
    }
  }

  /** The model of a finished run's webhook, when its config still resolves. */
  private modelOf(job: RunJob): { provider: string; label: string } | null {
    try {
      const r = this.deps.models.resolve((parseJsonObject(job.configJson, 'config').configurable as JsonObject | undefined)?.model);
      return { provider: r.provider, label: r.label };
    } catch {
      return null;
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

/** Abort reason of a run a client cancelled. */
export class RunCancelledError extends Error {
  override name = 'RunCancelledError';
}

/** Interrupts of a graph state that wait for a human (every one but a delegation), as `__interrupt__` lists them. */
export function humanInterrupts(snapshot: { tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }> }): Array<{ id?: string; value: unknown }> {
  const out: Array<{ id?: string; value: unknown }> = [];
  for (const t of snapshot.tasks ?? []) {
    for (const i of t.interrupts ?? []) if (!isDelegationRequest(i.value)) out.push({ ...(i.id ? { id: i.id } : {}), value: toJsonValue(i.value) });
  }
  return out;
}

/** An `updates` chunk that only reports the delegate node's interrupt. */
function isDelegationInterrupt(data: unknown): boolean {
  const list = data && typeof data === 'object' ? (data as { __interrupt__?: unknown }).__interrupt__ : undefined;
  return Array.isArray(list) && list.length > 0 && list.every((i: unknown) => isDelegationRequest((i as { value?: unknown } | null)?.value));
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


/** Error codes of a database (mysql2) or socket that is down, restarting or dropped the connection. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'PROTOCOL_ENQUEUE_AFTER_FATAL_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_CON_COUNT_ERROR',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
  'ER_QUERY_INTERRUPTED',
  'ER_CONNECTION_KILLED',
  'ER_CLIENT_INTERACTION_TIMEOUT',
]);

/**
 * Whether an error (or one of its causes) says the infrastructure is unreachable for now — a
 * server restarting, a dropped connection — rather than that the run itself is wrong. Such a
 * run is retried by the queue and resumes from its checkpoint instead of ending as `error`.
 */
export function isTransientInfraError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    if (e instanceof UnavailableError) return true;
    const x = e as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof x.code === 'string' && TRANSIENT_CODES.has(x.code)) return true;
    if (x.name === 'MaxRetriesPerRequestError') return true;
    if (typeof x.message === 'string' && /Connection is closed|Connection lost|server closed the connection|connect ECONNREFUSED/i.test(x.message)) return true;
    e = x.cause;
  }
  return false;
}

/** Thrown by the checkpointer of a draining executor once a step's checkpoint is saved. */
export class WorkerDrainingError extends Error {
  override name = 'WorkerDrainingError';
}

/**
 * The saver, except that once `stop()` is true each `put` fails *after* saving: LangGraph
 * (durability "sync") then ends the run at that step boundary, with that step persisted and the
 * next one not started. That is how a draining worker lets in-flight steps finish and no more.
 */
export function stopAfterCheckpointWhen(saver: BaseCheckpointSaver, stop: () => boolean): BaseCheckpointSaver {
  return new Proxy(saver, {
    get(target, prop) {
      if (prop === 'put') {
        return async (...args: Parameters<BaseCheckpointSaver['put']>) => {
          const saved = await target.put(...args);
          if (stop()) throw new WorkerDrainingError('The worker is shutting down: the run stops after this checkpoint');
          return saved;
        };
      }
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
