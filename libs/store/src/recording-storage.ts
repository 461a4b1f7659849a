/**
 * How a run recording's model calls are stored (migration 0020, README "Record and replay"): what
 * repeats from one model call to the next is written once. A recorded request normally holds every
 * message sent so far and every offered tool's JSON schema; stored, it holds
 *
 * - the tools as a reference to a tool set (`run_recording_toolsets`: the tools' JSON under its
 *   SHA-256, once per tenant and distinct set), and
 * - the messages as what it adds to an earlier request of the same run: its own first `head`
 *   messages (0 or, when only the system prompt differs, 1), then event `base`'s messages from
 *   `head` up to `keep`, then the rest of its own `messages` (all of them, with no `base`, when
 *   nothing is shared).
 *
 * Both references sit under the reserved request key `$stored`, which only the recorder writes
 * (`NewRecordingEvent.compact`); the repository expands them when it reads, so every reader —
 * replay, export, `record-test` — sees the full request, as rows written before 0020 still are.
 */
import { createHash } from 'node:crypto';
import { AgentLoopError } from '@agentloop/core';
import type { JsonObject, RecordingEvent } from './types.js';

/** The request key of a stored model call's references (never part of an expanded request). */
export const STORED_REQUEST_KEY = '$stored';

export interface StoredRequestRefs {
  /** The request's first `head` (default 0) own messages, then messages `head`..`keep` of the run's event `event`, then its other own messages. */
  base?: { event: string; keep: number; head?: number };
  /** The request's tools are the tool set stored under this hash (same tenant). */
  tools_set?: string;
}

/** The key a tool set is stored under: SHA-256 (hex) of its JSON text. */
export const toolsetHash = (toolsJson: string): string => createHash('sha256').update(toolsJson, 'utf8').digest('hex');

const requestOf = (e: Pick<RecordingEvent, 'kind' | 'payload'>): JsonObject | undefined => {
  const r = e.kind === 'model_call' ? e.payload.request : undefined;
  return r && typeof r === 'object' && !Array.isArray(r) ? (r as JsonObject) : undefined;
};

const refsOf = (request: JsonObject | undefined): StoredRequestRefs | undefined => request?.[STORED_REQUEST_KEY] as StoredRequestRefs | undefined;

/** Whether a payload uses the reserved key (only a compact write may). */
export function usesStoredRefs(e: Pick<RecordingEvent, 'kind' | 'payload'>): boolean {
  return refsOf(requestOf(e)) !== undefined;
}

/** The tool set hashes a run's stored events refer to. */
export function toolsetRefs(events: readonly RecordingEvent[]): string[] {
  const hashes = new Set<string>();
  for (const e of events) {
    const h = refsOf(requestOf(e))?.tools_set;
    if (typeof h === 'string') hashes.add(h);
  }
  return [...hashes];
}

/**
 * The events with every stored request expanded to the full request `{model, messages, tools}`.
 * A reference that cannot be resolved is a damaged recording: an error, not a silently shorter request.
 */
export function expandStoredRequests(events: readonly RecordingEvent[], toolsets: ReadonlyMap<string, unknown[]>): RecordingEvent[] {
  const messagesOf = new Map<string, unknown[]>();
  return events.map((e) => {
    const request = requestOf(e);
    const refs = refsOf(request);
    if (!request || !refs) {
      if (request && Array.isArray(request.messages)) messagesOf.set(e.key, request.messages);
      return e;
    }
    const { [STORED_REQUEST_KEY]: _refs, ...rest } = request;
    const own = Array.isArray(rest.messages) ? rest.messages : [];
    let messages = own;
    if (refs.base) {
      const { event, keep, head = 0 } = refs.base;
      const earlier = messagesOf.get(event);
      if (!earlier || earlier.length < keep || head > keep || own.length < head) {
        throw new AgentLoopError('INTERNAL', `Recording of run ${e.runId}: event ${e.key} builds on ${event}, which is missing or shorter`);
      }
      messages = own.slice(0, head).concat(earlier.slice(head, keep), own.slice(head));
    }
    messagesOf.set(e.key, messages);
    let tools = rest.tools;
    if (refs.tools_set !== undefined) {
      tools = toolsets.get(refs.tools_set);
      if (!tools) throw new AgentLoopError('INTERNAL', `Recording of run ${e.runId}: event ${e.key} refers to a missing tool set ${refs.tools_set}`);
    }
    return { ...e, payload: { ...e.payload, request: { ...rest, messages, tools } } };
  });
}
