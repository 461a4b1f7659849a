/**
 * Records a run (issue 17): each model call and each bus tool call becomes one row of the run's
 * recording (store `appendRecordingEvent`), written as it happens so a run that dies midway keeps
 * what it did. A failed write is logged and the run goes on: a recording is a diagnostic, and
 * losing one must not fail a production run.
 *
 * What repeats is written once (issue 9): a model call's offered tools go to the tenant's stored
 * tool sets and the row refers to theirs by hash; its messages are stored as a delta of the
 * previous model call this recorder wrote (`message-delta.ts`). The store expands both when read.
 */
import type { ToolSpec } from '@agentloop/proto';
import { errorMessage, type Logger } from '@agentloop/core';
import { STORED_REQUEST_KEY, type JsonObject, type Store, type StoredRequestRefs } from '@agentloop/store';
import { modelEventKey, recordTools, toolEventKey, type ToolCallPayload } from './format.js';
import { messageDelta, type StoredMessages } from './message-delta.js';
import type { ModelCallRecord, RunTape, TapeToolCall } from './tape.js';
import type { ToolCallResult } from '../tool-client.js';
import { messageToJson } from '../serialize.js';

export type RecorderStore = Pick<Store, 'appendRecordingEvent' | 'saveRecordingToolset'>;

/** One set of tool specs and its recorded JSON. */
interface SerializedTools {
  specs: readonly ToolSpec[];
  json: string;
}

const sameSpecs = (a: readonly ToolSpec[], b: readonly ToolSpec[]): boolean => a.length === b.length && a.every((t, i) => t === b[i]);

/**
 * The last tool set serialized, shared by the recorders of this process: the tool client caches
 * its list, so run after run offers the very same spec objects, and the same JSON text lets the
 * store find the set's hash without hashing it again.
 */
let lastSerialized: SerializedTools | undefined;

function serializedTools(tools: readonly ToolSpec[]): string {
  if (lastSerialized && sameSpecs(lastSerialized.specs, tools)) return lastSerialized.json;
  lastSerialized = { specs: [...tools], json: JSON.stringify(recordTools(tools)) };
  return lastSerialized.json;
}

export class RunRecorder implements RunTape {
  /** The last model call written by this recorder: the base of the next one's messages. */
  private lastRequest: StoredMessages | undefined;
  /** The last tool set stored, by the identity of its specs (a run offers the same ones step after step). */
  private lastTools: { specs: readonly ToolSpec[]; hash: string } | undefined;

  constructor(
    private readonly store: RecorderStore,
    private readonly run: { tenantId: string; runId: string },
    private readonly log: Logger,
  ) {}

  async modelCall(r: ModelCallRecord): Promise<void> {
    const key = modelEventKey(r.turn);
    const endedAt = new Date().toISOString();
    try {
      const toolsSet = await this.toolsetOf(r.tools);
      const delta = messageDelta(this.lastRequest, r.messages);
      const refs: StoredRequestRefs = { ...(delta.base ? { base: delta.base } : {}), tools_set: toolsSet };
      const payload = {
        request: {
          model: { label: r.model.label, provider: r.model.provider, model_id: r.model.modelId },
          messages: delta.added,
          [STORED_REQUEST_KEY]: refs,
        },
        response: messageToJson(r.response),
        started_at: r.startedAt.toISOString(),
        ended_at: endedAt,
      };
      const written = await this.store.appendRecordingEvent({ ...this.run, key, kind: 'model_call', step: r.turn, payload, compact: true });
      // A key written before (a step re-run) holds that write's messages, not these: no base then.
      this.lastRequest = written ? { key, messages: r.messages, json: delta.all } : undefined;
    } catch (err) {
      this.lastRequest = undefined;
      this.warn(err, key);
    }
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
    const key = toolEventKey(call.id);
    try {
      await this.store.appendRecordingEvent({ ...this.run, key, kind: 'tool_call', step, payload: payload as unknown as JsonObject });
    } catch (err) {
      this.warn(err, key);
    }
    return result;
  }

  private async toolsetOf(tools: readonly ToolSpec[]): Promise<string> {
    const last = this.lastTools;
    if (last && sameSpecs(last.specs, tools)) return last.hash;
    const hash = await this.store.saveRecordingToolset(this.run.tenantId, serializedTools(tools));
    this.lastTools = { specs: [...tools], hash };
    return hash;
  }

  private warn(err: unknown, event: string): void {
    this.log.warn({ err: errorMessage(err), event }, 'run recording: event not written; the recording of this run is incomplete');
  }
}
