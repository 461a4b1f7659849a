import { currentTraceparent } from '@agentloop/telemetry';
import { createHash } from 'node:crypto';
import { clone, create, DelegationSchema, RunJobSchema, toBinary, type Delegation, type RunJob } from '@agentloop/proto';
import type { JobQueue } from '@agentloop/queue';
import type { JsonObject, RunLifecycle, RunRecord, Store } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import { MAX_LOOPS_MAX, MAX_LOOPS_MIN } from './limits.js';
import { promptTexts, type PromptLanguage } from './prompts.js';

/**
 * Delegated agents (seed 001 Part 5). A `delegate_task` call becomes a child
 * run with its own thread and context, the parent's workspace, and the
 * delegated-agent prompt. The parent does not wait in a worker slot: its graph
 * interrupts with a {@link DelegationRequest}, the executor starts the children
 * (one `runs` job each) and ends the parent's job; the last child to finish
 * enqueues the job that resumes the parent with every child's answer.
 */

/** `max_loops` of a delegated agent when the call gives none (seed 001 §5.2). */
export const DELEGATE_MAX_LOOPS_DEFAULT = 15;
/** Longest task text a delegate_task call may carry. */
export const DELEGATE_TASK_MAX_CHARS = 20_000;
/** `type` of the interrupt value the delegate node raises. */
export const DELEGATION_INTERRUPT = 'agentloop_delegation';

export interface DelegationLimits {
  /** Nesting allowed: 1 = children but no grandchildren (`DELEGATION_MAX_DEPTH`); 0 disables delegation. */
  maxDepth: number;
  /** delegate_task calls started in one step (`DELEGATION_MAX_PARALLEL`); later calls of the step are refused. */
  maxParallel: number;
}

export const DEFAULT_DELEGATION_LIMITS: DelegationLimits = { maxDepth: 1, maxParallel: 8 };

export type DelegateArgs = { ok: true; task: string; maxLoops: number } | { ok: false; error: string };

/** Validates the arguments of a delegate_task call: a non-empty task, max_loops an integer in 1–500 (default 15). */
export function parseDelegateArgs(args: unknown, language: PromptLanguage = 'en'): DelegateArgs {
  const e = promptTexts(language).delegateErrors;
  const a = (args && typeof args === 'object' ? args : {}) as Record<string, unknown>;
  const task = typeof a.task === 'string' ? a.task.trim() : '';
  if (!task) return { ok: false, error: e.taskRequired };
  if (task.length > DELEGATE_TASK_MAX_CHARS) return { ok: false, error: e.taskTooLong(DELEGATE_TASK_MAX_CHARS) };
  const raw = a.max_loops ?? null;
  if (raw === null) return { ok: true, task, maxLoops: DELEGATE_MAX_LOOPS_DEFAULT };
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < MAX_LOOPS_MIN || n > MAX_LOOPS_MAX) {
    return { ok: false, error: e.badMaxLoops(MAX_LOOPS_MIN, MAX_LOOPS_MAX, raw) };
  }
  return { ok: true, task, maxLoops: n };
}

/** A UUID (version 8, RFC 9562 "custom") derived from text: the same text always gives the same id. */
function hashUuid(text: string): string {
  const h = createHash('sha256').update(text).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

/** The child run answering one delegate_task call: derived, so a retried parent never starts it twice. */
export const childRunId = (parentRunId: string, toolCallId: string): string => hashUuid(`agentloop/delegation/run/${parentRunId}/${toolCallId}`);
/** The child's own thread (its context: the parent's history is never in it). */
export const childThreadId = (runId: string): string => hashUuid(`agentloop/delegation/thread/${runId}`);
/** One delegation step of a parent run: every delegate_task call of one AI message. */
export const delegationId = (parentRunId: string, toolCallIds: readonly string[]): string =>
  createHash('sha256')
    .update(`${parentRunId}\u0000${[...toolCallIds].sort().join('\u0000')}`)
    .digest('hex')
    .slice(0, 24);
/** Job id of the job resuming a parent after one delegation step (no ':', BullMQ rejects it). */
export const resumeJobId = (parentRunId: string, id: string): string => `${parentRunId}-resume-${id}`;

/** One child the delegate node asks for. */
export interface DelegatedChild {
  tool_call_id: string;
  run_id: string;
  thread_id: string;
  task: string;
  max_loops: number;
  /** The child's run config (`configurable.model` from `configurable.delegates`, `max_loops`). */
  config: JsonObject;
}

/** Value of the delegate node's interrupt: the graph is suspended until these children finish. */
export interface DelegationRequest {
  type: typeof DELEGATION_INTERRUPT;
  delegation_id: string;
  children: DelegatedChild[];
}

/** A child's outcome as the parent receives it: its final answer, or an `Error:` text. */
export interface DelegatedResult {
  content: string;
  is_error: boolean;
  run_id: string;
  status: string;
}

/** The resume value of a delegation step (`command.resume` of the resume job). */
export interface DelegationResume {
  delegation_id: string;
  results: Record<string, DelegatedResult>;
}

export function isDelegationRequest(v: unknown): v is DelegationRequest {
  return !!v && typeof v === 'object' && (v as { type?: unknown }).type === DELEGATION_INTERRUPT && Array.isArray((v as { children?: unknown }).children);
}

/** The delegation a graph state is suspended on, if any (from `graph.getState().tasks[].interrupts`). */
export function pendingDelegation(snapshot: { tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ value?: unknown }> }> }): DelegationRequest | undefined {
  for (const t of snapshot.tasks ?? []) {
    for (const i of t.interrupts ?? []) if (isDelegationRequest(i.value)) return i.value;
  }
  return undefined;
}

export type ChildConfig = { ok: true; config: JsonObject } | { ok: false; error: string };

const isObject = (v: unknown): v is JsonObject => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * The run config of a child. Its model comes from `configurable.delegates`,
 * keyed by the exact task text, else by the call's index among the
 * delegate_task calls of its AI message ("0", "1"...), else "*". An entry is
 * an array of scripted turns, any `configurable.model` value (a scripted spec
 * or a slot), or `{model, delegates}` (the child's own `delegates`, for
 * grandchildren). Without an entry the child uses the parent's model — except
 * a scripted one, whose turns belong to the parent: that is an error.
 * Every other `configurable` key is inherited; `max_loops` is the call's.
 */
export function childConfig(parentConfig: JsonObject, child: { task: string; index: number; maxLoops: number }): ChildConfig {
  const configurable = isObject(parentConfig.configurable) ? parentConfig.configurable : {};
  // A replay's marker (issue 17) stays with the replayed run: its children are not replays of it.
  const { delegates, model: parentModel, max_loops: _ignored, agentloop_replay: _replay, ...inherited } = configurable;
  const table = isObject(delegates) ? delegates : {};
  const entry = table[child.task] ?? table[String(child.index)] ?? table['*'];
  let model: unknown;
  let childDelegates: unknown;
  if (entry === undefined || entry === null) {
    if (isObject(parentModel) && parentModel.provider === 'scripted') {
      return {
        ok: false,
        error:
          'this run uses the scripted model and configurable.delegates has no script for this task ' + `(keys tried: the task text, "${child.index}", "*")`,
      };
    }
    model = parentModel;
  } else if (Array.isArray(entry)) {
    model = { provider: 'scripted', turns: entry };
  } else if (isObject(entry) && !('provider' in entry) && ('model' in entry || 'delegates' in entry)) {
    model = entry.model;
    childDelegates = entry.delegates;
  } else {
    model = entry;
  }
  return {
    ok: true,
    config: {
      ...parentConfig,
      configurable: {
        ...inherited,
        ...(model !== undefined ? { model } : {}),
        ...(childDelegates !== undefined ? { delegates: childDelegates } : {}),
        max_loops: child.maxLoops,
      },
    },
  };
}

/** Text of the last AI message of serialized state values (`{messages:[{type, content}]}`). */
export function finalAnswer(values: JsonObject | null | undefined): string {
  const messages = Array.isArray(values?.messages) ? (values.messages as unknown[]) : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { type?: unknown; content?: unknown } | undefined;
    if (m?.type !== 'ai') continue;
    if (typeof m.content === 'string') return m.content;
    if (Array.isArray(m.content)) {
      return m.content
        .map((p: unknown) =>
          typeof p === 'string'
            ? p
            : p && typeof p === 'object' && (p as { type?: unknown }).type === 'text'
              ? String((p as { text?: unknown }).text ?? '')
              : '',
        )
        .join('');
    }
    return '';
  }
  return '';
}

/** What the parent is told of a finished child run. */
export function childResult(
  run: Pick<RunRecord, 'runId' | 'status' | 'error'>,
  values: JsonObject | null | undefined,
  language: PromptLanguage = 'en',
): DelegatedResult {
  const t = promptTexts(language);
  if (run.status === 'success') {
    const answer = finalAnswer(values).trim();
    return { content: answer || t.delegateEmptyAnswer, is_error: false, run_id: run.runId, status: run.status };
  }
  const detail = run.error ?? `the delegated agent's run ended with status ${run.status}`;
  return { content: t.delegateFailed(detail), is_error: true, run_id: run.runId, status: run.status };
}

const TERMINAL = new Set(['success', 'error', 'timeout', 'interrupted']);

export interface DelegationCoordinatorDeps {
  store: Pick<Store, 'createThread' | 'getRun' | 'getThread' | 'claimToolEffect' | 'completeToolEffect' | 'listToolEffects'>;
  /** Children are admitted on their threads through the run lifecycle (an existing child is kept). */
  lifecycle: Pick<RunLifecycle<never>, 'admit'>;
  runs: Pick<JobQueue, 'enqueue'>;
  logger: Logger;
  language?: PromptLanguage;
  /** Attempts and backoff of child and resume jobs (like the gateway's RUN_ATTEMPTS). */
  attempts: number;
  backoffMs: number;
}

/**
 * Starts children and resumes parents. Every step is idempotent, because any
 * of them may run again after a crash: records are created with derived ids
 * (an existing one is kept), jobs are deduplicated by job id, each
 * delegate_task call is an entry of the parent's effect ledger (claimed when
 * the child is started, completed with the child's answer when it ends), and
 * the resume job is dropped by the parent's executor unless the parent still
 * waits on that very step.
 */
export class DelegationCoordinator {
  constructor(private readonly deps: DelegationCoordinatorDeps) {}

  /**
   * Records and enqueues the children of a suspended parent. Called by the
   * parent's executor once the interrupt is checkpointed, so a child can
   * never finish before its parent is resumable.
   */
  async start(parent: RunJob, request: DelegationRequest, parentDepth: number): Promise<void> {
    const { store, runs } = this.deps;
    const log = this.deps.logger.child({ run_id: parent.runId, delegation_id: request.delegation_id });
    const template = clone(RunJobSchema, parent);
    template.inputJson = '';
    template.commandJson = '';
    template.resumeDelegationId = '';
    const siblings = request.children.map((c) => c.tool_call_id);
    const workspaceThreadId = parent.workspaceThreadId || parent.threadId;
    for (const child of request.children) {
      const link = { parent_run_id: parent.runId, parent_thread_id: parent.threadId, tool_call_id: child.tool_call_id };
      await store.createThread({ threadId: child.thread_id, tenantId: parent.tenantId, metadata: { ...link, delegated: true } });
      const input = { messages: [{ role: 'user', content: child.task }] };
      const job = create(RunJobSchema, {
        runId: child.run_id,
        threadId: child.thread_id,
        tenantId: parent.tenantId,
        // The child's spans join the parent run's trace.
        traceparent: currentTraceparent() || parent.traceparent,
        assistantId: parent.assistantId,
        inputJson: JSON.stringify(input),
        configJson: JSON.stringify(child.config),
        metadataJson: JSON.stringify(link),
        timeoutMs: parent.timeoutMs,
        workspaceThreadId,
        // With stream_subgraphs the child's events also reach the parent's stream (run/subgraph-events.ts),
        // in the modes the parent's client asked for; interrupt_before/after stay the parent's own.
        ...(parent.streamSubgraphs ? { streamSubgraphs: true, streamMode: [...parent.streamMode] } : {}),
        delegation: create(DelegationSchema, {
          parentRunId: parent.runId,
          parentThreadId: parent.threadId,
          toolCallId: child.tool_call_id,
          delegationId: request.delegation_id,
          siblingToolCallIds: siblings,
          depth: parentDepth + 1,
          parentJob: template,
        }),
      });
      const payload = toBinary(RunJobSchema, job);
      await this.deps.lifecycle.admit({
        run: {
          runId: child.run_id,
          threadId: child.thread_id,
          tenantId: parent.tenantId,
          assistantId: parent.assistantId,
          metadata: { ...link, delegation_id: request.delegation_id, depth: parentDepth + 1, workspace_thread_id: workspaceThreadId },
          kwargs: { input, config: child.config },
        },
        // The child's thread is its own: only a retry of this very step finds it held (by the child).
        whenBusy: 'reject',
        // Stored with the run (a dead-lettered child can be re-driven); enqueued below, once the
        // parent's ledger entry is claimed.
        job: () => ({ payload, attempts: this.deps.attempts, backoffMs: this.deps.backoffMs }),
        callerEnqueues: true,
      });
      const { effect } = await store.claimToolEffect({
        tenantId: parent.tenantId,
        threadId: parent.threadId,
        runId: parent.runId,
        toolCallId: child.tool_call_id,
        toolName: 'delegate_task',
      });
      if (effect.state === 'completed') continue; // finished before a crash of the parent's job
      const { added } = await runs.enqueue(payload, {
        jobId: child.run_id,
        attempts: this.deps.attempts,
        backoffMs: this.deps.backoffMs,
        group: parent.tenantId,
      });
      log.info({ child_run_id: child.run_id, child_thread_id: child.thread_id, tool_call_id: child.tool_call_id, added }, 'delegated agent started');
    }
    // Every child may already be done (the parent's job crashed after they finished): resume now.
    await this.resumeIfComplete(parent.tenantId, {
      parentRunId: parent.runId,
      delegationId: request.delegation_id,
      siblingToolCallIds: siblings,
      parentJob: template,
    });
  }

  /**
   * A child run ended (or its job ran again after it ended): record its answer
   * in the parent's ledger and, when it was the last of its step, resume the parent.
   */
  async childFinished(child: RunJob): Promise<void> {
    const d = child.delegation;
    if (!d) return;
    const { store } = this.deps;
    const log = this.deps.logger.child({ run_id: child.runId, parent_run_id: d.parentRunId });
    const run = await store.getRun(child.tenantId, child.runId);
    if (!run || !TERMINAL.has(run.status)) {
      log.warn({ status: run?.status }, 'delegated run not finished; parent not notified');
      return;
    }
    const thread = await store.getThread(child.tenantId, child.threadId);
    const result = childResult(run, thread?.values, this.deps.language);
    await store.completeToolEffect(child.tenantId, d.parentRunId, d.toolCallId, { content: result.content, isError: result.is_error });
    const resumed = await this.resumeIfComplete(child.tenantId, d);
    log.info({ status: run.status, parent_resumed: resumed }, 'delegated agent finished');
  }

  /** Enqueues the parent's resume job when every child of the step has an answer in the ledger. */
  private async resumeIfComplete(tenantId: string, d: Pick<Delegation, 'parentRunId' | 'delegationId' | 'siblingToolCallIds' | 'parentJob'>): Promise<boolean> {
    const effects = await this.deps.store.listToolEffects(tenantId, d.parentRunId);
    const byCall = new Map(effects.map((e) => [e.toolCallId, e]));
    const results: Record<string, DelegatedResult> = {};
    for (const id of d.siblingToolCallIds) {
      const e = byCall.get(id);
      if (!e || e.state !== 'completed') return false;
      const runId = childRunId(d.parentRunId, id);
      const run = await this.deps.store.getRun(tenantId, runId);
      results[id] = { content: e.content ?? '', is_error: e.isError, run_id: runId, status: run?.status ?? 'unknown' };
    }
    if (!d.parentJob) throw new Error(`internal: delegation ${d.delegationId} of run ${d.parentRunId} carries no parent job`);
    const resume: DelegationResume = { delegation_id: d.delegationId, results };
    const job = clone(RunJobSchema, d.parentJob);
    job.inputJson = '';
    job.commandJson = JSON.stringify({ resume });
    job.resumeDelegationId = d.delegationId;
    try {
      const { added } = await this.deps.runs.enqueue(toBinary(RunJobSchema, job), {
        jobId: resumeJobId(d.parentRunId, d.delegationId),
        attempts: this.deps.attempts,
        backoffMs: this.deps.backoffMs,
        group: job.tenantId,
      });
      this.deps.logger.info({ run_id: d.parentRunId, delegation_id: d.delegationId, added }, 'parent run resume enqueued');
    } catch (err) {
      this.deps.logger.error({ run_id: d.parentRunId, err: errorMessage(err) }, 'could not enqueue the parent resume');
      throw err;
    }
    return true;
  }
}
