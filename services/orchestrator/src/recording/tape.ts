/**
 * The one hook the graph's nodes call for record and replay (issue 17): the agent node hands it
 * each model call, the tools node runs each bus tool call through it. A run that is neither
 * recorded nor replayed has no tape, and the nodes do what they always did.
 */
import type { AIMessage, BaseMessage } from '@langchain/core/messages';
import type { ToolSpec } from '@agentloop/proto';
import type { ResolvedModel } from '../models/registry.js';
import type { ToolCallResult } from '../tool-client.js';

/** One model call of the agent node, as sent and as answered (after post-processing). */
export interface ModelCallRecord {
  /** The run's model call index (compaction summaries count too). */
  turn: number;
  model: Pick<ResolvedModel, 'label' | 'provider' | 'modelId'>;
  tools: readonly ToolSpec[];
  /** The messages as sent: the system prompt, then the history window. */
  messages: readonly BaseMessage[];
  response: AIMessage;
  startedAt: Date;
}

export interface TapeToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface RunTape {
  modelCall(record: ModelCallRecord): Promise<void>;
  /** Runs (or answers) one bus tool call of model call `step`; `execute` is the real call. */
  toolCall(step: number, call: TapeToolCall, execute: () => Promise<ToolCallResult>): Promise<ToolCallResult>;
}

/** `outer` sees what `inner` answers: a replay (inner) that is itself recorded (outer). */
export function chainTapes(inner: RunTape, outer: RunTape): RunTape {
  return {
    async modelCall(record) {
      await inner.modelCall(record);
      await outer.modelCall(record);
    },
    toolCall: (step, call, execute) => outer.toolCall(step, call, () => inner.toolCall(step, call, execute)),
  };
}
