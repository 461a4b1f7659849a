/**
 * One replay of a recorded run (issue 17): answers each model call from the recording, in order,
 * answers each bus tool call from it or executes it again, and keeps the first point where the
 * replay differs from the recording.
 *
 * Policy (README "Record and replay"): a divergence is reported and the replay goes on answering
 * from the recording, so the run still ends with a full final state to compare; only a model call
 * the recording has no answer for (`extra_call`) stops the run, since nothing can answer it.
 */
import type { AIMessage } from '@langchain/core/messages';
import type { Logger } from '@agentloop/core';
import type { RecordingEvent } from '@agentloop/store';
import type { ToolCallResult } from '../tool-client.js';
import { firstRequestDifference } from './compare.js';
import {
  recordedAiMessage,
  recordMessages,
  recordTools,
  type Divergence,
  type ModelCallPayload,
  type ReplayReport,
  type ReplayTools,
  type ToolCallPayload,
} from './format.js';
import type { ModelCallRecord, RunTape, TapeToolCall } from './tape.js';

/** Longest string a divergence report keeps of a value (a whole transcript would bloat the run's metadata). */
export const REPORT_STRING_MAX = 2_000;

/** `v` with every string past REPORT_STRING_MAX cut, saying how much was cut. */
function clip(v: unknown): unknown {
  if (typeof v === 'string') return v.length > REPORT_STRING_MAX ? `${v.slice(0, REPORT_STRING_MAX)}… [${v.length - REPORT_STRING_MAX} more characters]` : v;
  if (Array.isArray(v)) return v.map(clip);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clip(x)]));
  return v;
}

export class ReplayExhaustedError extends Error {
  override name = 'ReplayExhaustedError';
  readonly code = 'REPLAY_EXHAUSTED';
}

export class ReplaySession implements RunTape {
  private readonly models = new Map<number, ModelCallPayload>();
  private readonly tools = new Map<string, ToolCallPayload>();
  private readonly answeredModels = new Set<number>();
  private readonly answeredTools = new Set<string>();
  private first: Divergence | null = null;

  constructor(
    readonly of: string,
    readonly toolMode: ReplayTools,
    events: readonly RecordingEvent[],
    private readonly log: Logger,
  ) {
    for (const e of events) {
      if (e.kind === 'model_call') this.models.set(e.step, e.payload as unknown as ModelCallPayload);
      else if (e.kind === 'tool_call') {
        const p = e.payload as unknown as ToolCallPayload;
        this.tools.set(p.call.id, p);
      }
    }
  }

  /** Model calls the recording holds. */
  get recordedModelCalls(): number {
    return this.models.size;
  }

  /** The recorded answer of model call `turn`; a call beyond the recording is a divergence that stops the run. */
  answer(turn: number): AIMessage {
    const recorded = this.models.get(turn);
    if (!recorded) {
      this.diverge({ step: turn, kind: 'extra_call', expected: null, actual: { model_call: turn } });
      throw new ReplayExhaustedError(
        `Replay of run ${this.of}: the replay made model call #${turn + 1}, the recording has ${this.models.size}. The replay stops here.`,
      );
    }
    this.answeredModels.add(turn);
    return recordedAiMessage(recorded.response);
  }

  /** Compares the request the replay sent with the recorded one (the answer came from the recording already). */
  modelCall(r: ModelCallRecord): Promise<void> {
    const recorded = this.models.get(r.turn);
    if (recorded) {
      const diff = firstRequestDifference(recorded.request, { messages: recordMessages(r.messages), tools: recordTools(r.tools) });
      if (diff) this.diverge({ step: r.turn, kind: 'model_request', path: diff.path, expected: diff.expected, actual: diff.actual });
    }
    return Promise.resolve();
  }

  async toolCall(step: number, call: TapeToolCall, execute: () => Promise<ToolCallResult>): Promise<ToolCallResult> {
    const recorded = this.tools.get(call.id);
    this.answeredTools.add(call.id);
    if (!recorded) {
      this.diverge({ step, kind: 'extra_call', expected: null, actual: { tool: call.name, tool_call_id: call.id, args: call.args } });
      if (this.toolMode === 'execute') return execute();
      return { content: `Error: the recording of run ${this.of} has no result for tool call ${call.id} (${call.name}).`, isError: true, errorCode: 'REPLAY' };
    }
    const expected: ToolCallResult = {
      content: recorded.result.content,
      isError: recorded.result.is_error,
      ...(recorded.result.error_code ? { errorCode: recorded.result.error_code } : {}),
    };
    if (this.toolMode === 'recorded') return expected;
    const actual = await execute();
    if (actual.content !== expected.content || actual.isError !== expected.isError) {
      this.diverge({
        step,
        kind: 'tool_result',
        path: `tool_calls[${call.id}]`,
        expected: { tool: call.name, content: expected.content, is_error: expected.isError },
        actual: { tool: call.name, content: actual.content, is_error: actual.isError },
      });
    }
    return actual;
  }

  /** The outcome, once the run stopped: a recorded call the replay never made is a `missing_call`. */
  report(): ReplayReport {
    if (!this.first) {
      const missingModel = [...this.models.keys()].sort((a, b) => a - b).find((t) => !this.answeredModels.has(t));
      const missingTool = [...this.tools.values()].find((t) => !this.answeredTools.has(t.call.id));
      if (missingModel !== undefined) {
        this.diverge({ step: missingModel, kind: 'missing_call', expected: { model_call: missingModel }, actual: null });
      } else if (missingTool) {
        this.diverge({ step: 0, kind: 'missing_call', expected: { tool: missingTool.call.name, tool_call_id: missingTool.call.id }, actual: null });
      }
    }
    return this.first ? { of: this.of, tools: this.toolMode, diverged: true, at: this.first } : { of: this.of, tools: this.toolMode, diverged: false };
  }

  private diverge(d: Divergence): void {
    if (this.first) return;
    this.first = { ...d, expected: clip(d.expected), actual: clip(d.actual) };
    this.log.warn({ replay_of: this.of, divergence: d }, 'replay diverged from its recording');
  }
}
