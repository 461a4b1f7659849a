/**
 * What a run recording holds (issue 17, docs in the README's "Record and replay"): one event per
 * model call and per tool call, as JSON. The orchestrator writes them (recorder.ts) and reads them
 * back to replay a run (replay-session.ts); the gateway exports them unchanged.
 */
import { createHash } from 'node:crypto';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ToolSpec } from '@agentloop/proto';
import { messageToJson } from '../serialize.js';
import { isToolMediaBlock } from '../graph/tool-media.js';

/** A message as recorded: the LangGraph Platform JSON shape (type, content, tool_calls, tool_call_id...). */
export type RecordedMessage = Record<string, unknown>;

export interface RecordedTool {
  name: string;
  description: string;
  /** JSON schema of the arguments, as offered to the model. */
  parameters: string;
}

/** A model call: the request as sent (system prompt included) and the answer as stored in history. */
export interface ModelCallPayload {
  request: {
    model: { label: string; provider: string; model_id: string };
    messages: RecordedMessage[];
    tools: RecordedTool[];
  };
  response: RecordedMessage;
  started_at: string;
  ended_at: string;
}

/** A tool call and its result. */
export interface ToolCallPayload {
  call: { id: string; name: string; args: Record<string, unknown> };
  result: { content: string; is_error: boolean; error_code: string | null };
  started_at: string;
  ended_at: string;
}

/** Where a replay first differed from its recording. */
export interface Divergence {
  step: number;
  kind: 'model_request' | 'tool_result' | 'extra_call' | 'missing_call';
  /** Which message or field, e.g. `messages[3].content` or `tools`. */
  path?: string;
  expected: unknown;
  actual: unknown;
}

/** A replay's outcome: written under the replay run's id and shown in its metadata. */
export type ReplayReport = { of: string; tools: ReplayTools; diverged: false } | { of: string; tools: ReplayTools; diverged: true; at: Divergence };

export type ReplayTools = 'recorded' | 'execute';

/** Event keys: a step re-run after a crash writes the same key, which the store keeps once. */
export const modelEventKey = (turn: number): string => `model:${turn}`;
export const toolEventKey = (toolCallId: string): string => `tool:${toolCallId}`;
export const REPLAY_EVENT_KEY = 'replay';

/**
 * `config.configurable` key the gateway sets on a replay run (`replay_of` / `replay_tools` of the
 * request): which recording to answer from, and how tools are answered.
 */
export const REPLAY_CONFIG_KEY = 'agentloop_replay';

/**
 * Messages as recorded. A tool result's image or audio (graph/tool-media.ts) is recorded by its
 * SHA-256 and size instead of its base64: a recording stays small enough to export and read, and a
 * replay whose media differ still diverges (both sides are recorded this way).
 */
export const recordMessages = (messages: readonly BaseMessage[]): RecordedMessage[] =>
  messages.map((m) => {
    const json = messageToJson(m);
    if (!Array.isArray(json.content) || !json.content.some(isToolMediaBlock)) return json;
    return { ...json, content: (json.content as unknown[]).map((p) => (isToolMediaBlock(p) ? { ...p, data: mediaDigest(p.data) } : p)) };
  });

/** `sha256:<hex>, <n> base64 characters`: what a recording keeps of a media block's data. */
export const mediaDigest = (base64: string): string => `sha256:${createHash('sha256').update(base64).digest('hex')}, ${base64.length} base64 characters`;

export const recordTools = (tools: readonly ToolSpec[]): RecordedTool[] =>
  tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parametersJsonSchema }));

/**
 * The recorded answer as the AI message a replayed model returns. Without the recorded message id:
 * a replay on the recorded run's own thread would otherwise replace that message in the history
 * (messages with the same id are merged) instead of adding its own.
 */
export function recordedAiMessage(m: RecordedMessage): AIMessage {
  const toolCalls = Array.isArray(m.tool_calls) ? (m.tool_calls as Array<{ id?: string; name: string; args?: Record<string, unknown> }>) : [];
  return new AIMessage({
    content: (m.content as AIMessage['content'] | undefined) ?? '',
    tool_calls: toolCalls.map((tc) => ({ id: tc.id ?? '', name: tc.name, args: tc.args ?? {}, type: 'tool_call' as const })),
    ...(m.usage_metadata && typeof m.usage_metadata === 'object' ? { usage_metadata: m.usage_metadata as AIMessage['usage_metadata'] } : {}),
    response_metadata: { ...((m.response_metadata as Record<string, unknown> | undefined) ?? {}), replayed: true },
  });
}
