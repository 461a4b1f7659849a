/**
 * The graph execution loop of one run: stream the graph, publish each chunk as a run event,
 * then read the final state and say how the graph stopped (ran to its end, waits for a human,
 * or is suspended on delegated agents). Failures are the caller's (run/outcome.ts).
 */
import type { BaseStore } from '@langchain/langgraph-checkpoint';
import type { Logger } from '@agentloop/core';
import type { RunEventStream } from '@agentloop/bus';
import type { JsonObject } from '@agentloop/store';
import type { AgentGraph } from '../graph.js';
import { toJsonValue } from '../serialize.js';
import { pendingDelegation, type DelegationRequest } from '../delegation.js';
import type { CheckpointConfig, GraphInput } from './input.js';
import { humanInterrupts, isDelegationInterrupt, publicValues } from './values.js';
import { interruptOnlyValues } from '../hitl.js';
import { MessageEvents, wantsTokens, type PublicRun } from './messages.js';
import { graphStreamModes, inspectionPayload, isInspectionMode } from './stream-modes.js';
import { PublishPipeline } from './publish-pipeline.js';
import type { LatestCheckpointSource, ResumePoint } from './latest-checkpoint.js';
import { ModelCallSuspendedError } from '../models/model-suspension.js';
import { publicEvent, splitStreamEvents, wantsEvents, type RunChunk, type StreamEventV2 } from './events-mode.js';

/** How the graph stopped when it did not throw. */
export type StoppedGraph =
  | { kind: 'success'; values: JsonObject }
  | { kind: 'waits_for_human'; values: JsonObject; next?: string[] }
  | { kind: 'suspended'; values: JsonObject; waiting: DelegationRequest };

export interface StreamOptions {
  cpConfig: CheckpointConfig;
  maxLoops: number;
  signal: AbortSignal;
  durability: 'sync' | 'async' | 'exit';
  /** The run's long-term memory store (LangGraph's `config.store`), bound to its tenant. */
  store?: BaseStore;
  /** A tool's display name (its spec's metadata), added to `tools` events. */
  displayNameOf?: (tool: string) => string | undefined;
  /**
   * The graph is streamed again from its checkpoint after the run suspended while its model
   * thought (run/model-suspend.ts): LangGraph restates the checkpoint's values first, which
   * subscribers already had; that repeat is not published again.
   */
  resumed?: boolean;
  /**
   * The graph's checkpointer, when it can keep the checkpoint this stream saves last: the final
   * state is then read from that instead of from the database (run/latest-checkpoint.ts).
   */
  latest?: LatestCheckpointSource;
  /**
   * Carries the checkpoint a stream suspended at (its model still thinking) to the resumed stream,
   * which starts from it instead of reading it back (run/latest-checkpoint.ts `ResumePoint`). The
   * caller closes what is left in it when the run does not resume.
   */
  resume?: { from?: ResumePoint | undefined };
}

/** The last `values` published, kept for the run's end when the stream throws. */
export interface SeenValues {
  values: JsonObject | null;
}

/** The part of a graph state (`getState`) that says where the run stopped. */
export interface StoppedState {
  values: unknown;
  /** The nodes the graph runs next: non-empty at a stop of interrupt_before / interrupt_after. */
  next?: readonly string[];
  tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }>;
}

/** The fields of a job that decide what its stream produces. */
export interface StreamJob {
  runId: string;
  threadId: string;
  tenantId?: string;
  assistantId?: string;
  streamMode?: readonly string[];
  /** LangGraph's interrupt_before / interrupt_after: node names, or ["*"] for every node. */
  interruptBefore?: readonly string[];
  interruptAfter?: readonly string[];
}

/** A graph as the stream loop uses it: `streamEvents` only for runs that asked for the `events` mode. */
export type StreamableGraph = Pick<AgentGraph, 'stream' | 'getState'> & Partial<Pick<AgentGraph, 'streamEvents'>>;

/** LangGraph's interruptBefore/After value of a job's node list ("*" = every node); undefined when empty. */
export function interruptNodes(nodes: readonly string[] | undefined): '*' | string[] | undefined {
  if (!nodes || nodes.length === 0) return undefined;
  return nodes.includes('*') ? '*' : [...nodes];
}

/**
 * Streams the run's graph to its stop, publishing `values` and `updates` events, and the modes the
 * run asked for: the model's tokens (`messages`, `messages-tuple`: run/messages.ts), `debug`,
 * `tasks`, `checkpoints`, `custom` (run/stream-modes.ts) and `events` (run/events-mode.ts).
 * `interrupt_before` / `interrupt_after` stop the graph at those nodes (see stoppedAt).
 */
export async function streamGraph(
  graph: StreamableGraph,
  events: Pick<RunEventStream, 'publish'>,
  job: StreamJob,
  input: GraphInput,
  opts: StreamOptions,
  seen: SeenValues,
  log: Logger,
): Promise<StoppedGraph> {
  const run: PublicRun = {
    runId: job.runId,
    threadId: job.threadId,
    tenantId: job.tenantId ?? '',
    ...(job.assistantId ? { assistantId: job.assistantId } : {}),
  };
  const tokens = wantsTokens(job.streamMode) ? new MessageEvents(job.streamMode ?? [], run) : undefined;
  const before = interruptNodes(job.interruptBefore);
  const after = interruptNodes(job.interruptAfter);
  // LangGraph hooks the signal it is given (combineAbortSignals) and never unhooks it: on the run's
  // own signal, which lives as long as the run, that listener would keep this invocation's loop
  // reachable after it ended — all of it, for a run suspended while its model thinks
  // (run/model-suspend.ts). So the graph gets a signal of its own, unhooked when the stream ends.
  const invocation = new AbortController();
  const forward = (): void => invocation.abort(opts.signal.reason);
  if (opts.signal.aborted) forward();
  else opts.signal.addEventListener('abort', forward, { once: true });
  const config = {
    ...opts.cpConfig,
    streamMode: graphStreamModes(job.streamMode),
    // agent → (approve, only for calls the agent step did not judge) → await_approval → tools → elicit →
    // tools → delegate → human: at most eight steps per loop (an ordinary loop is agent → tools).
    recursionLimit: opts.maxLoops * 8 + 10,
    signal: invocation.signal,
    durability: opts.durability,
    ...(opts.store ? { store: opts.store } : {}),
    ...(before ? { interruptBefore: before } : {}),
    ...(after ? { interruptAfter: after } : {}),
  };
  // Not a round trip per event: the step's events share a message (run/publish-pipeline.ts).
  const pipeline = new PublishPipeline(events, job.runId, job.threadId);
  const publish = (event: string, data: unknown) => pipeline.send(event, data);
  // Under `events` the graph's root run is the run itself, as LangGraph Platform names it (`run_id` of its events).
  let repeat = opts.resumed === true && seen.values !== null ? JSON.stringify(seen.values) : undefined;
  const threadId = opts.cpConfig.configurable.thread_id;
  const from = opts.resumed === true ? opts.resume?.from : undefined;
  if (opts.resume) opts.resume.from = undefined;
  const latest = typeof threadId === 'string' ? opts.latest?.watch(threadId, from) : undefined;
  if (!latest) from?.close();
  const chunks = wantsEvents(job.streamMode) ? runChunks(graph, input, { ...config, runId: job.runId }, true) : runChunks(graph, input, config, false);
  try {
    for await (const chunk of await chunks) {
      if (chunk.kind === 'event') {
        await publish('events', publicEvent(chunk.event, run));
        continue;
      }
      const { mode, data } = chunk;
      if (mode === 'messages') {
        for (const [event, payload] of tokens?.events(data) ?? []) await publish(event, payload);
        continue;
      }
      if (isInspectionMode(mode)) {
        await publish(mode, inspectionPayload(mode, data, run, opts.displayNameOf));
        continue;
      }
      // A delegation interrupt is internal: clients see the `delegate` update the executor publishes instead.
      if (mode === 'updates' && isDelegationInterrupt(data)) continue;
      // A stop at an interrupt streams as LangGraph does: a values event holding only `__interrupt__`.
      const interrupted = mode === 'values' ? interruptOnlyValues(data) : undefined;
      if (interrupted === null) continue;
      if (interrupted) {
        await publish(mode, interrupted);
        continue;
      }
      const json = toJsonValue(mode === 'values' ? publicValues(data as JsonObject, job.runId) : data);
      if (mode === 'values' && repeat !== undefined) {
        const same = JSON.stringify(json) === repeat;
        repeat = undefined;
        if (same) continue;
      }
      if (mode === 'values') seen.values = json as JsonObject;
      await publish(mode, json);
    }
  } catch (err) {
    // Suspended while its model thinks: the resumed stream starts from the checkpoint this one saved last.
    if (latest && opts.resume && err instanceof ModelCallSuspendedError) opts.resume.from = latest.suspend();
    else latest?.close();
    // The events the run did publish are stored before its failure is (run/outcome.ts records it).
    await pipeline.drain().catch(() => undefined);
    throw err;
  } finally {
    opts.signal.removeEventListener('abort', forward);
  }
  // Every event stored before the run's end is recorded (and `end` published after it).
  latest?.arm();
  let final: StoppedState;
  try {
    [final] = await Promise.all([graph.getState(opts.cpConfig), pipeline.drain()]);
  } finally {
    latest?.close();
  }
  const stopped = stoppedAt(final, job.runId);
  if (stopped.kind === 'waits_for_human') {
    const interrupts = (stopped.values.__interrupt__ ?? []) as Array<{ value: unknown }>;
    log.info({ interrupts: interrupts.map((i) => (i.value as { type?: unknown } | null)?.type), next: stopped.next }, 'run waits for a human');
  }
  return stopped;
}

/** The graph's chunks: its stream, or, for the `events` mode, its stream events split into chunks and events. */
async function runChunks(graph: StreamableGraph, input: GraphInput, config: Record<string, unknown>, events: boolean): Promise<AsyncIterable<RunChunk>> {
  if (events) {
    if (!graph.streamEvents) throw new Error('internal: the events stream mode needs a graph with streamEvents');
    const stream = graph.streamEvents(input, { ...config, version: 'v2' } as never) as unknown as AsyncIterable<StreamEventV2>;
    return splitStreamEvents(stream);
  }
  const stream = await graph.stream(input, config as never);
  return (async function* () {
    for await (const chunk of stream) {
      const [mode, data] = chunk as [string, unknown];
      yield { kind: 'mode', mode, data } as RunChunk;
    }
  })();
}

/**
 * How a graph state that the stream left says the run stopped. Waiting for a human (tool
 * approval, ask_human): the run ends, the thread is `interrupted`, and the values carry
 * `__interrupt__` as LangGraph Platform reports it; a `command.resume` continues.
 */
export function stoppedAt(final: StoppedState, runId: string): StoppedGraph {
  const values = toJsonValue(publicValues(final.values as JsonObject, runId)) as JsonObject;
  const waiting = pendingDelegation(final);
  if (waiting) return { kind: 'suspended', values, waiting };
  const pendingInterrupts = humanInterrupts(final);
  if (pendingInterrupts.length > 0) return { kind: 'waits_for_human', values: { ...values, __interrupt__: pendingInterrupts } as JsonObject };
  // Stopped by interrupt_before / interrupt_after: the thread is `interrupted` with `next` set, as
  // LangGraph leaves it; a run without input (or with a `command.resume`) continues from there.
  if (final.next && final.next.length > 0) return { kind: 'waits_for_human', values, next: [...final.next] };
  return { kind: 'success', values };
}

/** The run's current public values, or undefined when the checkpoint cannot be read. */
export async function currentValues(graph: Pick<AgentGraph, 'getState'>, cpConfig: CheckpointConfig, runId: string): Promise<JsonObject | undefined> {
  try {
    const state = await graph.getState(cpConfig);
    return toJsonValue(publicValues(state.values as JsonObject, runId)) as JsonObject;
  } catch {
    return undefined;
  }
}
