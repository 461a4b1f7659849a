import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import {
  ORCHESTRATOR_SUBJECTS,
  SAMPLING_SUBJECT,
  onMcpToolsChanged,
  replicaInstance,
  serveClusterReload,
  type Bus,
  type RunEventStream,
  type Subscription,
} from '@agentloop/bus';
import type { CronScheduler, JobQueue, QueueWorker } from '@agentloop/queue';
import { embeddingsFromEnv, OpenAiEmbeddings, StoreItems, TenantBudgets, type Store } from '@agentloop/store';
import { budgetsConfigured, errorMessage, type Logger } from '@agentloop/core';
import { CancelRunSchema, fromBinary } from '@agentloop/proto';
import type { OrchestratorConfig } from './config.js';
import { ModelRegistry, slotsFromEnv } from './models/registry.js';
import { ApprovalClient } from './approval-client.js';
import { SkillsClient } from './skills-client.js';
import { MCP_PROVIDER, SKILLS_PROVIDER, TOOL_RUNNER_PROVIDER, ToolClient } from './tool-client.js';
import { RunExecutor } from './run-executor.js';
import { TenantSlots } from './tenant-slots.js';
import { StepGate } from './step-gate.js';
import { runJobHandler } from './handlers/run-job.js';
import { sweepOrphanedRuns } from './sweeper.js';
import { deleteThreadHandler } from './handlers/delete-thread.js';
import { samplingHandler } from './handlers/sampling.js';
import { TokenAccounting } from './budgets/token-accounting.js';
// Scheduled-task tools (issue 12)
import { ScheduledTasks } from './scheduled-tasks.js';
import { TaskToolClient } from './task-tool-client.js';

export interface OrchestratorDeps {
  bus: Bus;
  store: Store;
  events: RunEventStream;
  runs: JobQueue;
  webhooks: JobQueue;
  checkpointer: BaseCheckpointSaver;
  logger: Logger;
  config: OrchestratorConfig;
  /** Model slots; defaults to the MODEL_* environment. */
  env?: NodeJS.ProcessEnv;
  durability?: 'sync' | 'async' | 'exit';
  /** The crons' scheduler (issue 12): with it, the agent gets schedule_task / list_tasks / delete_task. */
  scheduler?: CronScheduler;
}

export interface Orchestrator {
  start(): Promise<void>;
  /**
   * Stops taking jobs; each in-flight run finishes its current step (within the grace period) and
   * is handed back to the queue from that checkpoint; past the grace period runs are aborted and
   * left resumable from their last checkpoint.
   */
  stop(): Promise<void>;
}

export function createOrchestrator(deps: OrchestratorDeps): Orchestrator {
  const log = deps.logger.child({ component: 'orchestrator' });
  const models = new ModelRegistry(slotsFromEnv(deps.env ?? process.env), deps.config.ALLOW_SCRIPTED_MODEL, deps.env ?? process.env);
  // Tools come from the tool-runner and, when they run, the skill sandbox (`skill`, `run_skill_script`) and the MCP broker.
  const toolOpts = {
    callTimeoutMs: deps.config.TOOL_CALL_TIMEOUT_MS,
    listCacheMs: deps.config.TOOL_LIST_CACHE_MS,
    providers: [TOOL_RUNNER_PROVIDER, SKILLS_PROVIDER, MCP_PROVIDER],
  };
  const tools = deps.scheduler
    ? new TaskToolClient(deps.bus, toolOpts, new ScheduledTasks({ store: deps.store, scheduler: deps.scheduler }))
    : new ToolClient(deps.bus, toolOpts);
  // Long-term memory (issue 12) on the same store, with semantic recall when embeddings are configured.
  const embeddings = embeddingsFromEnv(deps.config);
  const memory = new StoreItems({ store: deps.store, ...(embeddings ? { embedder: new OpenAiEmbeddings(embeddings) } : {}) });
  const budgets = budgetsConfigured(deps.config) ? new TenantBudgets(deps.store, deps.config, { cacheMs: deps.config.TOKEN_BUDGET_CACHE_MS }) : undefined;
  const skills = new SkillsClient(deps.bus);
  const executor = new RunExecutor({
    store: deps.store,
    memory,
    ...(budgets ? { budgets } : {}),
    events: deps.events,
    webhooks: deps.webhooks,
    runs: deps.runs,
    tools,
    skills,
    ...(deps.config.APPROVAL_MODE === 'required' ? { approvals: new ApprovalClient(deps.bus, { timeoutMs: deps.config.APPROVAL_TIMEOUT_MS }) } : {}),
    models,
    checkpointer: deps.checkpointer,
    logger: log,
    config: {
      maxLoopsDefault: deps.config.MAX_LOOPS_DEFAULT,
      runTimeoutMs: deps.config.RUN_TIMEOUT_MS,
      webhookAttempts: deps.config.WEBHOOK_ATTEMPTS,
      webhookBackoffMs: deps.config.WEBHOOK_BACKOFF_MS,
      durability: deps.durability ?? 'sync',
      language: deps.config.PROMPT_LANGUAGE,
      publicBaseUrl: deps.config.PUBLIC_BASE_URL,
      history: { maxMessages: deps.config.MAX_MESSAGE_HISTORY, strategy: deps.config.MESSAGE_HISTORY_STRATEGY },
      compactTokenBudget: deps.config.COMPACT_TOKEN_BUDGET,
      modelSuspendAfterMs: deps.config.MODEL_SUSPEND_AFTER_MS,
      modelWaitsInGraph: deps.config.MODEL_WAITS_IN_GRAPH,
      agentNames: deps.config.AGENT_NAMES,
      recording: { mode: deps.config.RECORD_RUNS, tenants: deps.config.RECORD_RUNS_TENANTS, executeImported: deps.config.ALLOW_SCRIPTED_MODEL },
      delegation: {
        maxDepth: deps.config.DELEGATION_MAX_DEPTH,
        maxParallel: deps.config.DELEGATION_MAX_PARALLEL,
        attempts: deps.config.DELEGATION_RUN_ATTEMPTS,
        backoffMs: deps.config.DELEGATION_RUN_BACKOFF_MS,
      },
    },
  });
  const gate = new StepGate(deps.config.RUN_STEP_CONCURRENCY);
  let worker: QueueWorker | undefined;
  let threadDeletes: Subscription | undefined;
  let cancels: Subscription | undefined;
  let sampling: Subscription | undefined;
  let reloads: Subscription | undefined;
  let mcpToolChanges: Subscription | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  return {
    async start() {
      threadDeletes = await deps.bus.serve(
        ORCHESTRATOR_SUBJECTS.deleteThread,
        { queue: 'orchestrator', description: 'AgentLoop orchestrator: thread checkpoints' },
        deleteThreadHandler({ checkpointer: deps.checkpointer, tools, logger: log }),
      );
      // MCP servers' sampling requests during a run's tool calls, relayed by the MCP broker.
      sampling = await deps.bus.serve(
        SAMPLING_SUBJECT,
        { queue: 'orchestrator', description: 'AgentLoop orchestrator: MCP sampling on the model slots' },
        samplingHandler({
          store: deps.store,
          models,
          tokens: new TokenAccounting({ store: deps.store, ...(budgets ? { budgets } : {}), logger: log }),
          logger: log,
        }),
      );
      // Every replica hears every cancel; the one executing the run aborts it.
      cancels = await deps.bus.subscribe(ORCHESTRATOR_SUBJECTS.cancelRun, async (msg) => {
        try {
          const c = fromBinary(CancelRunSchema, msg.data);
          if (executor.cancel(c.runId, c.reason || 'cancelled by the client')) log.info({ run_id: c.runId, tenant: c.tenantId }, 'cancelling run');
        } catch (err) {
          log.warn({ err: errorMessage(err) }, 'ignoring a malformed cancel message');
        }
      });
      // POST /admin/reload: the tools and skills just reloaded by their services are listed afresh on the
      // next model call (prompts are built per call from code and the thread, so there is nothing else to read).
      reloads = await serveClusterReload(deps.bus, {
        service: 'orchestrator',
        instance: replicaInstance(),
        logger: log,
        reload: async () => ({ tool_listings_dropped: tools.forgetListings(), skill_listings_dropped: skills.forgetListings() }),
      });
      // An MCP server that finished starting (or changed its tools) after a run listed them: the run's
      // next model call lists again instead of using the cached listing (README "MCP calls").
      mcpToolChanges = await onMcpToolsChanged(deps.bus, () => void tools.forgetListings());
      const slots = new TenantSlots(deps.config.TENANT_MAX_CONCURRENT_RUNS, deps.config.TENANT_CONCURRENT_RUNS);
      // A job over its tenant's cap is parked on a queue that can wake it (SQLite, BullMQ), else deferred briefly.
      const parking = deps.runs.wakeParked ? { wakeParked: deps.runs.wakeParked.bind(deps.runs) } : undefined;
      worker = await deps.runs.process(runJobHandler(executor, log, slots, gate, parking), {
        concurrency: deps.config.RUN_CONCURRENCY,
        lockDurationMs: deps.config.RUN_LOCK_MS,
        stalledIntervalMs: deps.config.RUN_STALLED_INTERVAL_MS,
        maxStalledCount: deps.config.RUN_MAX_STALLED,
      });
      if (deps.config.RUN_SWEEP_INTERVAL_MS > 0) {
        sweeper = setInterval(() => {
          void sweepOrphanedRuns({ store: deps.store, runs: deps.runs, executor, logger: log, olderThanMs: deps.config.RUN_SWEEP_AFTER_MS }).catch(
            (err: unknown) => log.warn({ err: errorMessage(err) }, 'orphaned-run sweep failed'),
          );
        }, deps.config.RUN_SWEEP_INTERVAL_MS);
        sweeper.unref();
      }
      log.info(
        {
          concurrency: deps.config.RUN_CONCURRENCY,
          step_concurrency: deps.config.RUN_STEP_CONCURRENCY,
          scripted_allowed: deps.config.ALLOW_SCRIPTED_MODEL,
          slots: models.configuredSlots(),
        },
        'orchestrator started',
      );
    },
    async stop() {
      // In-flight steps finish and are checkpointed; their runs are then handed back for another worker.
      clearInterval(sweeper);
      executor.drain();
      gate.drain();
      await worker?.close(deps.config.SHUTDOWN_GRACE_MS);
      await threadDeletes?.unsubscribe().catch(() => undefined);
      await cancels?.unsubscribe().catch(() => undefined);
      await sampling?.unsubscribe().catch(() => undefined);
      await reloads?.unsubscribe().catch(() => undefined);
      await mcpToolChanges?.unsubscribe().catch(() => undefined);
      log.info('orchestrator stopped');
    },
  };
}
