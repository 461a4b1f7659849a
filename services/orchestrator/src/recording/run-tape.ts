/**
 * Which tape a run gets (issue 17): recorded per `RECORD_RUNS` (all | off | opt-in),
 * `RECORD_RUNS_TENANTS` and the run's `config.configurable.record`; replayed when the gateway
 * marked its config as the replay of a recorded run. See the README's "Record and replay".
 */
import type { Logger } from '@agentloop/core';
import type { JsonObject, Store } from '@agentloop/store';
import type { RunJob } from '@agentloop/proto';
import { RunInputError } from '../errors.js';
import type { ModelResolver } from '../run/input.js';
import { REPLAY_CONFIG_KEY, REPLAY_EVENT_KEY, type ReplayReport, type ReplayTools } from './format.js';
import { RunRecorder, type RecorderStore } from './recorder.js';
import { ReplaySession } from './replay-session.js';
import { replayModel } from './replay-model.js';
import { chainTapes, type RunTape } from './tape.js';

export const RECORD_MODES = ['all', 'off', 'opt-in'] as const;
export type RecordMode = (typeof RECORD_MODES)[number];

export interface RecordingPolicy {
  mode: RecordMode;
  /** Tenants whose runs are recorded in `opt-in` mode without asking. */
  tenants: ReadonlySet<string>;
  /**
   * Whether a replay of an imported recording (`replay_recording`, ids `import-…`) may execute its
   * tool calls: the client wrote those calls, not a model, so this is what the scripted provider
   * allows (ALLOW_SCRIPTED_MODEL, issue 18) and follows that switch.
   */
  executeImported?: boolean;
}

/** Ids the gateway gives recordings a client imported (`replay_recording`). */
export const IMPORTED_RECORDING_PREFIX = 'import-';

/**
 * `off` records nothing, whatever a run asks (the operator's word wins: recordings hold prompts and
 * tool output). `all` records every run but one that says `record: false`; `opt-in` records a run
 * that says `record: true` or belongs to a listed tenant.
 */
export function shouldRecord(policy: RecordingPolicy, tenantId: string, configurable: JsonObject): boolean {
  const asked = configurable.record;
  switch (policy.mode) {
    case 'off':
      return false;
    case 'all':
      return asked !== false;
    case 'opt-in':
      return asked === true || (asked !== false && policy.tenants.has(tenantId));
  }
}

/** The replay a run's config asks for (set by the gateway from `replay_of` / `replay_tools`), or null. */
export function replayRequest(configurable: JsonObject): { of: string; tools: ReplayTools } | null {
  const r = configurable[REPLAY_CONFIG_KEY];
  if (r === undefined || r === null) return null;
  const o = r as { of?: unknown; tools?: unknown };
  if (typeof o.of !== 'string' || (o.tools !== 'recorded' && o.tools !== 'execute')) {
    throw new RunInputError(`config.configurable.${REPLAY_CONFIG_KEY} must be {"of": "<run id>", "tools": "recorded" | "execute"}`);
  }
  return { of: o.of, tools: o.tools };
}

export interface OpenedTape {
  tape: RunTape | undefined;
  replay: ReplaySession | undefined;
}

/** The tape of a job: a recorder, a replay, both (a recorded replay) or none. */
export async function openRunTape(
  deps: { store: RecorderStore & Pick<Store, 'listRecordingEvents'>; policy: RecordingPolicy },
  job: Pick<RunJob, 'tenantId' | 'runId'>,
  configurable: JsonObject,
  log: Logger,
): Promise<OpenedTape> {
  const wanted = replayRequest(configurable);
  let replay: ReplaySession | undefined;
  if (wanted) {
    if (wanted.tools === 'execute' && wanted.of.startsWith(IMPORTED_RECORDING_PREFIX) && !deps.policy.executeImported) {
      throw new RunInputError(
        'Executing the tool calls of an imported recording is disabled on this deployment (ALLOW_SCRIPTED_MODEL=false): ' +
          'its calls were written by the client, not by a model. Replay it with replay_tools "recorded", or replay a run recorded here.',
      );
    }
    const events = await deps.store.listRecordingEvents(job.tenantId, wanted.of);
    if (!events.some((e) => e.kind === 'model_call')) throw new RunInputError(`Run ${wanted.of} has no recorded model call to replay.`);
    replay = new ReplaySession(wanted.of, wanted.tools, events, log);
  }
  const recorder = shouldRecord(deps.policy, job.tenantId, configurable) ? new RunRecorder(deps.store, job, log) : undefined;
  const tape = replay && recorder ? chainTapes(replay, recorder) : (replay ?? recorder);
  return { tape, replay };
}

/** Every model of a replay run is the replay's: the run needs no model endpoint. */
export function replayResolver(replay: ReplaySession): ModelResolver {
  return { resolve: () => replayModel(replay), configuredSlots: () => [] };
}

/** Writes the replay's outcome under the replay run (the gateway shows it as the run's `metadata.replay`). */
export async function saveReplayReport(
  store: Pick<Store, 'appendRecordingEvent'>,
  job: Pick<RunJob, 'tenantId' | 'runId'>,
  replay: ReplaySession,
): Promise<ReplayReport> {
  const report = replay.report();
  await store.appendRecordingEvent({
    tenantId: job.tenantId,
    runId: job.runId,
    key: REPLAY_EVENT_KEY,
    kind: 'replay',
    step: 0,
    payload: report as unknown as JsonObject,
  });
  return report;
}
