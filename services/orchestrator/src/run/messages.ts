/**
 * Token streaming: LangGraph's `messages` stream mode (`[message chunk, metadata]` tuples from
 * the chat model's callbacks and from node outputs) published in the LangGraph Platform wire
 * format — `messages` events for clients that asked for `messages-tuple`, and the
 * `messages/metadata` / `messages/partial` / `messages/complete` family for `messages`.
 * Produced only when the run's creator asked for one of those modes: token events take
 * event-log space (RUN_EVENTS_MAX_BYTES).
 */
import { AIMessageChunk, isBaseMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { messageToJson, toJsonValue } from '../serialize.js';

/** Whether a run streamed with `modes` needs LangGraph's `messages` stream mode. */
export function wantsTokens(modes: readonly string[] | undefined): boolean {
  return !!modes && (modes.includes('messages') || modes.includes('messages-tuple'));
}

/** A message chunk as the LangGraph Platform sends it (`type: "AIMessageChunk"`, `tool_call_chunks`). */
export function chunkToJson(m: BaseMessage): Record<string, unknown> {
  const out = messageToJson(m);
  if (isBaseMessageChunk(m)) {
    out.type = `${m.getType() === 'ai' ? 'AI' : m.getType() === 'human' ? 'Human' : m.getType() === 'tool' ? 'Tool' : m.getType() === 'system' ? 'System' : ''}MessageChunk`;
    if (AIMessageChunk.isInstance(m)) out.tool_call_chunks = m.tool_call_chunks ?? [];
  }
  return out;
}

/** Who the run is, as clients know it: the public thread id, never the checkpoint's `tenant:thread`. */
export interface PublicRun {
  runId: string;
  threadId: string;
  tenantId: string;
  assistantId?: string;
}

/**
 * The metadata of a message tuple as the LangGraph Platform sends it: LangGraph's own
 * (`langgraph_node`, `langgraph_step`, `langgraph_path`, `checkpoint_ns`, `ls_*`, tags, name…) plus
 * `run_id`, `thread_id`, `graph_id` and `assistant_id`. Internal entries (`__pregel_*`, callbacks) are
 * dropped and the checkpoint thread id (`tenant:thread`) never appears: it is the public thread id.
 */
export function publicMetadata(meta: unknown, run: PublicRun): Record<string, unknown> {
  const internal = run.tenantId ? `${run.tenantId}:${run.threadId}` : undefined;
  const scrub = (v: unknown): unknown => {
    if (typeof v === 'string') return internal ? v.split(internal).join(run.threadId) : v;
    if (Array.isArray(v)) return v.map(scrub);
    if (v && typeof v === 'object')
      return Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => !k.startsWith('__'))
          .map(([k, x]) => [k, scrub(x)]),
      );
    return v;
  };
  const raw = meta && typeof meta === 'object' ? (meta as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k.startsWith('__') || typeof v === 'function' || v === undefined) continue;
    // JSON-able values only (a callback manager or a store must not reach the event log).
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && v.constructor !== Object) continue;
    out[k] = scrub(toJsonValue(v));
  }
  return {
    ...out,
    run_id: run.runId,
    thread_id: run.threadId,
    graph_id: 'agent',
    ...(run.assistantId ? { assistant_id: run.assistantId } : {}),
  };
}

/** One event to publish: the SSE event name and its data. */
export type MessageEvent = [event: string, data: unknown];

/**
 * Turns the `messages` stream mode's tuples into run events for the modes asked for. For
 * `messages`, as LangGraph Platform does: the first chunk of a message announces its metadata,
 * each chunk sends the message accumulated so far (`partial`), a whole message is `complete`.
 */
export class MessageEvents {
  private readonly accumulated = new Map<string, BaseMessage>();
  private readonly tuple: boolean;
  private readonly family: boolean;

  constructor(
    modes: readonly string[],
    private readonly run: PublicRun,
  ) {
    this.tuple = modes.includes('messages-tuple');
    this.family = modes.includes('messages');
  }

  events(data: unknown): MessageEvent[] {
    if (!Array.isArray(data) || data.length < 1) return [];
    const [message, rawMeta] = data as [BaseMessage, unknown];
    if (!message || typeof (message as { getType?: unknown }).getType !== 'function') return [];
    // A RemoveMessage in a node's output (compaction) is a state operation, not a message to show.
    if (message.getType() === 'remove') return [];
    const metadata = publicMetadata(rawMeta, this.run);
    const out: MessageEvent[] = [];
    if (this.tuple) out.push(['messages', [chunkToJson(message), metadata]]);
    if (this.family) {
      const id = message.id ?? '';
      const prev = this.accumulated.get(id);
      if (prev === undefined) out.push(['messages/metadata', { [id]: { metadata } }]);
      const chunk = isBaseMessageChunk(message);
      const whole = prev !== undefined && isBaseMessageChunk(prev) && chunk ? prev.concat(message) : message;
      this.accumulated.set(id, whole);
      // The accumulated message is sent as a whole message (`type: "ai"`), as message_chunk_to_message does.
      out.push([chunk ? 'messages/partial' : 'messages/complete', [messageToJson(whole)]]);
    }
    return out;
  }
}
