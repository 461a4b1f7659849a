import { z } from 'zod';
import { embeddingsFromEnv } from '@agentloop/store';
import { envBaseUrl, envBool, envInt, envOptionalInt, envTenantNumbers, parseConfig, TokenBudgetEnv } from '@agentloop/core';
import { MAX_WEIGHT } from '@agentloop/queue';
import { PROMPT_LANGUAGES } from './prompts.js';
import { HISTORY_STRATEGIES, MAX_MESSAGE_HISTORY_DEFAULT, MAX_MESSAGE_HISTORY_MAX, MAX_MESSAGE_HISTORY_MIN } from './history.js';
import { DEFAULT_AGENT_NAMES } from './mentions.js';
import { RECORD_MODES } from './recording/run-tape.js';

/** Default of RUN_CONCURRENCY (the launchers derive the per-tenant cap from it, apps/agentloop/src/defaults.ts). */
export const RUN_CONCURRENCY_DEFAULT = 10_000;

/** Default of MODEL_SUSPEND_AFTER_MS (the ADR says how it was chosen). */
export const MODEL_SUSPEND_AFTER_MS_DEFAULT = 250;

/** Default of MODEL_WAITS_IN_GRAPH: ~100 MB of invocations at most (the ADR says why). */
export const MODEL_WAITS_IN_GRAPH_DEFAULT = 1_000;

export const OrchestratorEnv = z.object({
  NATS_URL: z.string().optional(),
  REDIS_URL: z.string().optional(),
  MYSQL_URL: z.string().optional(),
  LOG_LEVEL: z.string().default('info'),
  /**
   * Runs one worker process holds in flight at once, most of them waiting on their model (issue 9:
   * 10,000). What bounds CPU-bound work is RUN_STEP_CONCURRENCY; see step-gate.ts.
   */
  RUN_CONCURRENCY: envInt(RUN_CONCURRENCY_DEFAULT, 1, 100_000),
  /**
   * Runs of one worker process executing their CPU-bound part (graph steps, tool calls,
   * checkpoints) at once; a run waiting on its model holds no such slot. See step-gate.ts.
   */
  RUN_STEP_CONCURRENCY: envInt(8, 1, 1_024),
  /**
   * How long (ms) the agent step's model call may take before its run suspends: the graph
   * invocation ends and only the pending call is kept until it answers, then the run resumes from
   * its checkpoint (docs/adr/0010-suspend-while-the-model-thinks.md). 0: never suspend.
   */
  MODEL_SUSPEND_AFTER_MS: envInt(MODEL_SUSPEND_AFTER_MS_DEFAULT, 0, 3_600_000),
  /**
   * How many runs of one orchestrator may go on waiting on their model inside their graph
   * invocation past MODEL_SUSPEND_AFTER_MS (~97 KiB of heap each) before further runs suspend: a
   * restart after the answer costs CPU, so runs suspend only when this many already wait. 0: every
   * call pending after the grace period suspends (models/model-suspension.ts InGraphModelWaits).
   */
  MODEL_WAITS_IN_GRAPH: envInt(MODEL_WAITS_IN_GRAPH_DEFAULT, 0, 1_000_000),
  /**
   * Runs of one tenant one worker process executes at once (0: no cap); a job over it is deferred
   * so other tenants' jobs go first. The launchers set half of RUN_CONCURRENCY when API keys are
   * configured (several tenants share the workers); see tenant-slots.ts.
   */
  TENANT_MAX_CONCURRENT_RUNS: envInt(0, 0, 100_000),
  /** Per-tenant overrides of TENANT_MAX_CONCURRENT_RUNS: `acme=8,globex=2` (0: no cap for that tenant). */
  TENANT_CONCURRENT_RUNS: envTenantNumbers('TENANT_CONCURRENT_RUNS', 0, 100_000),
  /**
   * Fair scheduling (docs/adr/0008-fair-scheduling.md): each tenant's share of the workers while
   * several have runs queued, `acme=3,globex=1` (1..100, default 1). Used where this service
   * enqueues runs (delegated agents, resumes); the gateway must be given the same.
   */
  TENANT_WEIGHTS: envTenantNumbers('TENANT_WEIGHTS', 1, MAX_WEIGHT),
  /**
   * Bytes of run events kept for re-joining streams, all runs together (oldest dropped first).
   * Unset: 64 MiB in memory (embedded), 1 GiB in the JetStream stream. The gateway and the
   * orchestrators must agree: both create the stream.
   */
  RUN_EVENTS_MAX_BYTES: envOptionalInt(1024 * 1024, 1024 ** 4),
  /** Deadline of one tool call over the bus. */
  TOOL_CALL_TIMEOUT_MS: envInt(60_000, 100, 3_600_000),
  /**
   * How long a tool listing (per tenant and visibility) is reused across model calls; a cluster
   * reload or an MCP server whose tools became known drops it sooner.
   */
  TOOL_LIST_CACHE_MS: envInt(5_000, 0, 3_600_000),
  /**
   * Tool approval (seed 001 Part 7): `required` checks every tool call with the approval service
   * and does not run a call it cannot get a verdict for (fail closed); `off` skips the checks.
   */
  APPROVAL_MODE: z.enum(['required', 'off']).default('required'),
  APPROVAL_TIMEOUT_MS: envInt(5_000, 100, 600_000),
  /** Wall-clock limit of a whole run; it ends as `timeout`. */
  RUN_TIMEOUT_MS: envInt(900_000, 1_000, 86_400_000),
  /** Default max_loops of a run (seed 000: 100, 1–500). */
  MAX_LOOPS_DEFAULT: envInt(100, 1, 500),
  ALLOW_SCRIPTED_MODEL: envBool(false),
  /** Webhook delivery attempts (first try included) and backoff base. */
  WEBHOOK_ATTEMPTS: envInt(6, 1, 20),
  WEBHOOK_BACKOFF_MS: envInt(1_000, 10, 600_000),
  /** BullMQ lock/stalled intervals for crash takeover. */
  RUN_LOCK_MS: envInt(10_000, 1_000, 600_000),
  RUN_STALLED_INTERVAL_MS: envInt(5_000, 500, 600_000),
  /** Times a run may be taken over after its worker died before it is failed (BullMQ maxStalledCount). */
  RUN_MAX_STALLED: envInt(20, 1, 1000),
  SHUTDOWN_GRACE_MS: envInt(20_000, 0, 600_000),
  /** How often to look for runs whose queue job failed outside our handler, and how old such a run must be (0 disables). */
  RUN_SWEEP_INTERVAL_MS: envInt(60_000, 0, 86_400_000),
  RUN_SWEEP_AFTER_MS: envInt(60_000, 1_000, 86_400_000),
  /** Public base URL of the API; makes artifact download URLs absolute (else they are paths). */
  PUBLIC_BASE_URL: envBaseUrl(),
  /** Language of prompts, system reminders and orchestrator messages. */
  PROMPT_LANGUAGE: z.enum(PROMPT_LANGUAGES).default('en'),
  /** Messages of history sent to the model (seed 001 §4.1: default 40, 10–100); state keeps all. */
  MAX_MESSAGE_HISTORY: envInt(MAX_MESSAGE_HISTORY_DEFAULT, MAX_MESSAGE_HISTORY_MIN, MAX_MESSAGE_HISTORY_MAX),
  /** clean (whole recent turns, older turns condensed) or truncate (first + last N). */
  MESSAGE_HISTORY_STRATEGY: z.enum(HISTORY_STRATEGIES).default('clean'),
  /** Compact the conversation when the next model input is estimated above this many tokens; 0 disables. */
  COMPACT_TOKEN_BUDGET: z.coerce
    .number()
    .int()
    .refine((v) => v === 0 || (v >= 1_000 && v <= 10_000_000), { message: 'must be 0 (off) or between 1000 and 10000000' })
    .default(100_000),
  /** Nesting of delegated agents: 1 = children, no grandchildren; 0 disables delegate_task. */
  DELEGATION_MAX_DEPTH: envInt(1, 0, 5),
  /** delegate_task calls one step may start at once (the rest are refused with an Error: message). */
  DELEGATION_MAX_PARALLEL: envInt(8, 1, 64),
  /** Attempts and backoff of the jobs of delegated runs and of their parents' resumes. */
  DELEGATION_RUN_ATTEMPTS: envInt(3, 1, 100),
  DELEGATION_RUN_BACKOFF_MS: envInt(1_000, 0, 600_000),
  /** Names an @mention can address as a delegated agent, comma-separated. */
  AGENT_NAMES: z
    .string()
    .default(DEFAULT_AGENT_NAMES.join(','))
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  /**
   * Record and replay (issue 17): which runs are recorded. `all` (the embedded launcher's default)
   * records every run but those with `config.configurable.record: false`; `opt-in` (default) the runs
   * with `record: true` and those of RECORD_RUNS_TENANTS; `off` none.
   */
  RECORD_RUNS: z.enum(RECORD_MODES).default('opt-in'),
  /** Tenants (comma-separated) whose runs are recorded in opt-in mode without asking. */
  RECORD_RUNS_TENANTS: z
    .string()
    .default('')
    .transform(
      (v) =>
        new Set(
          v
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s.length > 0),
        ),
    ),
  // Store items (issue 12): the embeddings of the memory tools' semantic recall (libs/store embeddings.ts); unset model: text match.
  STORE_EMBEDDINGS_MODEL: z.string().optional(),
  STORE_EMBEDDINGS_BASE_URL: z.string().optional(),
  STORE_EMBEDDINGS_API_KEY: z.string().optional(),
  STORE_EMBEDDINGS_DIMS: z.string().optional(),
  /** Tenants' daily and monthly token budgets (issue 17), the same variables as the gateway's. */
  ...TokenBudgetEnv.shape,
  /** How long one read of a tenant's usage answers the budget checks of this process's model calls (ms). */
  TOKEN_BUDGET_CACHE_MS: envInt(2_000, 0, 600_000),
});
export type OrchestratorConfig = z.infer<typeof OrchestratorEnv>;

export function loadOrchestratorConfig(env: NodeJS.ProcessEnv = process.env): OrchestratorConfig {
  const config = parseConfig(OrchestratorEnv, env);
  embeddingsFromEnv(config); // a bad STORE_EMBEDDINGS_* value stops the process at boot
  return config;
}
