/**
 * Edits of a thread's checkpoints outside a run, as LangGraph Platform's `POST /threads/{id}/state`
 * (updateState), `PATCH /threads/{id}/state` (metadata), `threads.create({supersteps})`,
 * `POST /threads/{id}/copy` and `POST /threads/prune` (keep_latest) make them. Like the reader, it
 * works over the agent graph compiled on a checkpoint saver without running a node: updateState
 * applies the update through the state's reducers as if `as_node` had written it, and computes
 * `next` from the graph's edges. The caller (the gateway) checks that no run holds the thread.
 */
import type { BaseCheckpointSaver, CheckpointTuple, PendingWrite } from '@langchain/langgraph-checkpoint';
import { AgentLoopError } from '@agentloop/core';
import type { JsonObject } from '@agentloop/store';
import type { AgentGraph } from './graph.js';
import { clientStateUpdate } from './graph/client-update.js';
import { toApiState, type CheckpointSelector, type CheckpointThreadState } from './checkpoint-reader.js';

/** One state update: the values as if `as_node` had returned them. */
export interface StateUpdate {
  values: unknown;
  asNode?: string | null;
}

/** The checkpoint an update made, as LangGraph Platform answers `POST /threads/{id}/state`. */
export interface UpdatedCheckpoint {
  checkpoint: { thread_id: string; checkpoint_ns: string; checkpoint_id: string; checkpoint_map: Record<string, string> | null };
  /** The thread's state at that checkpoint (what the thread record must now show). */
  state: CheckpointThreadState;
}

export interface ThreadCheckpointWriter {
  /** Applies one update at `checkpoint` (the latest without one). */
  update(tenantId: string, threadId: string, update: StateUpdate, checkpoint: CheckpointSelector | null): Promise<UpdatedCheckpoint>;
  /** Applies supersteps in order, each a list of updates (LangGraph's bulkUpdateState). */
  applySupersteps(tenantId: string, threadId: string, supersteps: StateUpdate[][]): Promise<UpdatedCheckpoint>;
  /** Merges `metadata` into the latest checkpoint's; false when the thread has no checkpoint. */
  patchMetadata(tenantId: string, threadId: string, metadata: JsonObject): Promise<boolean>;
  /** Copies every checkpoint and pending write of `fromThreadId` to `toThreadId`; the copy's latest state (null: none). */
  copy(tenantId: string, fromThreadId: string, toThreadId: string): Promise<CheckpointThreadState | null>;
  /** Deletes every checkpoint but the latest (which loses its parent); false when the thread has none. */
  keepLatest(tenantId: string, threadId: string): Promise<boolean>;
}

const invalid = (message: string) => new AgentLoopError('INVALID_ARGUMENT', message);

/**
 * Update values as the graph takes them: only what a client may write (graph/client-update.ts —
 * never `approvals`; an update of `messages` clears them), messages in any form a run's input accepts.
 */
export function parseUpdateValues(values: unknown, where: string): JsonObject | null {
  if (values === null || values === undefined) return null;
  if (typeof values !== 'object' || Array.isArray(values)) throw invalid(`${where}: must be an object such as {"messages": [...]}`);
  return clientStateUpdate(values, where) as JsonObject;
}

export function createThreadCheckpointWriter(
  checkpointer: BaseCheckpointSaver,
  graph: AgentGraph,
  cpThreadId: (tenantId: string, threadId: string) => string,
): ThreadCheckpointWriter {
  // Besides the graph's nodes, LangGraph takes two pseudo-nodes: "__input__" (the update is the
  // thread's input, as a run's input would be written) and "__copy__" (a new checkpoint that
  // copies the current one, e.g. to branch from it).
  const nodes = [...Object.keys(graph.nodes), '__input__', '__copy__'];
  const checkNode = (asNode: string | null | undefined, where: string): string | undefined => {
    if (asNode === null || asNode === undefined) return undefined;
    if (!nodes.includes(asNode)) throw invalid(`${where}: "${asNode}" is not a node of the agent graph (nodes: ${nodes.join(', ')})`);
    return asNode;
  };
  const configOf = (tid: string, sel: CheckpointSelector | null | undefined) => ({
    configurable: { thread_id: tid, checkpoint_ns: sel?.checkpoint_ns ?? '', ...(sel?.checkpoint_id ? { checkpoint_id: sel.checkpoint_id } : {}) },
  });
  /** LangGraph's refusals (ambiguous update, unknown channel...) are the client's mistake. */
  const asClientError = (err: unknown): unknown =>
    err instanceof Error && /InvalidUpdateError|EmptyChannelError/.test(err.name) ? invalid(`body: ${err.message}`) : err;

  async function result(tid: string, threadId: string, config: { configurable?: Record<string, unknown> }): Promise<UpdatedCheckpoint> {
    const snapshot = await graph.getState(config);
    const c = config.configurable ?? {};
    return {
      checkpoint: {
        thread_id: threadId,
        checkpoint_ns: (c.checkpoint_ns as string | undefined) ?? '',
        checkpoint_id: c.checkpoint_id as string,
        checkpoint_map: (c.checkpoint_map as Record<string, string> | undefined) ?? null,
      },
      state: toApiState(snapshot, tid, threadId),
    };
  }

  /** Every checkpoint of a thread (all namespaces), oldest first, with its pending writes. */
  async function tuples(tid: string): Promise<CheckpointTuple[]> {
    const out: CheckpointTuple[] = [];
    for await (const t of checkpointer.list({ configurable: { thread_id: tid } })) out.push(t);
    return out.reverse();
  }

  /**
   * Puts `t` under `to.internal` with its parent (or none), its channel values and pending writes.
   * A copy's checkpoints name the copy: the tenant-prefixed id in metadata, and the public id the
   * state's `thread_id` channel holds (what the run's tools see as their thread).
   */
  async function putTuple(t: CheckpointTuple, parentId: string | undefined, from: ThreadIds, to: ThreadIds): Promise<void> {
    const ns = (t.config.configurable?.checkpoint_ns as string | undefined) ?? '';
    const metadata = renameInternal(t.metadata ?? {}, from.internal, to.internal) as NonNullable<CheckpointTuple['metadata']>;
    const values = t.checkpoint.channel_values as Record<string, unknown>;
    const checkpoint = values.thread_id === from.public ? { ...t.checkpoint, channel_values: { ...values, thread_id: to.public } } : t.checkpoint;
    // Every channel's version, not only the changed ones: savers that store values per version
    // (MySQLSaver) write the values of the copy only for the versions named here.
    const saved = await checkpointer.put(
      { configurable: { thread_id: to.internal, checkpoint_ns: ns, ...(parentId ? { checkpoint_id: parentId } : {}) } },
      checkpoint,
      metadata,
      t.checkpoint.channel_versions,
    );
    const byTask = new Map<string, PendingWrite[]>();
    for (const [taskId, channel, value] of t.pendingWrites ?? []) {
      const write: PendingWrite = [channel, renameThreadWrite(channel, value, from.public, to.public)];
      byTask.set(taskId, [...(byTask.get(taskId) ?? []), write]);
    }
    for (const [taskId, writes] of byTask) await checkpointer.putWrites(saved, writes, taskId);
  }

  return {
    async update(tenantId, threadId, update, checkpoint) {
      const tid = cpThreadId(tenantId, threadId);
      const asNode = checkNode(update.asNode, 'body.as_node');
      const values = parseUpdateValues(update.values, 'body.values');
      const config = await graph.updateState(configOf(tid, checkpoint), values, asNode).catch((err: unknown) => {
        throw asClientError(err);
      });
      return result(tid, threadId, config);
    },

    async applySupersteps(tenantId, threadId, supersteps) {
      const tid = cpThreadId(tenantId, threadId);
      const steps = supersteps.map((updates, i) => ({
        updates: updates.map((u, j) => {
          const asNode = checkNode(u.asNode, `body.supersteps[${i}].updates[${j}].as_node`);
          return { values: parseUpdateValues(u.values, `body.supersteps[${i}].updates[${j}].values`), ...(asNode ? { asNode } : {}) };
        }),
      }));
      const config = await graph.bulkUpdateState(configOf(tid, null), steps).catch((err: unknown) => {
        throw asClientError(err);
      });
      return result(tid, threadId, config);
    },

    async patchMetadata(tenantId, threadId, metadata) {
      const tid = cpThreadId(tenantId, threadId);
      const latest = await checkpointer.getTuple(configOf(tid, null));
      if (!latest) return false;
      const parentId = latest.parentConfig?.configurable?.checkpoint_id as string | undefined;
      // The same checkpoint id again: savers overwrite the checkpoint's metadata in place.
      await checkpointer.put(
        { configurable: { thread_id: tid, checkpoint_ns: '', ...(parentId ? { checkpoint_id: parentId } : {}) } },
        latest.checkpoint,
        { ...latest.metadata, ...metadata } as NonNullable<CheckpointTuple['metadata']>,
        {},
      );
      return true;
    },

    async copy(tenantId, fromThreadId, toThreadId) {
      const from = cpThreadId(tenantId, fromThreadId);
      const to = cpThreadId(tenantId, toThreadId);
      const all = await tuples(from);
      const ids = { from: { internal: from, public: fromThreadId }, to: { internal: to, public: toThreadId } };
      for (const t of all) await putTuple(t, t.parentConfig?.configurable?.checkpoint_id as string | undefined, ids.from, ids.to);
      if (all.length === 0) return null;
      return toApiState(await graph.getState(configOf(to, null)), to, toThreadId);
    },

    async keepLatest(tenantId, threadId) {
      const tid = cpThreadId(tenantId, threadId);
      const latest = await checkpointer.getTuple(configOf(tid, null));
      if (!latest) return false;
      await checkpointer.deleteThread(tid);
      const same = { internal: tid, public: threadId };
      await putTuple(latest, undefined, same, same);
      return true;
    },
  };
}

interface ThreadIds {
  internal: string;
  public: string;
}

/** A JSON value with the tenant-prefixed thread id `from` replaced by `to` wherever it appears. */
function renameInternal(v: unknown, from: string, to: string): unknown {
  if (typeof v === 'string') return v.split(from).join(to);
  if (Array.isArray(v)) return v.map((x) => renameInternal(x, from, to));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, renameInternal(x, from, to)]));
  return v;
}

/**
 * A pending write that sets the `thread_id` channel — directly, or in the input the `__start__`
 * task holds — names the copy; other writes are kept as they are.
 */
function renameThreadWrite(channel: string, value: unknown, from: string, to: string): unknown {
  if (channel === 'thread_id') return value === from ? to : value;
  if (value && typeof value === 'object' && !Array.isArray(value) && (value as { thread_id?: unknown }).thread_id === from) return { ...value, thread_id: to };
  return value;
}
