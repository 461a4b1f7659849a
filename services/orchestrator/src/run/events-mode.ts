/**
 * The `events` stream mode: LangChain's stream events v2 (`on_chain_start`, `on_chat_model_stream`,
 * `on_tool_end`…) of the whole run, as the LangGraph Platform sends them. The graph then runs under
 * `streamEvents`, whose root `on_chain_stream` events carry the ordinary stream-mode chunks; every
 * other event is an `events` event. Produced only when a run asks for it: it is the heaviest mode
 * (every node's input and output).
 */
import type { PublicRun } from './messages.js';
import { publicIds, withoutPrivateKeys } from './stream-modes.js';

/** A LangChain stream event (v2) as `streamEvents` yields it. */
export interface StreamEventV2 {
  event: string;
  name?: string;
  run_id?: string;
  parent_ids?: string[];
  tags?: string[];
  metadata?: Record<string, unknown>;
  data?: Record<string, unknown>;
}

/** What a graph under `streamEvents` yields, in the order it happened. */
export type RunChunk = { kind: 'mode'; mode: string; data: unknown } | { kind: 'event'; event: StreamEventV2 };

export function wantsEvents(modes: readonly string[] | undefined): boolean {
  return !!modes && modes.includes('events');
}

/** Splits a run's stream events: the root graph's `on_chain_stream` chunks are its stream-mode chunks. */
export async function* splitStreamEvents(events: AsyncIterable<StreamEventV2>): AsyncGenerator<RunChunk> {
  for await (const event of events) {
    if (event.tags?.includes('langsmith:hidden')) continue;
    const root = !event.parent_ids || event.parent_ids.length === 0;
    if (event.event === 'on_chain_stream' && root) {
      const chunk = event.data?.chunk;
      if (Array.isArray(chunk) && typeof chunk[0] === 'string') yield { kind: 'mode', mode: chunk[0], data: chunk[1] };
      continue;
    }
    yield { kind: 'event', event };
  }
}

/**
 * An event as clients get it: the node inputs and outputs it carries show public state keys only,
 * and the checkpoint thread id (in `metadata.thread_id`, `checkpoint_ns`…) reads as the public one.
 */
export function publicEvent(event: StreamEventV2, run: PublicRun): unknown {
  const data: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(event.data ?? {})) data[k] = k === 'input' || k === 'output' || k === 'chunk' ? withoutPrivateKeys(v) : v;
  return publicIds(
    {
      event: event.event,
      name: event.name,
      run_id: event.run_id,
      parent_ids: event.parent_ids ?? [],
      tags: event.tags ?? [],
      metadata: { ...(event.metadata ?? {}), run_id: run.runId, thread_id: run.threadId },
      data,
    },
    run,
  );
}
