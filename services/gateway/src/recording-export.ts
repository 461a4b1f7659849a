/**
 * The export of a run's recording (issue 17): `GET /runs/{run_id}/recording`. A versioned JSON
 * document — the run, its input and config, then its model calls and tool calls in order — that
 * `replay_recording` takes back as it is (a regression test's fixture, `agentloop record-test`).
 */
import { REPLAY_CONFIG_KEY } from '@agentloop/orchestrator';
import type { JsonObject, RecordingEvent, RunRecord } from '@agentloop/store';

export const RECORDING_FORMAT = 'agentloop.run-recording';
/** Bumped when a field changes meaning; readers refuse versions they do not know. */
export const RECORDING_FORMAT_VERSION = 1;

export function recordingExport(run: RunRecord, events: readonly RecordingEvent[]): JsonObject {
  const replay = events.find((e) => e.kind === 'replay');
  return {
    format: RECORDING_FORMAT,
    version: RECORDING_FORMAT_VERSION,
    run_id: run.runId,
    thread_id: run.threadId,
    assistant_id: run.assistantId,
    parent_run_id: typeof run.metadata.parent_run_id === 'string' ? run.metadata.parent_run_id : null,
    status: run.status,
    created_at: run.createdAt.toISOString(),
    input: (run.kwargs.input as JsonObject | undefined) ?? null,
    config: (run.kwargs.config as JsonObject | undefined) ?? null,
    ...(replay ? { replay: replay.payload } : {}),
    events: events.filter((e) => e.kind !== 'replay').map((e) => ({ kind: e.kind, step: e.step, at: e.createdAt.toISOString(), ...e.payload })),
  };
}

/** A run as the API shows it, with `metadata.replay` (the replay's outcome) when it is a replay. */
export async function withReplayOutcome<T extends { metadata: JsonObject }>(
  listEvents: (tenantId: string, runId: string) => Promise<RecordingEvent[]>,
  run: RunRecord,
  api: T,
): Promise<T> {
  const configurable = (run.kwargs.config as { configurable?: JsonObject } | undefined)?.configurable;
  if (!configurable?.[REPLAY_CONFIG_KEY]) return api;
  const replay = (await listEvents(run.tenantId, run.runId)).find((e) => e.kind === 'replay');
  return { ...api, metadata: { ...api.metadata, replay: replay?.payload ?? { pending: true } } };
}
