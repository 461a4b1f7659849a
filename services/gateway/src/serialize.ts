/**
 * Store records → the JSON shapes of the LangGraph Platform API (snake_case,
 * ISO timestamps), as `@langchain/langgraph-sdk` types them.
 */
import type { JsonObject, RunRecord, RunStatusName, ThreadRecord, ThreadStatus } from '@agentloop/store';

/** The graph every run executes. */
export const GRAPH_ID = 'agent';
/**
 * The default assistant's id. LangGraph derives a graph's default assistant id
 * as uuid5(6ba7b821-9dad-11d1-80b4-00c04fd430c8, graph_id); for "agent" that is
 * this value, so clients that hard-code it keep working.
 */
export const DEFAULT_ASSISTANT_ID = 'fe096781-5601-53d2-b2f6-0d3403f7e9ca';
/** Fixed creation time of the built-in assistant (it never changes). */
const ASSISTANT_CREATED_AT = '2025-01-01T00:00:00.000Z';

export interface ApiThread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: JsonObject;
  status: ThreadStatus;
  values: JsonObject | null;
  interrupts: Record<string, unknown[]>;
}

export interface ApiRun {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatusName;
  metadata: JsonObject;
  kwargs: JsonObject;
  multitask_strategy: string;
  /** Only on a dead-lettered run (status error): why its job failed for good, and when (`GET /runs/dead-letter`). */
  dead_letter?: { reason: string; dead_lettered_at: string };
}

export interface ApiAssistant {
  assistant_id: string;
  graph_id: string;
  config: JsonObject;
  context: JsonObject;
  metadata: JsonObject;
  name: string;
  description: string | null;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface ApiCheckpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
}

export interface ApiThreadState {
  values: JsonObject;
  next: string[];
  tasks: unknown[];
  checkpoint: ApiCheckpoint;
  metadata: JsonObject;
  created_at: string;
  parent_checkpoint: ApiCheckpoint | null;
  interrupts: unknown[];
}

/**
 * Interrupts the thread's last run stopped at, waiting for a human (tool approval, ask_human):
 * the orchestrator stores them under `__interrupt__` in the values, as `runs.wait` reports them.
 */
export function pendingInterrupts(values: JsonObject | null): Array<{ id?: string; value: unknown }> {
  const list = values?.__interrupt__;
  return Array.isArray(list) ? (list as Array<{ id?: string; value: unknown }>) : [];
}

/** The node a pending interrupt belongs to (LangGraph reports interrupts per task). */
function interruptNode(i: { value: unknown }): string {
  const type = (i.value as { type?: unknown } | null)?.type;
  return type === 'user_input_request' ? 'human' : type === 'mcp_elicitation' ? 'elicit' : 'await_approval';
}

export function toApiThread(t: ThreadRecord): ApiThread {
  const updated = t.updatedAt.toISOString();
  return {
    thread_id: t.threadId,
    created_at: t.createdAt.toISOString(),
    updated_at: updated,
    state_updated_at: updated,
    metadata: t.metadata,
    status: t.status,
    values: t.values,
    interrupts: t.status === 'interrupted' ? interruptsByTask(t) : {},
  };
}

function interruptsByTask(t: ThreadRecord): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const i of pendingInterrupts(t.values)) (out[`${t.threadId}:${interruptNode(i)}`] ??= []).push(i);
  return out;
}

export function toApiRun(r: RunRecord): ApiRun {
  return {
    run_id: r.runId,
    thread_id: r.threadId,
    assistant_id: r.assistantId,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
    status: r.status,
    metadata: r.metadata,
    kwargs: r.kwargs,
    multitask_strategy: r.multitaskStrategy,
    ...(r.deadLetter ? { dead_letter: { reason: r.deadLetter.reason, dead_lettered_at: r.deadLetter.at.toISOString() } } : {}),
  };
}

/** The thread's latest state, built from the values the orchestrator wrote at the end of its last run. */
export function toApiThreadState(t: ThreadRecord): ApiThreadState {
  const interrupts = t.status === 'interrupted' ? pendingInterrupts(t.values) : [];
  const nodes = [...new Set(interrupts.map(interruptNode))];
  return {
    values: t.values ?? {},
    next: nodes,
    tasks: nodes.map((name) => ({
      id: `${t.threadId}:${name}`,
      name,
      path: ['__pregel_pull', name],
      error: null,
      interrupts: interrupts.filter((i) => interruptNode(i) === name),
      checkpoint: null,
      state: null,
      result: null,
    })),
    checkpoint: { thread_id: t.threadId, checkpoint_ns: '', checkpoint_id: null },
    metadata: t.metadata,
    created_at: t.updatedAt.toISOString(),
    parent_checkpoint: null,
    interrupts,
  };
}

export function defaultAssistant(): ApiAssistant {
  return {
    assistant_id: DEFAULT_ASSISTANT_ID,
    graph_id: GRAPH_ID,
    config: {},
    context: {},
    metadata: {},
    name: GRAPH_ID,
    description: 'AgentLoop agent: model ⇄ tools loop with a finalize step.',
    created_at: ASSISTANT_CREATED_AT,
    updated_at: ASSISTANT_CREATED_AT,
    version: 1,
  };
}
