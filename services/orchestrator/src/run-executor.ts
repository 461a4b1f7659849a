/**
 * Executes one RunJob. This class only composes the parts of a run's execution, one idea per
 * file under run/: input building (run/input.ts), the graph execution loop (run/stream.ts),
 * outcome classification and the end it leads to (run/outcome.ts, run/finish.ts), the draining
 * checkpointer (run/draining-saver.ts), cancel switches (run/cancellations.ts), suspension on
 * delegated agents (run/suspend.ts) and while the model thinks (run/model-suspend.ts), and the ends of runs that never ran to an outcome
 * (run/dead-letter.ts). Transitions go through the RunLifecycle; end side effects are its
 * `run.ended` subscribers (run-end.ts). This file remains the import path for all of them.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { RunJob } from '@agentloop/proto';
import type { RunEventStream } from '@agentloop/bus';
import type { JobQueue } from '@agentloop/queue';
import { RunLifecycle, TERMINAL_RUN_STATUSES, type Store, type RunRecord, type StoreItems, type TenantBudgets } from '@agentloop/store';
import { assertNever, errorMessage, sleep, type Logger } from '@agentloop/core';
import { buildAgentGraph, type AgentGraph, type RunContext } from './graph.js';
import type { ModelRegistry, ResolvedModel } from './models/registry.js';
import type { PromptLanguage } from './prompts.js';
import type { HistoryOptions } from './history.js';
import type { ApprovalClient } from './approval-client.js';
import type { SkillsClient } from './skills-client.js';
import { extractTraceContext, instruments, SpanKind, SpanStatusCode, withSpan, type Span } from '@agentloop/telemetry';
import type { ToolClient } from './tool-client.js';
import { announceRunEnds, type EndContext } from './run-end.js';
import type { StepLease } from './step-gate.js';
import { DEFAULT_DELEGATION_LIMITS, DelegationCoordinator, type DelegationLimits, type DelegationRequest } from './delegation.js';
import {
  delegationResumeInput,
  graphInput,
  maxLoopsOf,
  modelOf,
  resolveRunModel,
  runCheckpointConfig,
  storedConfig,
  atHead,
  type CheckpointConfig,
  type GraphInput,
} from './run/input.js';
import { currentValues, streamGraph, type SeenValues } from './run/stream.js';
import type { ResumePoint } from './run/latest-checkpoint.js';
import { failureOutcome, runEndOf, type EndingOutcome } from './run/outcome.js';
import { finishRun } from './run/finish.js';
import { suspendRun } from './run/suspend.js';
import { streamSuspending, suspendable, SuspendedRuns } from './run/model-suspend.js';
import { InGraphModelWaits, ModelSuspension } from './models/model-suspension.js';
import { tracingRequested } from './langchain-context.js';
import { DrainingSaver, type InFlightWrites } from './run/draining-saver.js';
import { CancelRegistry } from './run/cancellations.js';
import { withSubgraphEvents } from './run/subgraph-events.js';
import { abandonRun, deadLetterRun, type DeadLetterDeps } from './run/dead-letter.js';
import { runMemory } from './memory/run-memory.js';
import { TokenAccounting } from './budgets/token-accounting.js';
import { budgetOutcome } from './run/budget-outcome.js';
import { agentPolicyOf } from './agent-config.js';
import { runEnvironment } from './environments.js';
import { openRunTape, replayResolver, saveReplayReport, type RecordingPolicy } from './recording/run-tape.js';
import type { ReplaySession } from './recording/replay-session.js';

// The import paths the rest of the repository (and the package index) uses.
export { parseMaxLoops } from './run/input.js';
export { publicValues, humanInterrupts } from './run/values.js';
export { RunCancelledError } from './run/cancellations.js';
export { WorkerDrainingError, stopAfterCheckpointWhen } from './run/draining-saver.js';

export interface RunExecutorDeps {
  store: Store;
  events: RunEventStream;
  webhooks: JobQueue;
  /** The `runs` queue: delegated agents' runs and their parents' resumes are enqueued on it. Without it, delegate_task is unavailable. */
  runs?: JobQueue;
  tools: ToolClient;
  /** Skills for @mentions (the skill sandbox). */
  skills?: Pick<SkillsClient, 'catalog' | 'load'>;
  /** Tool approval (APPROVAL_MODE=required); absent: tool calls are not checked. */
  approvals?: Pick<ApprovalClient, 'check' | 'record'>;
  models: ModelRegistry;
  checkpointer: BaseCheckpointSaver;
  /** Long-term memory (issue 12): bound to each run's tenant, as its graph store and the memory tools'. */
  memory?: StoreItems;
  /** Tenants' token budgets (issue 17); absent: only the runs' own `max_tokens_total` is enforced. Every call is recorded in the ledger either way. */
  budgets?: TenantBudgets;
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
    /** RECORD_RUNS / RECORD_RUNS_TENANTS (issue 17); absent: nothing is recorded. */
    recording?: RecordingPolicy;
    /** MODEL_SUSPEND_AFTER_MS: a model call pending this long suspends its run (run/model-suspend.ts); 0 or absent: never. */
    modelSuspendAfterMs?: number;
    /** MODEL_WAITS_IN_GRAPH: runs that may wait past that grace period without suspending (models/model-suspension.ts); absent: 0. */
    modelWaitsInGraph?: number;
  };
}

/** Namespaced checkpoint thread id: a tenant can never address another tenant's checkpoints. */
export const checkpointThreadId = (tenantId: string, threadId: string): string => `${tenantId}:${threadId}`;

/** One execution of a taken run, as runGraph needs it. */
interface TakenRun {
  attempt: number;
  attempts: number;
  workerSignal: AbortSignal;
  /** How many times the run had started before this execution (its record's attempts before the take). */
  priorAttempts: number;
  startedAt: Date;
  cpConfig: CheckpointConfig;
  resumeInput: GraphInput | undefined;
  /** Aborted when a client cancels the run. */
  cancel: AbortSignal;
  /** The run's slot of the worker's CPU gate, given back while it waits on its model. */
  lease?: StepLease | undefined;
}

/**
 * Executes one RunJob: status transitions, the LangGraph agent loop with the
 * checkpointer, events per step, final values on the thread, and the webhook.
 */
/** How long the end of a run waits for its checkpoint writes in flight to settle. */
const WRITES_SETTLE_MAX_MS = 10_000;

export class RunExecutor {
  private readonly graph: AgentGraph;
  private readonly contexts = new Map<string, RunContext>();
  /** The worker's saver with its writes in flight counted per thread (run/draining-saver.ts). */
  private readonly trackedSaver: { saver: BaseCheckpointSaver; writes: InFlightWrites };
  /** Cancel switches of the runs executing here, by run id. */
  private readonly cancels = new CancelRegistry();
  /** Set by drain(): every run stops at its next checkpoint and is handed back to the queue. */
  private draining = false;
  private readonly delegation: DelegationCoordinator | undefined;
  /** The run lifecycle (take, end; the thread handed to its next deferred run); its `run.ended` subscribers announce the end. */
  readonly lifecycle: RunLifecycle<EndContext>;
  /** The usage ledger and token budgets (issue 17). */
  private readonly tokens: TokenAccounting;
  /** Runs of this executor suspended while their model thinks (run/model-suspend.ts). */
  readonly suspendedOnModel = new SuspendedRuns();
  /** MODEL_SUSPEND_AFTER_MS, or 0 where a suspension cannot work (see the constructor). */
  private readonly suspendAfterMs: number;
  /** The runs of this executor waiting on their model past the grace period without suspending. */
  private readonly modelWaitsInGraph: InGraphModelWaits;

  constructor(private readonly deps: RunExecutorDeps) {
    const d = deps.config.delegation ?? {};
    const limits: DelegationLimits = {
      maxDepth: d.maxDepth ?? DEFAULT_DELEGATION_LIMITS.maxDepth,
      maxParallel: d.maxParallel ?? DEFAULT_DELEGATION_LIMITS.maxParallel,
    };
    this.lifecycle = new RunLifecycle<EndContext>(deps.store, {
      ...(deps.runs ? { jobs: deps.runs } : {}),
      logger: deps.logger.child({ component: 'lifecycle' }),
    });
    this.tokens = new TokenAccounting({
      store: deps.store,
      ...(deps.budgets ? { budgets: deps.budgets } : {}),
      logger: deps.logger.child({ component: 'tokens' }),
    });
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
    // Durability "exit" writes no checkpoint before the invocation ends (nothing to resume from),
    // and a LangSmith tracer is a callback of the graph invocation that a call made outside it
    // (models/model-suspension.ts) would lose: runs do not suspend then.
    this.suspendAfterMs = deps.config.durability === 'exit' || tracingRequested() ? 0 : (deps.config.modelSuspendAfterMs ?? 0);
    this.modelWaitsInGraph = new InGraphModelWaits(deps.config.modelWaitsInGraph ?? 0);
    const saver = new DrainingSaver(deps.checkpointer, () => this.draining);
    this.trackedSaver = { saver, writes: saver };
    this.graph = buildAgentGraph({
      ...(this.delegation ? { delegation: limits } : {}),
      tools: deps.tools,
      checkpointer: saver,
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
        attributes: {
          'agentloop.run_id': job.runId,
          'agentloop.thread_id': job.threadId,
          'agentloop.tenant': job.tenantId,
          'agentloop.attempt': attempt,
          'agentloop.delegated': !!job.delegation,
        },
      },
      (span) => this.executeRun(job, attempt, workerSignal, attempts, span, lease),
    );
  }

  /**
   * Takes the run (or announces the end it already has), then runs it. The take is the run's
   * start transition, which returns the record it started: the record is read before it only for
   * the resume of a run suspended on delegated agents, which must not start a run that no longer
   * waits on that step (issue 9: a read less per run).
   */
  private async executeRun(job: RunJob, attempt: number, workerSignal: AbortSignal, attempts: number, span: Span, lease: StepLease | undefined): Promise<void> {
    const { store } = this.deps;
    const log = this.deps.logger.child({ run_id: job.runId, thread_id: job.threadId, tenant: job.tenantId });
    const cpConfig: CheckpointConfig = { configurable: { thread_id: checkpointThreadId(job.tenantId, job.threadId), run_id: job.runId } };
    // The end of a run that ended before this job took it (a retry or a stalled job taken over that
    // recorded the outcome but may have died before announcing it; or a cancel before the start):
    // announced again. A repeated `end` is harmless, the webhook job id dedupes the delivery, and a
    // delegated run's parent is told (again) that it finished.
    const replay = async (ended: RunRecord): Promise<void> => {
      log.info({ status: ended.status }, 'run already finished; announcing its end again');
      const thread = await store.getThread(job.tenantId, job.threadId);
      await this.lifecycle.replayEnd(ended, { job, model: modelOf(job, this.deps.models) }, thread?.values ?? null);
    };
    let resumeInput: GraphInput | undefined;
    if (job.resumeDelegationId) {
      const existing = await store.getRun(job.tenantId, job.runId);
      if (!existing) {
        log.warn('run record not found; dropping job');
        return;
      }
      if (TERMINAL_RUN_STATUSES.includes(existing.status)) return replay(existing);
      // The resume of a run suspended on delegated agents: only while it still waits on that step.
      const decided = await delegationResumeInput(this.graph, job, cpConfig, attempt);
      if (decided === 'stale') {
        log.info({ delegation_id: job.resumeDelegationId }, 'run no longer waits on this delegation step; resume job dropped');
        return;
      }
      resumeInput = decided;
    }
    // Listen for a cancel before taking the run: a cancel recorded from now on either stops the
    // take below (the run is no longer pending/running) or reaches this controller.
    const cancel = this.cancels.register(job.runId);
    try {
      const taken = await this.lifecycle.take(job.tenantId, job.runId);
      switch (taken.kind) {
        case 'started':
          break;
        case 'ended':
          await replay(taken.run);
          return;
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
      const run = taken.run;
      // started_at is the first start: later attempts (crash resume, delegation resume) keep it, so
      // a run's artifacts are the outputs written since it first started.
      const startedAt = run.startedAt ?? new Date();
      const priorAttempts = run.attempts - 1;
      await this.executeTaken(
        job,
        { attempt, attempts, workerSignal, priorAttempts, startedAt, cpConfig, resumeInput, cancel: cancel.signal, lease },
        log,
        span,
      );
    } finally {
      this.cancels.release(job.runId, cancel);
    }
  }

  /**
   * Aborts a run this executor is executing (a client cancelled it; the record already says
   * `interrupted`). Returns false when the run is not executing here.
   */
  cancel(runId: string, reason = 'cancelled'): boolean {
    return this.cancels.cancel(runId, reason);
  }

  private async executeTaken(job: RunJob, run: TakenRun, log: Logger, span: Span): Promise<void> {
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
  private async runGraph(job: RunJob, run: TakenRun, log: Logger, span: Span): Promise<string> {
    const { attempt, attempts, workerSignal, priorAttempts, startedAt, cpConfig, resumeInput, cancel, lease } = run;
    // A delegated run of a parent streamed with stream_subgraphs also publishes on the parent's stream.
    const events = withSubgraphEvents(this.deps.events, job, log);
    const timeout = AbortSignal.timeout(Number(job.timeoutMs) > 0 ? Number(job.timeoutMs) : this.deps.config.runTimeoutMs);
    const signal = AbortSignal.any([timeout, workerSignal, cancel]);
    let outcome: EndingOutcome | { kind: 'suspended'; waiting: DelegationRequest };
    // The last values published: what the run ends with when the stream throws and the checkpoint cannot be read.
    const seen: SeenValues = { values: null };
    // The checkpoint a suspension leaves for the resumed stream (run/latest-checkpoint.ts ResumePoint).
    const resume: { from?: ResumePoint | undefined } = {};
    let resolved: ResolvedModel | undefined;
    const depth = job.delegation?.depth ?? 0;
    let replay: ReplaySession | undefined;

    try {
      // Record and replay (issue 17): a replay answers every model call from its recording.
      const policy = this.deps.config.recording ?? { mode: 'off', tenants: new Set<string>() };
      const stored = storedConfig(job);
      const opened = await openRunTape({ store: this.deps.store, policy }, job, stored.configurable, log);
      replay = opened.replay;
      // Its environment (seed 002) is read afresh by each execution: switching or editing one needs no restart.
      const environment = await runEnvironment(this.deps.skills, job.tenantId, stored.config(), depth > 0);
      const models = environment ? this.deps.models.forEnvironment(environment.name, environment.settings.models) : this.deps.models;
      const setup = resolveRunModel(stored.config(), replay ? replayResolver(replay) : models);
      resolved = setup.resolved;
      log.info(
        { model: resolved.label, provider: resolved.provider, attempt, ...(environment ? { environment: environment.name } : {}) },
        resolved.provider === 'scripted' ? 'run started (SCRIPTED model provider)' : 'run started',
      );
      const maxLoops = maxLoopsOf(setup, this.deps.config.maxLoopsDefault);
      await this.deps.tools.ensureWorkspace(job.tenantId, job.workspaceThreadId || job.threadId, 10_000, job.runId).catch((err: unknown) => {
        log.warn({ err: errorMessage(err) }, 'workspace not prepared; tools will create it on first use');
      });

      const suspension = suspendable(job, this.suspendAfterMs, replay !== undefined)
        ? new ModelSuspension(this.suspendAfterMs, this.modelWaitsInGraph)
        : undefined;
      const memory = this.deps.memory ? runMemory(this.deps.memory, this.deps.store, job, setup.configurable) : undefined;
      this.contexts.set(job.runId, {
        runId: job.runId,
        tenantId: job.tenantId,
        threadId: job.threadId,
        model: resolved,
        ...(setup.router ? { router: setup.router } : {}),
        modelPref: setup.modelPref,
        logger: log,
        signal,
        depth,
        ...(job.workspaceThreadId ? { workspaceThreadId: job.workspaceThreadId } : {}),
        ephemeral: job.ephemeral,
        runConfig: setup.config,
        environment: environment?.settings ?? null,
        apiKeyId: job.apiKeyId,
        ...(lease ? { stepLease: lease } : {}),
        ...(suspension ? { suspension } : {}),
        ...(memory ? { memory } : {}),
        // A replay calls no model: its calls are neither checked against a budget nor put in the ledger.
        ...(replay ? {} : { tokens: this.tokens.forRun(job.tenantId, agentPolicyOf(setup.config).maxTokensTotal) }),
        ...(opened.tape ? { tape: opened.tape } : {}),
      });
      // A run that already started once (crash, stalled job, retry) resumes from its checkpoint.
      // A run created with a checkpoint starts from it (a fork of the thread: edit, regenerate).
      const runCp = job.resumeDelegationId
        ? cpConfig
        : await runCheckpointConfig(this.graph, job, cpConfig, setup.configurable, Math.max(attempt, priorAttempts));
      const input = job.resumeDelegationId ? (resumeInput as GraphInput) : await graphInput(this.graph, job, runCp, maxLoops, Math.max(attempt, priorAttempts));
      const threadId = String(cpConfig.configurable.thread_id);
      const stopped = await streamSuspending(
        (resumed) =>
          streamGraph(
            // Streamed again after a suspension: from the thread's head, which this run's own
            // checkpoints are now (as a retry of a forked run does, runCheckpointConfig).
            runCp === cpConfig || resumed ? this.graph : atHead(this.graph),
            events,
            job,
            resumed ? null : input,
            {
              cpConfig: resumed ? cpConfig : runCp,
              maxLoops,
              signal,
              durability: this.deps.config.durability,
              ...(memory ? { store: memory.store } : {}),
              displayNameOf: (tool) => this.deps.tools.displayName(tool),
              resumed,
              latest: this.trackedSaver.writes,
              resume,
            },
            seen,
            log,
          ),
        { suspension, signal, lease, settled: () => this.trackedSaver.writes.settled(threadId), suspended: this.suspendedOnModel, log },
      );
      seen.values = stopped.values;
      outcome = stopped.kind === 'suspended' ? { kind: 'suspended', waiting: stopped.waiting } : (budgetOutcome(stopped.values) ?? { kind: stopped.kind });
    } catch (err) {
      // Throws (after logging) when the job goes back to the queue instead of ending here.
      outcome = failureOutcome(
        err,
        { cancel, timeout, timeoutMs: Number(job.timeoutMs) || this.deps.config.runTimeoutMs, workerSignal, draining: this.draining, attempt, attempts },
        job.runId,
        log,
      );
      seen.values = (await currentValues(this.graph, cpConfig, job.runId)) ?? seen.values;
    } finally {
      this.contexts.delete(job.runId);
      resume.from?.close();
    }

    if (resolved) span.setAttribute('agentloop.model', resolved.label);
    if (replay && outcome.kind !== 'suspended') {
      await saveReplayReport(this.deps.store, job, replay).then(
        (report) => log.info({ replay: report }, report.diverged ? 'replay diverged from its recording' : 'replay matched its recording'),
        (err: unknown) => log.warn({ err: errorMessage(err) }, 'replay outcome not saved'),
      );
    }
    if (outcome.kind === 'suspended') {
      await suspendRun(this.delegation, events, job, outcome.waiting, depth, log);
      return 'suspended';
    }
    // Writes the stopped graph still had in flight land before the end is announced (a rollback
    // acting on that end deletes the run's checkpoints: it must see them all). Bounded: a saver
    // that hangs does not keep the run from ending.
    await Promise.race([this.trackedSaver.writes.settled(String(cpConfig.configurable.thread_id)), sleep(WRITES_SETTLE_MAX_MS)]);
    const end = runEndOf(outcome);
    await finishRun(
      { events, lifecycle: this.lifecycle, tools: this.deps.tools, publicBaseUrl: this.deps.config.publicBaseUrl },
      job,
      end,
      seen.values,
      resolved,
      startedAt,
      log,
    );
    instruments().runsFinished.add(1, { status: end.reported });
    if (end.error) span.setStatus({ code: SpanStatusCode.ERROR, message: end.error.message });
    return end.reported;
  }

  /** See abandonRun (run/dead-letter.ts): a job that failed for good before its run recorded an outcome. */
  async abandon(job: RunJob, cause: unknown): Promise<void> {
    await abandonRun(this.deadLetterDeps(), job, cause);
  }

  /** See deadLetterRun (run/dead-letter.ts): a poison or lost queue job (the sweeper). Returns whether this call ended the run. */
  async deadLetter(run: RunRecord, reason: string, payload: Uint8Array | undefined): Promise<boolean> {
    return deadLetterRun(this.deadLetterDeps(), run, reason, payload);
  }

  private deadLetterDeps(): DeadLetterDeps {
    return { store: this.deps.store, events: this.deps.events, lifecycle: this.lifecycle, logger: this.deps.logger, redrive: this.deps.config.delegation };
  }
}
