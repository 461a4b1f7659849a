/**
 * Thread states read from the checkpoints, as LangGraph Platform's `/threads/{id}/history`,
 * `/threads/{id}/state/{checkpoint_id}` and `POST /threads/{id}/state/checkpoint` return them.
 * A reader compiles the agent graph over a checkpoint saver (no node ever runs: the graph only
 * computes `next` and `tasks` of each checkpoint), so the gateway of either mode can serve them:
 * embedded hands it the orchestrator's SqliteSaver, the cluster gateway a MySQLSaver of its own
 * on the same tables. Values get the filtering of GET /state (publicValues); the tenant-prefixed
 * checkpoint thread id never leaves: payloads carry the public thread id.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { StateSnapshot } from '@langchain/langgraph';
import type { JsonObject } from '@agentloop/store';
import { buildAgentGraph, type AgentGraph } from './graph.js';
import { publicValues, humanInterrupts } from './run/values.js';
import { toJsonValue } from './serialize.js';

/** A checkpoint address as the API shows it. */
export interface ApiCheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
}

/** One thread state of the history (the SDK's ThreadState). */
export interface CheckpointThreadState {
  values: JsonObject;
  next: string[];
  tasks: Array<{
    id: string;
    name: string;
    path: unknown[];
    error: string | null;
    interrupts: Array<{ id?: string; value: unknown }>;
    checkpoint: null;
    state: null;
    result: unknown;
  }>;
  checkpoint: ApiCheckpointRef;
  parent_checkpoint: ApiCheckpointRef | null;
  metadata: JsonObject;
  created_at: string | null;
  interrupts: Array<{ id?: string; value: unknown }>;
}

/** Which checkpoint: its id (absent = the latest) and namespace. */
export interface CheckpointSelector {
  checkpoint_id?: string | null;
  checkpoint_ns?: string | null;
}

export interface HistoryOptions {
  limit?: number;
  /** Only checkpoints older than this one. */
  before?: CheckpointSelector | null;
  /** Only checkpoints whose metadata has these values. */
  metadata?: JsonObject | null;
  /** Where the history starts (that checkpoint and its ancestors in storage order). */
  checkpoint?: CheckpointSelector | null;
}

/** Reads a thread's checkpoints as API thread states. */
export interface ThreadCheckpointReader {
  /** The thread's states, newest first. */
  history(tenantId: string, threadId: string, opts: HistoryOptions): Promise<CheckpointThreadState[]>;
  /** The state at a checkpoint (the latest without an id); null when there is no such checkpoint. */
  state(tenantId: string, threadId: string, checkpoint: CheckpointSelector | null): Promise<CheckpointThreadState | null>;
}

/** The checkpoint thread of a public thread (the same as run-executor's checkpointThreadId). */
export const cpThreadId = (tenantId: string, threadId: string): string => `${tenantId}:${threadId}`;

/** The agent graph over `checkpointer`, for reading and editing checkpoints: it never runs a node. */
export function compileCheckpointGraph(checkpointer: BaseCheckpointSaver): AgentGraph {
  return buildAgentGraph({
    checkpointer,
    tools: {
      listTools: () => Promise.resolve([]),
      execute: () => Promise.reject(new Error('the checkpoint graph runs no tools')),
    },
    runContext: () => undefined,
  });
}

/** A reader over `checkpointer` (the graph compiled here never runs a node). */
export function createThreadCheckpointReader(checkpointer: BaseCheckpointSaver, compiled?: AgentGraph): ThreadCheckpointReader {
  const graph: AgentGraph = compiled ?? compileCheckpointGraph(checkpointer);
  const configOf = (tid: string, sel: CheckpointSelector | null | undefined) => ({
    configurable: { thread_id: tid, checkpoint_ns: sel?.checkpoint_ns ?? '', ...(sel?.checkpoint_id ? { checkpoint_id: sel.checkpoint_id } : {}) },
  });
  return {
    async history(tenantId, threadId, opts) {
      const tid = cpThreadId(tenantId, threadId);
      const out: CheckpointThreadState[] = [];
      const options = {
        limit: opts.limit ?? 10,
        ...(opts.before?.checkpoint_id ? { before: configOf(tid, opts.before) } : {}),
        ...(opts.metadata && Object.keys(opts.metadata).length > 0 ? { filter: opts.metadata as Record<string, unknown> } : {}),
      };
      for await (const snapshot of graph.getStateHistory(configOf(tid, opts.checkpoint), options)) {
        out.push(toApiState(snapshot, tid, threadId));
      }
      return out;
    },
    async state(tenantId, threadId, checkpoint) {
      const tid = cpThreadId(tenantId, threadId);
      const snapshot = await graph.getState(configOf(tid, checkpoint));
      // A checkpoint that does not exist reads as an empty snapshot without a creation time.
      if (!snapshot.createdAt) return null;
      return toApiState(snapshot, tid, threadId);
    },
  };
}

/** The public thread id in place of the checkpoint thread id, anywhere in a JSON value. */
function unprefix(v: unknown, internal: string, pub: string): unknown {
  if (v === internal) return pub;
  if (Array.isArray(v)) return v.map((x) => unprefix(x, internal, pub));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, unprefix(x, internal, pub)]));
  return v;
}

function refOf(config: StateSnapshot['config'] | undefined, pub: string): ApiCheckpointRef | null {
  const c = config?.configurable;
  if (!c?.checkpoint_id) return null;
  return { thread_id: pub, checkpoint_ns: (c.checkpoint_ns as string | undefined) ?? '', checkpoint_id: c.checkpoint_id as string };
}

/** A LangGraph state snapshot as the API's ThreadState (values filtered as GET /state filters them). */
export function toApiState(snapshot: StateSnapshot, internalThreadId: string, threadId: string): CheckpointThreadState {
  const raw = (snapshot.metadata ?? {}) as Record<string, unknown>;
  const metadata = unprefix(toJsonValue(raw), internalThreadId, threadId) as JsonObject;
  const runId = typeof raw.run_id === 'string' ? raw.run_id : '';
  const interrupts = humanInterrupts(snapshot);
  const tasks = snapshot.tasks.map((t) => {
    const own = humanInterrupts({ tasks: [t] });
    const error = (t as { error?: unknown }).error;
    return {
      id: t.id,
      name: t.name,
      path: (t.path ?? []) as unknown[],
      error: error === undefined || error === null ? null : String((error as { message?: unknown }).message ?? error),
      interrupts: own,
      checkpoint: null,
      state: null,
      result: (t as { result?: unknown }).result === undefined ? null : toJsonValue((t as { result?: unknown }).result),
    };
  });
  const values = toJsonValue(publicValues(snapshot.values as JsonObject, runId)) as JsonObject;
  return {
    values: interrupts.length > 0 ? ({ ...values, __interrupt__: interrupts } as JsonObject) : values,
    next: [...snapshot.next],
    tasks: tasks as CheckpointThreadState['tasks'],
    checkpoint: refOf(snapshot.config, threadId) ?? { thread_id: threadId, checkpoint_ns: '', checkpoint_id: null },
    parent_checkpoint: refOf(snapshot.parentConfig, threadId),
    metadata,
    created_at: snapshot.createdAt ?? null,
    interrupts,
  };
}
