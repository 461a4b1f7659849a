import { SamplingReplySchema, SamplingRequestSchema, create, fromBinary, toBinary } from '@agentloop/proto';

/**
 * A model completion asked for by an MCP server during one of a run's tool calls
 * (`sampling/createMessage`), relayed by the MCP broker to the orchestrators (queue group
 * `orchestrator`), which answer it from the run's model slots. Proto SamplingRequest / SamplingReply
 * (proto/agentloop/v1/mcp.proto) through the codecs below, the tenant in the `agentloop-tenant`
 * header; a refusal is a thrown error (the `agentloop-error` header).
 */
export const SAMPLING_SUBJECT = 'agentloop.orchestrator.sampling';

export interface SamplingMessage {
  role: 'user' | 'assistant';
  /** Text of the message; image blocks come in `images`. */
  text: string;
  images?: Array<{ mimeType: string; data: string }>;
}

export interface SamplingRequest {
  /** The run whose tool call the server is serving: it must exist for the tenant and be running. */
  run_id: string;
  tool_call_id: string;
  /** The MCP server asking (for logs and the reply's attribution). */
  server: string;
  /** The slot configured for the server (mcp_servers.yaml `sampling.slot`). */
  slot: string;
  /** The server's model hints (`modelPreferences.hints[].name`): one naming a slot wins over `slot`. */
  hints: string[];
  system_prompt?: string;
  messages: SamplingMessage[];
  max_tokens: number;
  temperature?: number;
  stop_sequences?: string[];
}

export interface SamplingReply {
  /** The model id that answered. */
  model: string;
  text: string;
  stop_reason: 'endTurn' | 'maxTokens';
  input_tokens: number;
  output_tokens: number;
}

export function encodeSamplingRequest(r: SamplingRequest): Uint8Array {
  return toBinary(
    SamplingRequestSchema,
    create(SamplingRequestSchema, {
      runId: r.run_id,
      toolCallId: r.tool_call_id,
      server: r.server,
      slot: r.slot,
      hints: r.hints,
      ...(r.system_prompt !== undefined ? { systemPrompt: r.system_prompt } : {}),
      messages: r.messages.map((m) => ({ role: m.role, text: m.text, images: (m.images ?? []).map((i) => ({ mimeType: i.mimeType, data: i.data })) })),
      maxTokens: r.max_tokens,
      ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
      stopSequences: r.stop_sequences ?? [],
    }),
  );
}

/**
 * The request as the orchestrator validates it (the same shape the broker built); throws on bytes
 * that are not a SamplingRequest. Roles are passed as sent: the handler refuses unknown ones.
 */
export function decodeSamplingRequest(data: Uint8Array): Record<string, unknown> {
  const r = fromBinary(SamplingRequestSchema, data);
  return {
    run_id: r.runId,
    tool_call_id: r.toolCallId,
    server: r.server,
    slot: r.slot,
    hints: r.hints,
    ...(r.systemPrompt !== undefined ? { system_prompt: r.systemPrompt } : {}),
    messages: r.messages.map((m) => ({
      role: m.role,
      text: m.text,
      ...(m.images.length ? { images: m.images.map((i) => ({ mimeType: i.mimeType, data: i.data })) } : {}),
    })),
    max_tokens: r.maxTokens,
    ...(r.temperature !== undefined ? { temperature: r.temperature } : {}),
    ...(r.stopSequences.length ? { stop_sequences: r.stopSequences } : {}),
  };
}

export function encodeSamplingReply(r: SamplingReply): Uint8Array {
  return toBinary(
    SamplingReplySchema,
    create(SamplingReplySchema, { model: r.model, text: r.text, stopReason: r.stop_reason, inputTokens: r.input_tokens, outputTokens: r.output_tokens }),
  );
}

export function decodeSamplingReply(data: Uint8Array): SamplingReply {
  const r = fromBinary(SamplingReplySchema, data);
  return {
    model: r.model,
    text: r.text,
    stop_reason: r.stopReason === 'maxTokens' ? 'maxTokens' : 'endTurn',
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
  };
}
