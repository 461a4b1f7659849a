/**
 * Input building of one run execution: the job's config (model, model preference, max_loops),
 * the graph input (new messages, a `command.resume`, or null to continue a checkpoint), and the
 * input of a resume job of a run suspended on delegated agents. Reads the checkpoint through
 * `getState` only, so it is testable with a fake graph.
 */
import { Command } from '@langchain/langgraph';
import type { BaseMessage } from '@langchain/core/messages';
import type { RunJob } from '@agentloop/proto';
import type { JsonObject } from '@agentloop/store';
import { MAX_LOOPS_MAX, MAX_LOOPS_MIN, type AgentGraph, type ModelRouter } from '../graph.js';
import type { ModelRegistry, ModelSlot, ResolvedModel } from '../models/registry.js';
import { parseModelPref } from '../routing.js';
import { parseInputMessages } from '../serialize.js';
import { RunInputError } from '../errors.js';
import { pendingDelegation } from '../delegation.js';
import { clientStateUpdate, parseGoto } from '../graph/client-update.js';

export type GraphInput = Parameters<AgentGraph['stream']>[0];

/** The checkpoint address of a run: its namespaced thread and the run id. */
export interface CheckpointConfig {
  configurable: Record<string, unknown>;
}

/** What input building reads of the graph: the state of the run's checkpoint. */
export interface StateReader {
  getState(
    config: CheckpointConfig,
  ): Promise<{ values: unknown; next: readonly string[]; tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ value?: unknown }> }> }>;
}

/** The models part of the registry that input building needs. */
export type ModelResolver = Pick<ModelRegistry, 'resolve' | 'configuredSlots'>;

/** What a run's `config` selects: the model, the routing preference and router, the config itself. */
export interface RunModelSetup {
  config: JsonObject;
  configurable: JsonObject;
  resolved: ResolvedModel;
  /** Absent for the scripted provider, which pins the model. */
  router: ModelRouter | undefined;
  modelPref: ModelSlot | null;
}

/**
 * A job's stored config, parsed once for the run (issue 9: the executor had parsed it into a new
 * object three times per run — for the recording, the environment and the model). `configurable`
 * is `config.configurable`, {} when absent or unreadable, for what must not fail on a bad config
 * (opening the run's recording); `config()` is the config and throws the RunInputError of a bad
 * one, where the run reads it.
 */
export interface StoredConfig {
  readonly configurable: JsonObject;
  config(): JsonObject;
}

export function storedConfig(job: Pick<RunJob, 'configJson'>): StoredConfig {
  let config: JsonObject | undefined;
  let error: unknown;
  try {
    config = parseJsonObject(job.configJson, 'config');
  } catch (err) {
    error = err;
  }
  const c = config?.configurable;
  return {
    configurable: c && typeof c === 'object' && !Array.isArray(c) ? (c as JsonObject) : {},
    config: () => {
      if (config === undefined) throw error;
      return config;
    },
  };
}

/** Resolves the model a run's config selects (throws ModelConfigError on a bad selection). */
export function resolveRunModel(config: JsonObject, models: ModelResolver): RunModelSetup {
  const configurable = (config.configurable ?? {}) as JsonObject;
  const resolved = models.resolve(configurable.model);
  // A slot named in `configurable.model` is a preference like `model_pref`; the scripted provider pins the model.
  const modelPref = parseModelPref(configurable.model_pref, 'config.configurable.model_pref') ?? selectedSlot(configurable.model);
  const router: ModelRouter | undefined =
    resolved.provider === 'scripted' ? undefined : { configured: new Set(models.configuredSlots()), forSlot: (slot) => models.resolve(slot) };
  return { config, configurable, resolved, router, modelPref };
}

/** The max_loops of a run: `configurable.max_loops`, else the top-level `max_loops`, else the default. */
export function maxLoopsOf(setup: Pick<RunModelSetup, 'config' | 'configurable'>, def: number): number {
  return parseMaxLoops(setup.configurable.max_loops ?? setup.config.max_loops, def);
}

/** The model of a finished run's webhook, when its config still resolves. */
export function modelOf(job: Pick<RunJob, 'configJson'>, models: Pick<ModelRegistry, 'resolve'>): { provider: string; label: string } | null {
  try {
    const r = models.resolve((parseJsonObject(job.configJson, 'config').configurable as JsonObject | undefined)?.model);
    return { provider: r.provider, label: r.label };
  } catch {
    return null;
  }
}

/**
 * The graph input of a run. A retry of a run that already wrote a checkpoint continues from it
 * (null); a `command` resumes an interrupt; else the new input messages (and `model_pref`).
 */
export async function graphInput(graph: StateReader, job: RunJob, cpConfig: CheckpointConfig, maxLoops: number, attempt: number): Promise<GraphInput> {
  if (attempt > 0) {
    // A retry of this run (worker crash, stalled job): continue from its last checkpoint instead of re-adding the input.
    const state = await graph.getState(cpConfig);
    // The input sets context_id = run id, so an unfinished checkpoint of this very run is recognisable.
    if ((state.values as { context_id?: unknown }).context_id === job.runId) {
      // Continue from the checkpoint. `state.next` cannot tell "finished" from "a step ran but its
      // successor checkpoint was never written" (tasks with saved writes are not listed), and
      // resuming a finished graph with a null input runs nothing — so always resume.
      return null;
    }
  }
  if (job.commandJson) return runCommand(parseJsonObject(job.commandJson, 'command'));
  const rawInput: unknown = job.inputJson ? JSON.parse(job.inputJson) : null;
  const messages: BaseMessage[] = parseInputMessages(rawInput);
  // `input.model_pref` sets the thread's preference (null clears it).
  const hasPref = !!rawInput && typeof rawInput === 'object' && 'model_pref' in rawInput;
  const modelPref = hasPref ? parseModelPref((rawInput as { model_pref?: unknown }).model_pref, 'input.model_pref') : undefined;
  if (messages.length === 0) {
    // Nothing new: continue an unfinished checkpoint (crash resume, interrupt_before/after), or
    // replay from the checkpoint a run was created with (time travel: LangGraph then writes that
    // checkpoint's state as the thread's new head, running whatever it had next); else there is
    // nothing to do.
    if (cpConfig.configurable.checkpoint_id) return null;
    const state = await graph.getState(cpConfig);
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

/**
 * A run's `command` as LangGraph takes it: `resume` answers an interrupt, `update` writes the
 * state (only what a client may write, graph/client-update.ts), `goto` names the node(s) to run next.
 */
export function runCommand(command: JsonObject): GraphInput {
  const has = (k: string) => command[k] !== undefined && command[k] !== null;
  if (!has('resume') && !has('update') && !has('goto')) throw new RunInputError('command must contain "resume", "update" or "goto"');
  const goto = parseGoto(command.goto, 'command.goto');
  return new Command({
    ...(has('resume') ? { resume: command.resume } : {}),
    ...(has('update') ? { update: clientStateUpdate(command.update, 'command.update') } : {}),
    ...(goto !== undefined ? { goto } : {}),
  }) as unknown as GraphInput;
}

/**
 * The checkpoint config a run executes on: a run created with a checkpoint (`config.configurable.
 * checkpoint_id`, which the gateway sets from the body's `checkpoint` / `checkpoint_id`) starts from
 * that checkpoint, so its writes fork the thread there (edit, regenerate, time travel). A retry of
 * such a run that already wrote checkpoints of its own continues from its latest one instead.
 */
export async function runCheckpointConfig(
  graph: StateReader,
  job: RunJob,
  cpConfig: CheckpointConfig,
  configurable: JsonObject,
  attempt: number,
): Promise<CheckpointConfig> {
  const checkpointId = configurable.checkpoint_id;
  if (checkpointId === undefined || checkpointId === null || checkpointId === '') return cpConfig;
  if (typeof checkpointId !== 'string') throw new RunInputError('config.configurable.checkpoint_id must be a string');
  if (attempt > 0) {
    const latest = await graph.getState(cpConfig);
    if ((latest.values as { context_id?: unknown }).context_id === job.runId) return cpConfig;
  }
  const ns = typeof configurable.checkpoint_ns === 'string' ? configurable.checkpoint_ns : '';
  const forked: CheckpointConfig = { configurable: { ...cpConfig.configurable, checkpoint_id: checkpointId, checkpoint_ns: ns } };
  const at = await graph.getState(forked);
  // LangGraph reads a missing checkpoint as an empty state: say so instead of starting an empty thread.
  if (!(at as { createdAt?: unknown }).createdAt) throw new RunInputError(`checkpoint ${checkpointId} not found on this thread`);
  return forked;
}

/**
 * The graph a forked run streams on: the stream starts at the fork's checkpoint, but where the run
 * stopped is read at the thread's head (the new branch), not at the checkpoint it forked from.
 */
export function atHead(graph: Pick<AgentGraph, 'stream' | 'streamEvents' | 'getState'>): Pick<AgentGraph, 'stream' | 'streamEvents' | 'getState'> {
  return {
    stream: graph.stream.bind(graph) as AgentGraph['stream'],
    streamEvents: graph.streamEvents.bind(graph) as AgentGraph['streamEvents'],
    getState: (config, options) => {
      const { checkpoint_id: _id, checkpoint_ns: _ns, ...configurable } = config.configurable ?? {};
      return graph.getState({ ...config, configurable }, options);
    },
  };
}

/**
 * Input of a resume job: the children's results when the run still waits on that step;
 * null when this very job ran before and got past it (a retry); else 'stale' (a duplicate).
 */
export async function delegationResumeInput(graph: StateReader, job: RunJob, cpConfig: CheckpointConfig, attempt: number): Promise<GraphInput | 'stale'> {
  const state = await graph.getState(cpConfig);
  const pending = pendingDelegation(state);
  if (pending?.delegation_id === job.resumeDelegationId) {
    const command = parseJsonObject(job.commandJson, 'command');
    return new Command({ resume: command.resume }) as unknown as GraphInput;
  }
  if (attempt > 0 && (state.values as { context_id?: unknown }).context_id === job.runId) return null;
  return 'stale';
}

/** The slot named by a `configurable.model` already validated by the registry, if it names one. */
export function selectedSlot(selection: unknown): ModelSlot | null {
  if (typeof selection === 'string') return selection as ModelSlot;
  if (selection && typeof selection === 'object' && 'slot' in selection) return (selection as { slot: ModelSlot }).slot;
  return null;
}

/** A JSON object field of the job ('' and null are {}); anything else is the client's mistake. */
export function parseJsonObject(s: string, what: string): JsonObject {
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
