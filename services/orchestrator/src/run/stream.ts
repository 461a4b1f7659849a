/**
 * The graph execution loop of one run: stream the graph, publish each chunk as a run event,
 * then read the final state and say how the graph stopped (ran to its end, waits for a human,
 * or is suspended on delegated agents). Failures are the caller's (run/outcome.ts).
 */
import type { Logger } from '@agentloop/core';
import type { RunEventStream } from '@agentloop/bus';
import type { JsonObject } from '@agentloop/store';
import type { AgentGraph } from '../graph.js';
import { toJsonValue } from '../serialize.js';
import { pendingDelegation, type DelegationRequest } from '../delegation.js';
import type { CheckpointConfig, GraphInput } from './input.js';
import { humanInterrupts, isDelegationInterrupt, publicValues } from './values.js';
import { interruptOnlyValues } from '../hitl.js';
import { MessageEvents, wantsTokens } from './messages.js';

/** How the graph stopped when it did not throw. */
export type StoppedGraph =
  | { kind: 'success'; values: JsonObject }
  | { kind: 'waits_for_human'; values: JsonObject }
  | { kind: 'suspended'; values: JsonObject; waiting: DelegationRequest };

export interface StreamOptions {
  cpConfig: CheckpointConfig;
  maxLoops: number;
  signal: AbortSignal;
  durability: 'sync' | 'async' | 'exit';
}

/** The last `values` published, kept for the run's end when the stream throws. */
export interface SeenValues {
  values: JsonObject | null;
}

/** The part of a graph state (`getState`) that says where the run stopped. */
export interface StoppedState {
  values: unknown;
  tasks?: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }>;
}

/**
 * Streams the run's graph to its stop, publishing `values` and `updates` events, and the model's
 * tokens (`messages` stream mode, see run/messages.ts) when the run was asked for `messages` or
 * `messages-tuple`.
 */
export async function streamGraph(
  graph: Pick<AgentGraph, 'stream' | 'getState'>,
  events: Pick<RunEventStream, 'publish'>,
  job: { runId: string; threadId: string; tenantId?: string; assistantId?: string; streamMode?: readonly string[] },
  input: GraphInput,
  opts: StreamOptions,
  seen: SeenValues,
  log: Logger,
): Promise<StoppedGraph> {
  const tokens = wantsTokens(job.streamMode)
    ? new MessageEvents(job.streamMode ?? [], {
        runId: job.runId,
        threadId: job.threadId,
        tenantId: job.tenantId ?? '',
        ...(job.assistantId ? { assistantId: job.assistantId } : {}),
      })
    : undefined;
  const stream = await graph.stream(input, {
    ...opts.cpConfig,
    streamMode: tokens ? ['values', 'updates', 'messages'] : ['values', 'updates'],
    // agent → approve → await_approval → tools → delegate → human: at most six steps per loop.
    recursionLimit: opts.maxLoops * 6 + 10,
    signal: opts.signal,
    durability: opts.durability,
  });
  for await (const chunk of stream) {
    const [mode, data] = chunk as [string, unknown];
    if (mode === 'messages') {
      for (const [event, payload] of tokens?.events(data) ?? []) await events.publish(job.runId, job.threadId, event, payload);
      continue;
    }
    // A delegation interrupt is internal: clients see the `delegate` update the executor publishes instead.
    if (mode === 'updates' && isDelegationInterrupt(data)) continue;
    // A stop at an interrupt streams as LangGraph does: a values event holding only `__interrupt__`.
    const interrupted = mode === 'values' ? interruptOnlyValues(data) : undefined;
    if (interrupted === null) continue;
    if (interrupted) {
      await events.publish(job.runId, job.threadId, mode, interrupted);
      continue;
    }
    const json = toJsonValue(mode === 'values' ? publicValues(data as JsonObject, job.runId) : data);
    if (mode === 'values') seen.values = json as JsonObject;
    await events.publish(job.runId, job.threadId, mode, json);
  }
  const stopped = stoppedAt(await graph.getState(opts.cpConfig), job.runId);
  if (stopped.kind === 'waits_for_human') {
    const interrupts = (stopped.values.__interrupt__ ?? []) as Array<{ value: unknown }>;
    log.info({ interrupts: interrupts.map((i) => (i.value as { type?: unknown } | null)?.type) }, 'run waits for a human');
  }
  return stopped;
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
