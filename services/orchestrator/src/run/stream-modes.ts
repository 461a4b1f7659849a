/**
 * LangGraph's inspection stream modes — `debug`, `tasks`, `checkpoints`, `custom` — as the
 * LangGraph Platform sends them: which modes the graph must produce for a run, and each chunk made
 * public. Only the modes a run asked for are produced (each costs CPU and event-log space).
 * Public means: the checkpoint thread id (`tenant:thread`) reads as the public thread id, the
 * configurable's internal `__*` entries and callbacks are dropped, and state values show the
 * public keys only, as `values` events do.
 */
import type { JsonObject } from '@agentloop/store';
import { toJsonValue } from '../serialize.js';
import { publicValues } from './values.js';
import { wantsTokens, type PublicRun } from './messages.js';

/** Modes passed through from the graph's stream with only their payload made public (`tools`: graph/tool-events.ts). */
const INSPECTION_MODES = ['debug', 'tasks', 'checkpoints', 'custom', 'tools'] as const;
export type InspectionMode = (typeof INSPECTION_MODES)[number];

/** The stream modes of the graph for a run asked for `requested` (values and updates always: the run's end reads them). */
export function graphStreamModes(requested: readonly string[] | undefined): string[] {
  const modes = ['values', 'updates'];
  if (wantsTokens(requested)) modes.push('messages');
  for (const m of INSPECTION_MODES) if (requested?.includes(m)) modes.push(m);
  return modes;
}

export function isInspectionMode(mode: string): mode is InspectionMode {
  return (INSPECTION_MODES as readonly string[]).includes(mode);
}

/** State keys that are bookkeeping of the agent loop, never shown to clients (see publicValues). */
const PRIVATE_STATE_KEYS = new Set(['context_id', 'parent_context', 'thread_id', 'user_id', 'allowed_tools', 'model_pref', 'approvals', 'run_usage']);

/** An object of state channels (a node's input or writes) without the private ones; anything else unchanged. */
export function withoutPrivateKeys(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  return Object.fromEntries(Object.entries(v).filter(([k]) => !PRIVATE_STATE_KEYS.has(k)));
}

/**
 * A JSON copy of `v` in which every string holding the checkpoint thread id (`tenant:thread`)
 * holds the public thread id instead, and `__*` keys and `callbacks` are gone.
 */
export function publicIds(v: unknown, run: Pick<PublicRun, 'tenantId' | 'threadId'>): unknown {
  const internal = run.tenantId ? `${run.tenantId}:${run.threadId}` : undefined;
  // Events carry class instances too (tool inputs, generations): a reference cycle is cut, not followed.
  const seen = new WeakSet<object>();
  const walk = (x: unknown): unknown => {
    if (typeof x === 'string') return internal && x.includes(internal) ? x.split(internal).join(run.threadId) : x;
    if (typeof x === 'function' || typeof x === 'symbol' || typeof x === 'bigint') return undefined;
    if (!x || typeof x !== 'object') return x;
    if (seen.has(x)) return undefined;
    seen.add(x);
    const out = Array.isArray(x)
      ? x.map((y) => walk(toJsonValue(y)))
      : Object.fromEntries(
          Object.entries(x)
            .filter(([k]) => !k.startsWith('__') && k !== 'callbacks')
            .map(([k, y]) => [k, walk(toJsonValue(y))]),
        );
    seen.delete(x);
    return out;
  };
  return walk(toJsonValue(v));
}

/** The checkpoint a config points at, as the API names one (`thread_id`, `checkpoint_ns`, `checkpoint_id`, `checkpoint_map`). */
function checkpointOf(config: unknown): JsonObject | null {
  const c = (config as { configurable?: Record<string, unknown> } | null | undefined)?.configurable;
  if (!c || typeof c.thread_id !== 'string') return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: typeof c.checkpoint_ns === 'string' ? c.checkpoint_ns : '',
    checkpoint_id: typeof c.checkpoint_id === 'string' ? c.checkpoint_id : null,
    checkpoint_map: (c.checkpoint_map as JsonObject | undefined) ?? null,
  };
}

/** A task of a `tasks` / `debug` chunk: a task's input is the state (public keys only), a result holds public channels only. */
function publicTask(task: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...task };
  if ('input' in out) out.input = withoutPrivateKeys(out.input);
  if ('result' in out) out.result = withoutPrivateKeys(out.result);
  // A subgraph task's state is a config: LangGraph Platform sends it as the checkpoint it names.
  const state = out.state as { configurable?: unknown } | undefined;
  if (state && typeof state === 'object' && 'configurable' in state) {
    out.checkpoint = checkpointOf(state);
    delete out.state;
  }
  return out;
}

/**
 * A `checkpoints` chunk (LangGraph JS: `config`, `parentConfig`, `values`, `metadata`, `next`,
 * `tasks`) as LangGraph Platform sends it: `parent_config`, plus `checkpoint` and `parent_checkpoint`.
 */
function publicCheckpoint(payload: Record<string, unknown>, runId: string): Record<string, unknown> {
  const { parentConfig, parent_config, ...rest } = payload;
  const parent = parentConfig ?? parent_config;
  return {
    ...rest,
    values: publicValues(payload.values as JsonObject | undefined, runId),
    tasks: Array.isArray(payload.tasks) ? (payload.tasks as Array<Record<string, unknown>>).map(publicTask) : [],
    checkpoint: checkpointOf(payload.config),
    parent_config: parent ?? null,
    parent_checkpoint: checkpointOf(parent),
  };
}

/** The public payload of a chunk of one of the inspection modes; `displayNameOf` names a tool for `tools` events (seed 003 display_name). */
export function inspectionPayload(mode: InspectionMode, data: unknown, run: PublicRun, displayNameOf?: (tool: string) => string | undefined): unknown {
  const obj = data && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
  let shaped: unknown = data;
  if (mode === 'tools' && obj && typeof obj.name === 'string') shaped = { ...obj, display_name: displayNameOf?.(obj.name) || obj.name };
  if (mode === 'checkpoints' && obj) shaped = publicCheckpoint(obj, run.runId);
  else if (mode === 'tasks' && obj) shaped = publicTask(obj);
  else if (mode === 'debug' && obj && obj.payload && typeof obj.payload === 'object') {
    const payload = obj.payload as Record<string, unknown>;
    shaped = { ...obj, payload: obj.type === 'checkpoint' ? publicCheckpoint(payload, run.runId) : publicTask(payload) };
  }
  return publicIds(shaped, run);
}
