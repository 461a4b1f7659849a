/**
 * Records a run (issue 17): each model call and each bus tool call becomes one row of the run's
 * recording (store `appendRecordingEvent`), written as it happens so a run that dies midway keeps
 * what it did. A failed write is logged and the run goes on: a recording is a diagnostic, and
 * losing one must not fail a production run.
 */
import { errorMessage, type Logger } from '@agentloop/core';
import type { JsonObject, Store } from '@agentloop/store';
import { modelEventKey, recordMessages, recordTools, toolEventKey, type ModelCallPayload, type ToolCallPayload } from './format.js';
import type { ModelCallRecord, RunTape, TapeToolCall } from './tape.js';
import type { ToolCallResult } from '../tool-client.js';
import { messageToJson } from '../serialize.js';

export class RunRecorder implements RunTape {
  constructor(
    private readonly store: Pick<Store, 'appendRecordingEvent'>,
    private readonly run: { tenantId: string; runId: string },
    private readonly log: Logger,
  ) {}

  async modelCall(r: ModelCallRecord): Promise<void> {
    const payload: ModelCallPayload = {
      request: {
        model: { label: r.model.label, provider: r.model.provider, model_id: r.model.modelId },
        messages: recordMessages(r.messages),
        tools: recordTools(r.tools),
      },
      response: messageToJson(r.response),
      started_at: r.startedAt.toISOString(),
      ended_at: new Date().toISOString(),
    };
    await this.write(modelEventKey(r.turn), 'model_call', r.turn, payload);
  }

  async toolCall(step: number, call: TapeToolCall, execute: () => Promise<ToolCallResult>): Promise<ToolCallResult> {
    const startedAt = new Date();
    const result = await execute();
    // "Needs the user's input" is no result of the call: the run interrupts and a later run retries it.
    if (result.elicitation) return result;
    const payload: ToolCallPayload = {
      call,
      result: { content: result.content, is_error: result.isError, error_code: result.errorCode ?? null },
      started_at: startedAt.toISOString(),
      ended_at: new Date().toISOString(),
    };
    await this.write(toolEventKey(call.id), 'tool_call', step, payload);
    return result;
  }

  private async write(key: string, kind: 'model_call' | 'tool_call', step: number, payload: ModelCallPayload | ToolCallPayload): Promise<void> {
    try {
      await this.store.appendRecordingEvent({ ...this.run, key, kind, step, payload: payload as unknown as JsonObject });
    } catch (err) {
      this.log.warn({ err: errorMessage(err), event: key }, 'run recording: event not written; the recording of this run is incomplete');
    }
  }
}
