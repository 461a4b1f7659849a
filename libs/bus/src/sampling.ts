/**
 * A model completion asked for by an MCP server during one of a run's tool calls
 * (`sampling/createMessage`), relayed by the MCP broker to the orchestrators (queue group
 * `orchestrator`), which answer it from the run's model slots. JSON request/reply, the tenant in
 * the `agentloop-tenant` header; a refusal is a thrown error (the `agentloop-error` header).
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
