/**
 * The gateway's run service: the facade the HTTP and gRPC handlers call (admission, cancel,
 * rollback, waits and streams, dead letter). Its parts live in run-service/; this file wires them and
 * keeps the public surface in one place, hence a little over 400 lines.
 */
import type { Bus, RunEndWatch, RunEventStream, StoredRunEvent } from '@agentloop/bus';
import type { JobQueue } from '@agentloop/queue';
import { RunLifecycle, type JsonObject, type RunRecord, type Store, type TenantBudgets, type UploadRecord } from '@agentloop/store';
import { assertNever, errorMessage, newOrderedId, type Logger } from '@agentloop/core';
import { currentTraceparent } from '@agentloop/telemetry';
import type { GatewayConfig } from './config.js';
import { conflict, invalid, notFound } from './errors.js';
import { normalizeStreamModes, runKwargs, type RunCreateBody } from './run-schema.js';
import { mergeAssistantConfig, mergeContext, resolveRunAssistant, type RunAssistant } from './assistant-registry.js';
import { parseAgentConfig } from './assistant-config.js';
import { staticUrlRefusal } from '@agentloop/net';
import { WEBHOOK_WORDING } from './webhooks.js';
import type { ThreadCheckpoints } from './checkpoints.js';
import { isTerminal, RunCancellation, type CancelSelection } from './run-service/cancellation.js';
import { RunRemoval, type CheckpointRewinder } from './run-service/rollback.js';
import { checkQuota, stampedMetadata, stampThread } from './run-service/admission.js';
import { checkTokenBudget } from './run-service/budget-admission.js';
import { cancelMany, cancelWithAction, type CancelAction, type CancelActionDeps } from './run-service/cancel-actions.js';
import { errorFromRecord, EventCursor, type RunErrorInfo } from './run-service/event-cursor.js';
import { waitForRunEnd } from './run-service/wait.js';
import { SkillsConfig } from './skills-config.js';
import { hasUserMessage, isCompactRequest } from './uploads.js';
import { buildRunJob } from './run-service/run-job.js';
import { resolveReplay } from './run-service/replay.js';

export interface RunServiceDeps {
  store: Store;
  runs: JobQueue;
  events: RunEventStream;
  logger: Logger;
  /** Where cancels are broadcast to the orchestrators; without it a running run is only marked. */
  bus?: Bus;
  config: Pick<GatewayConfig, 'RUN_ATTEMPTS' | 'RUN_BACKOFF_MS' | 'RUN_WAIT_MAX_MS' | 'SSE_REPLAY_IDLE_MS'> &
    Partial<Pick<GatewayConfig, 'PROMPT_LANGUAGE' | 'WEBHOOK_ALLOW' | 'TENANT_MAX_ACTIVE_RUNS' | 'TENANT_RUN_QUOTAS'>>;
  /** Upload hints (seed 000 §3.3); without it, file references carry no skill hints. */
  skills?: SkillsConfig;
  /** Deletes checkpoints a rolled-back run wrote; without it, rollback answers 501. */
  rewinder?: CheckpointRewinder;
  /** The thread's latest checkpoint state (a rolled-back thread's record is restored from it). */
  checkpoints?: ThreadCheckpoints;
  /** Tenants' token budgets (issue 17): a tenant over one gets 429 at admission. Absent: none. */
  budgets?: TenantBudgets;
}

export type { CancelAction } from './run-service/cancel-actions.js';

export type { RunErrorInfo } from './run-service/event-cursor.js';

export type WaitResult =
  /** `threadValues`: the thread's values read with the ended run (undefined: not read). */
  | { kind: 'finished'; run: RunRecord; error: RunErrorInfo | undefined; threadValues?: JsonObject | null }
  /** The run record no longer exists (its thread was deleted). */
  | { kind: 'missing' }
  /** The caller's signal aborted first. */
  | { kind: 'aborted' };

export interface CreatedRun {
  run: RunRecord;
  /** True for stateless runs (`POST /runs...`): the thread is temporary. */
  stateless: boolean;
  streamModes: string[];
  /** Whether the temporary thread is removed when the run ends (stateless runs, on_completion != keep). */
  deleteOnCompletion: boolean;
  /**
   * A watch of this run's end, live since before the run was admitted (asked for with
   * `CreateOptions.watchEnd`, when the event stream has watches): pass it to `waitForEnd`.
   */
  endWatch?: RunEndWatch;
}

export interface CreateOptions {
  /**
   * `runs.wait`: watch the new run's end from before it is admitted, until this signal aborts.
   * Such a watch sees every end of the run, so the wait need not read the run's record to learn
   * whether it ended already (run-service/wait.ts; one statement fewer per wait, issue 9).
   */
  watchEnd?: AbortSignal;
}

const NO_SKILLS = SkillsConfig.parse('global: { enabled: false }');

export { isTerminal, type CancelSelection } from './run-service/cancellation.js';

/**
 * Run admission and observation: validates and stores runs, applies the
 * thread's multitask strategy, enqueues the proto RunJob for the orchestrator,
 * and follows a run through its event log (wait, join, stream).
 */
export class RunService {
  /** Every status change of a run goes through the lifecycle (admission, deferral, cancel). */
  readonly lifecycle: RunLifecycle;
  private readonly background = new Set<Promise<void>>();
  private readonly closing = new AbortController();
  private readonly log: Logger;
  private readonly cancellation: RunCancellation;
  private readonly removal: RunRemoval;
  private readonly actions: CancelActionDeps;

  constructor(private readonly deps: RunServiceDeps) {
    this.log = deps.logger.child({ component: 'runs' });
    this.lifecycle = new RunLifecycle(deps.store, { jobs: deps.runs, logger: this.log });
    this.cancellation = new RunCancellation({ store: deps.store, lifecycle: this.lifecycle, log: this.log, bus: deps.bus });
    this.removal = new RunRemoval({
      store: deps.store,
      lifecycle: this.lifecycle,
      events: deps.events,
      log: this.log,
      cancellation: this.cancellation,
      rewinder: deps.rewinder,
      checkpoints: deps.checkpoints,
    });
    this.actions = { store: deps.store, cancellation: this.cancellation, removal: this.removal };
    // A re-driven run starts its event log over (before its job is enqueued): the dead-lettered
    // attempt's `end` would otherwise end every join and stream of the new attempt at once.
    this.lifecycle.on('run.redriven', async (e) => {
      await this.deps.events
        .purge(e.run.runId)
        .catch((err: unknown) => this.log.warn({ run_id: e.run.runId, err: errorMessage(err) }, 'event log of a re-driven run not cleared'));
    });
    // A run ended here (cancelled, or its job could not be enqueued): its waiters and streams end now.
    // The worker executing it (if any) announces again when it stops, which is harmless.
    this.lifecycle.on('run.ended', async (e) => {
      await this.deps.events
        .publish(e.run.runId, e.run.threadId, 'end', null)
        .catch((err: unknown) => this.log.warn({ run_id: e.run.runId, err: errorMessage(err) }, 'end of a run not published'));
    });
  }

  /** Aborted when the gateway shuts down. */
  get closingSignal(): AbortSignal {
    return this.closing.signal;
  }

  /**
   * The checks of a run request beyond its schema: its assistant (the tenant's, at its version in
   * use now), its agent configuration, its webhook URL. Returns the request as the run executes
   * it — the assistant's config and context under the request's own (the request wins key by key),
   * so a later update of the assistant does not change a run already submitted — and the assistant.
   * `POST /runs/batch` checks every payload before creating any.
   */
  async validate(tenantId: string, body: RunCreateBody): Promise<{ body: RunCreateBody; assistant: RunAssistant }> {
    if (body.config) parseAgentConfig(body.config, 'body.config');
    const assistant = await resolveRunAssistant(this.deps.store, tenantId, body.assistant_id);
    if (body.webhook) {
      // SSRF guard, first pass: scheme, credentials, internal IP literals (host names are resolved and checked at delivery).
      const refused = staticUrlRefusal(body.webhook, this.deps.config.WEBHOOK_ALLOW ?? [], WEBHOOK_WORDING);
      if (refused) throw invalid('body.webhook', refused);
    }
    const requestContext = body.context && typeof body.context === 'object' && !Array.isArray(body.context) ? (body.context as JsonObject) : undefined;
    if (body.context !== undefined && body.context !== null && !requestContext) throw invalid('body.context', 'must be an object');
    const context = mergeContext(assistant.context, requestContext);
    const effective: RunCreateBody = {
      ...body,
      config: mergeAssistantConfig(assistant.config, body.config as JsonObject | null | undefined) as RunCreateBody['config'],
      ...(Object.keys(context).length > 0 ? { context } : {}),
    };
    return { body: effective, assistant };
  }

  /** `POST /runs/batch`, before creating any: the tenant's quota leaves room for `n` more runs. */
  async checkBatchQuota(tenantId: string, n: number): Promise<void> {
    await checkTokenBudget(this.deps.budgets, tenantId);
    await checkQuota(this.deps.store, this.deps.config, tenantId, n);
  }

  /**
   * Creates a run: on `threadId` (stateful), or on a new temporary thread when
   * `threadId` is undefined (stateless). Stores it as `pending` and enqueues it,
   * or defers the enqueue until earlier runs finish (multitask_strategy enqueue).
   */
  async create(
    tenantId: string,
    threadId: string | undefined,
    request: RunCreateBody,
    caller: { apiKeyId?: string } = {},
    opts: CreateOptions = {},
  ): Promise<CreatedRun> {
    const { store } = this.deps;
    // Record and replay (issue 17): a replay request becomes the recorded run's request.
    const validated = await this.validate(tenantId, await resolveReplay(store, tenantId, request));
    const body = validated.body;
    const assistantId = validated.assistant.assistant_id;
    const strategy = body.multitask_strategy ?? 'reject';
    const streamModes = normalizeStreamModes(body.stream_mode);
    await checkTokenBudget(this.deps.budgets, tenantId);
    await checkQuota(this.deps.store, this.deps.config, tenantId);
    const stateless = threadId === undefined;
    const runId = newOrderedId();
    // (The thread id is known below: a stateless run gets a new temporary thread.)
    const newRun = (tid: string) => ({
      runId,
      threadId: tid,
      tenantId,
      assistantId,
      metadata: body.metadata ?? {},
      kwargs: runKwargs(body, streamModes),
      multitaskStrategy: strategy,
    });

    const tid = threadId ?? newOrderedId();
    /** The thread's metadata with this run's graph and assistant stamped in, when it lacks them (`stampedMetadata`). */
    let stamp: JsonObject | undefined;
    if (threadId === undefined) {
      await store.createThread({ threadId: tid, tenantId, metadata: { graph_id: 'agent', assistant_id: assistantId, stateless: true } });
    } else {
      const thread = await store.getThread(tenantId, threadId);
      if (!thread) {
        if (body.if_not_exists !== 'create') {
          throw notFound(`Thread ${threadId} not found. Create it with POST /threads, or pass "if_not_exists": "create".`);
        }
        await store.createThread({ threadId, tenantId, metadata: { graph_id: 'agent', assistant_id: assistantId } });
      }
      stamp = thread && stampedMetadata(thread.metadata, assistantId);
      if (isResume(body) && !thread?.activeRunId && thread?.status !== 'interrupted') {
        // LangGraph answers a resume with nothing to resume with an error; a silent 200 would
        // start a run that replays nothing and tell the client its answer was taken.
        throw conflict(
          `Thread ${threadId} has no pending interrupt to resume (its status is ${thread?.status ?? 'idle'}). Send input to start a new run instead of command.resume.`,
        );
      }
    }

    const claimUploads = !stateless && hasUserMessage(body.input) && !isCompactRequest(body.input);
    const jobRequest = {
      runId,
      threadId: tid,
      tenantId,
      assistantId,
      body,
      streamModes,
      ephemeral: stateless,
      traceparent: currentTraceparent(),
      apiKeyId: caller.apiKeyId ?? '',
    };
    const job = (uploads: UploadRecord[]) => buildRunJob(jobRequest, { config: this.deps.config, skills: this.deps.skills ?? NO_SKILLS }, uploads);

    // Live before the admission below: nothing of this run can be published before it exists.
    const endWatch = opts.watchEnd ? this.deps.events.watchEnd?.(runId, opts.watchEnd) : undefined;
    try {
      await endWatch?.ready;
      const created = await this.admit(tenantId, tid, runId, newRun, job, { strategy, claimUploads, stamp });
      const deleteOnCompletion = stateless && body.on_completion !== 'keep';
      // A run that existed already (its id taken before this request) may have ended before the watch.
      const watched = endWatch && created.admittedNow ? { endWatch } : (endWatch?.close(), {});
      return { run: created.run, stateless, streamModes, deleteOnCompletion, ...watched };
    } catch (err) {
      endWatch?.close();
      throw err;
    }
  }

  /** The admission of `create`, under the thread's multitask strategy; then the thread's metadata stamp. */
  private async admit(
    tenantId: string,
    tid: string,
    runId: string,
    newRun: (tid: string) => Parameters<RunLifecycle['admit']>[0]['run'],
    job: Parameters<RunLifecycle['admit']>[0]['job'],
    opts: { strategy: string; claimUploads: boolean; stamp: JsonObject | undefined },
  ): Promise<{ run: RunRecord; admittedNow: boolean }> {
    // The multitask strategy is decided by the database (the thread's guarded hold), so it holds
    // across gateway replicas: "enqueue" stores the run behind the thread's current one (durably;
    // whoever ends that run starts it), "reject" refuses, "interrupt" cancels what is in flight.
    const { strategy, claimUploads } = opts;
    let stamp = opts.stamp;
    let admittedNow = true;
    let run: RunRecord | undefined;
    for (let attempt = 1; run === undefined; attempt++) {
      const whenBusy = strategy === 'enqueue' ? 'defer' : 'reject';
      // A run that takes the thread writes the stamp in the statement that takes it.
      const res = await this.lifecycle.admit({ run: newRun(tid), whenBusy, claimUploads, job, ...(stamp ? { threadMetadata: stamp } : {}) });
      switch (res.kind) {
        case 'admitted':
          stamp = undefined;
          run = res.run;
          break;
        case 'exists':
          admittedNow = false;
          run = res.run;
          break;
        case 'deferred':
          this.log.info({ run_id: runId, thread_id: tid, tenant: tenantId, after: res.behind }, 'run queued behind earlier runs on its thread');
          run = res.run;
          break;
        case 'no_thread':
          throw notFound(`Thread ${tid} not found.`);
        case 'busy':
          if (strategy === 'interrupt' && attempt <= 5) {
            // LangGraph's "interrupt": the runs in progress stop where they are (they keep their
            // checkpoints), then the new run starts on the thread.
            await this.cancellation.interruptThread(tenantId, tid, 'interrupted by a new run (multitask_strategy interrupt)');
            continue;
          }
          if (strategy === 'rollback' && attempt <= 5) {
            // LangGraph's "rollback": the runs in progress stop and are deleted with the
            // checkpoints they wrote, then the new run starts on the thread as it was before them.
            await this.removal.rollbackThread(tenantId, tid, 'rolled back by a new run (multitask_strategy rollback)');
            continue;
          }
          throw conflict(
            `Thread ${tid} already has a ${res.holder?.status ?? 'pending'} run (${res.holder?.runId ?? 'unknown'}). Wait for it to finish, or send "multitask_strategy": "enqueue", "interrupt" or "rollback".`,
          );
        default:
          return assertNever(res, 'admission result');
      }
    }
    await stampThread(this.deps.store, this.log, { tenantId, threadId: tid, metadata: stamp });
    return { run, admittedNow };
  }

  /**
   * Re-drives a dead-lettered run (`POST /threads/{id}/runs/{run_id}/redrive`): through the
   * lifecycle's `redrive` transition it is pending again on its thread with a new queue job
   * (attempts reset), and resumes from its last checkpoint. 409 unless the run is dead-lettered
   * and its thread free; counts against the tenant's active-run quota like a new run.
   */
  async redrive(tenantId: string, run: RunRecord): Promise<RunRecord> {
    if (run.status !== 'error' || !run.deadLetter)
      throw conflict(`Run ${run.runId} is not dead-lettered (status ${run.status}); only dead-lettered runs can be re-driven.`);
    await checkQuota(this.deps.store, this.deps.config, tenantId);
    const res = await this.lifecycle.redrive(tenantId, run.runId);
    switch (res.kind) {
      case 'redriven':
        return res.run;
      case 'not_dead_lettered':
        throw conflict(`Run ${run.runId} is not dead-lettered (status ${res.run.status}); only dead-lettered runs can be re-driven.`);
      case 'thread_busy':
        throw conflict(`Thread ${run.threadId} is busy with run ${res.holder}; cancel it or wait for its end, then re-drive run ${run.runId}.`);
      case 'no_job':
        throw conflict(`Run ${run.runId} has no stored job to re-drive; create a new run instead.`);
      case 'missing':
        throw notFound(`Run ${run.runId} not found.`);
      default:
        return assertNever(res, 'redrive result');
    }
  }

  /** The tenant's dead-lettered runs, newest first (`GET /runs/dead-letter`). */
  listDeadLettered(tenantId: string, page: { limit: number; offset: number }): Promise<RunRecord[]> {
    return this.lifecycle.listDeadLettered(tenantId, page);
  }

  /** Cancels a run (action interrupt): see RunCancellation.cancel. Returns the run as recorded afterwards. */
  cancel(tenantId: string, run: RunRecord, reason = 'cancelled by the client'): Promise<RunRecord> {
    return this.cancellation.cancel(tenantId, run, reason);
  }

  /** Cancels a run with LangGraph's `action` (see cancel-actions.ts); undefined after a rollback (the run is gone). */
  cancelWithAction(tenantId: string, run: RunRecord, action: CancelAction): Promise<RunRecord | undefined> {
    return cancelWithAction(this.actions, tenantId, run, action);
  }

  /** `POST /runs/cancel` (see cancel-actions.ts); returns how many runs it stopped. */
  cancelMany(tenantId: string, selection: CancelSelection, action: CancelAction): Promise<number> {
    return cancelMany(this.actions, tenantId, selection, action);
  }

  /** `DELETE /threads/{id}/runs/{run_id}`: 409 while the run is pending or running. */
  deleteRun(tenantId: string, run: RunRecord): Promise<void> {
    return this.removal.delete(tenantId, run);
  }

  /**
   * Waits until the run reaches a terminal status. Race-free: the event
   * subscription starts before the Store is checked, so an `end` published in
   * between is still seen; a run that has already finished returns at once.
   */
  /** See waitForRunEnd (run-service/wait.ts). */
  waitForEnd(tenantId: string, runId: string, signal: AbortSignal, endWatch?: RunEndWatch): Promise<WaitResult> {
    return waitForRunEnd(this.deps, tenantId, runId, signal, endWatch);
  }

  /**
   * The run's events after `afterId`, ending after `end`. When the run had
   * already finished at subscription time and its log no longer holds the `end`
   * event (trimmed), a synthetic `end` closes the replay after
   * SSE_REPLAY_IDLE_MS of silence. Ends early (without `end`) when the signal
   * aborts or the event stream closes.
   */
  async *events(tenantId: string, runId: string, afterId: number, signal: AbortSignal): AsyncGenerator<StoredRunEvent> {
    const cursor = new EventCursor(this.deps.events, runId, afterId, signal);
    try {
      const rec = await this.deps.store.getRun(tenantId, runId);
      const finished = rec === undefined || isTerminal(rec.status);
      let lastId = afterId;
      for (;;) {
        const ev = await cursor.next(finished ? this.deps.config.SSE_REPLAY_IDLE_MS : undefined);
        if (ev === undefined) return;
        if (ev === 'idle') {
          yield { id: lastId, runId, event: 'end', dataJson: 'null', tsMs: Date.now() };
          return;
        }
        lastId = ev.id;
        yield ev;
        if (ev.event === 'end') return;
      }
    } finally {
      cursor.close();
    }
  }

  /** The response body of /wait and /join: the thread's final values, or `{__error__}` when the run failed. */
  async waitBody(tenantId: string, result: Extract<WaitResult, { kind: 'finished' }>): Promise<JsonObject> {
    if (result.run.status === 'error' || result.run.status === 'timeout') {
      return { __error__: result.error ?? errorFromRecord(result.run) ?? { error: 'Error', message: `Run ${result.run.status}` } };
    }
    if (result.threadValues !== undefined) return result.threadValues ?? {};
    const thread = await this.deps.store.getThread(tenantId, result.run.threadId);
    return thread?.values ?? {};
  }

  /** Removes a stateless run's temporary thread and event log (call once the run has ended). */
  async deleteStateless(tenantId: string, run: RunRecord): Promise<void> {
    await this.deps.store.deleteThread(tenantId, run.threadId);
    await this.deps.events.purge(run.runId).catch((err: unknown) => {
      this.log.warn({ run_id: run.runId, err: errorMessage(err) }, 'could not purge run events');
    });
  }

  /** In the background: waits for the run to end (up to RUN_WAIT_MAX_MS), then removes its temporary thread. */
  cleanupWhenDone(tenantId: string, run: RunRecord): void {
    this.track(
      (async () => {
        const signal = AbortSignal.any([this.closing.signal, AbortSignal.timeout(this.deps.config.RUN_WAIT_MAX_MS)]);
        const result = await this.waitForEnd(tenantId, run.runId, signal);
        if (result.kind === 'finished') await this.deleteStateless(tenantId, run);
        else if (result.kind === 'aborted') {
          this.log.warn({ run_id: run.runId, thread_id: run.threadId, tenant: tenantId }, 'stateless run still unfinished; its temporary thread is kept');
        }
      })(),
    );
  }

  /** Purges the event logs of a thread's runs (thread deletion). */
  async purgeThreadEvents(tenantId: string, threadId: string): Promise<void> {
    const runs = await this.deps.store.listRuns(tenantId, threadId, { limit: 10_000 });
    await Promise.allSettled(runs.map((r) => this.deps.events.purge(r.runId)));
  }

  /** Aborts every wait, stream and background task (gateway shutdown). */
  stop(): void {
    this.closing.abort();
  }

  /** Stops, then waits for background tasks (deferred enqueues, stateless cleanups) to settle. */
  async close(): Promise<void> {
    this.stop();
    await Promise.allSettled([...this.background]);
  }

  private track(p: Promise<void>): void {
    const guarded = p.catch((err: unknown) => this.log.error({ err: errorMessage(err) }, 'background task failed'));
    this.background.add(guarded);
    void guarded.finally(() => this.background.delete(guarded));
  }
}

/** The request resumes an interrupted thread (`command.resume`) rather than starting anew. */
function isResume(body: RunCreateBody): boolean {
  const command = body.command as { resume?: unknown } | null | undefined;
  return command !== null && command !== undefined && command.resume !== undefined && (body.input === undefined || body.input === null);
}
