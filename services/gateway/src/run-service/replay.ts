/**
 * Replay requests (issue 17, README "Record and replay"): a run created with `replay_of` (a
 * recorded run of the same tenant) or `replay_recording` (an exported recording, e.g. a regression
 * test's fixture) runs the recorded run's input and config again, with the orchestrator answering
 * model calls from the recording. The orchestrator learns which recording from one
 * `config.configurable` key; an inline recording is first stored under a new id of its own.
 */
import { z } from 'zod';
import { newId } from '@agentloop/core';
import { IMPORTED_RECORDING_PREFIX, REPLAY_CONFIG_KEY } from '@agentloop/orchestrator';
import type { JsonObject, RunRecord, Store } from '@agentloop/store';
import { invalid, notFound } from '../errors.js';
import type { RunCreateBody } from '../run-schema.js';
import { RECORDING_FORMAT, RECORDING_FORMAT_VERSION } from '../recording-export.js';

const RecordedMessages = z.array(z.record(z.string(), z.unknown()));

const ModelCallEvent = z.object({
  kind: z.literal('model_call'),
  step: z.number().int().min(0),
  request: z.looseObject({ messages: RecordedMessages, tools: z.array(z.looseObject({ name: z.string(), parameters: z.string() })) }),
  response: z.looseObject({ type: z.literal('ai') }),
});
const ToolCallEvent = z.object({
  kind: z.literal('tool_call'),
  step: z.number().int().min(0),
  call: z.object({ id: z.string().min(1).max(256), name: z.string().min(1), args: z.record(z.string(), z.unknown()) }),
  result: z.object({ content: z.string(), is_error: z.boolean(), error_code: z.string().nullable() }),
});

/** An exported recording (`GET /runs/{id}/recording`) given inline as `replay_recording`. */
export const InlineRecording = z.looseObject({
  format: z.literal(RECORDING_FORMAT),
  version: z.literal(RECORDING_FORMAT_VERSION),
  run_id: z.string(),
  input: z.record(z.string(), z.unknown()).nullable(),
  config: z.record(z.string(), z.unknown()).nullable(),
  events: z
    .array(z.discriminatedUnion('kind', [z.looseObject(ModelCallEvent.shape), z.looseObject(ToolCallEvent.shape)]))
    .min(1)
    .max(100_000),
});
export type InlineRecording = z.infer<typeof InlineRecording>;

/** The config a replay runs with: the recorded run's, without its own replay marker and checkpoint, plus the marker of this replay. */
function replayConfig(recorded: JsonObject | null | undefined, of: string, tools: 'recorded' | 'execute'): JsonObject {
  const config = { ...(recorded ?? {}) };
  const configurable = { ...((config.configurable as JsonObject | undefined) ?? {}) };
  delete configurable.checkpoint_id;
  delete configurable.checkpoint_ns;
  configurable[REPLAY_CONFIG_KEY] = { of, tools };
  return { ...config, configurable };
}

/** Stores an inline recording's events under a new id; returns that id. */
async function importRecording(store: Pick<Store, 'appendRecordingEvent'>, tenantId: string, rec: InlineRecording): Promise<string> {
  const id = `${IMPORTED_RECORDING_PREFIX}${newId()}`;
  for (const e of rec.events) {
    const { kind, step, ...payload } = e;
    const key = kind === 'model_call' ? `model:${step}` : `tool:${(e as z.infer<typeof ToolCallEvent>).call.id}`;
    await store.appendRecordingEvent({ tenantId, runId: id, key, kind, step, payload });
  }
  return id;
}

/**
 * The run request a replay request stands for (any other request unchanged): the recorded input
 * and config, marked for the orchestrator. 404 when the recorded run is not the tenant's; 422 when
 * it has no recording or the request also gives its own input or command.
 */
export async function resolveReplay(
  store: Pick<Store, 'getRun' | 'listRecordingEvents' | 'appendRecordingEvent'>,
  tenantId: string,
  body: RunCreateBody,
): Promise<RunCreateBody> {
  const given = body.replay_of ? 'replay_of' : body.replay_recording ? 'replay_recording' : null;
  if (!given) {
    if (body.replay_tools) throw invalid('body.replay_tools', 'only applies with replay_of or replay_recording');
    return body;
  }
  if (body.replay_of && body.replay_recording) throw invalid('body.replay_recording', 'give either replay_of or replay_recording, not both');
  if (body.input) throw invalid('body.input', `a replay runs the recorded run's input: leave input out with ${given}`);
  if (body.command) throw invalid('body.command', `a replay starts the recorded run again: leave command out with ${given}`);
  const tools = body.replay_tools ?? 'recorded';
  const { replay_recording: inline, ...rest } = body;
  if (inline) {
    const parsed = InlineRecording.safeParse(inline);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalid(`body.replay_recording${issue?.path.length ? '.' + issue.path.join('.') : ''}`, issue?.message ?? 'not a run recording');
    }
    const of = await importRecording(store, tenantId, parsed.data);
    return { ...rest, replay_of: of, input: parsed.data.input, config: replayConfig(parsed.data.config, of, tools) as RunCreateBody['config'] };
  }
  const of = body.replay_of!;
  const recorded: RunRecord | undefined = await store.getRun(tenantId, of);
  if (!recorded) throw notFound(`Run ${of} not found.`);
  const events = await store.listRecordingEvents(tenantId, of);
  if (!events.some((e) => e.kind === 'model_call')) {
    throw invalid('body.replay_of', `run ${of} has no recording: record runs with RECORD_RUNS=all, or config.configurable.record: true`);
  }
  const input = recorded.kwargs.input as JsonObject | undefined;
  if (!input) throw invalid('body.replay_of', `run ${of} had no input (a resume or a continuation) and cannot be replayed on its own`);
  return { ...rest, input, config: replayConfig(recorded.kwargs.config as JsonObject | undefined, of, tools) as RunCreateBody['config'] };
}
