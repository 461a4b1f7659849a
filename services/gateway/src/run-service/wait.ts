/** `runs.wait` and `join`: waiting for a run's end, pushed by the run-event stream (no polling). */
import { UnavailableError } from '@agentloop/core';
import type { RunEndWatch, RunEventStream } from '@agentloop/bus';
import type { JsonObject, RunRecord, Store } from '@agentloop/store';
import type { WaitResult } from '../run-service.js';
import { isTerminal } from './cancellation.js';
import { readsThroughOutages } from './store-outage.js';
import { errorFromRecord, EventCursor, parseErrorEvent, type RunErrorInfo } from './event-cursor.js';

/** How long errorFromLog waits for the next event of a log that already holds the run's end. */
const LOG_IDLE_MS = 5_000;

export interface WaitDeps {
  events: RunEventStream;
  store: Pick<Store, 'getRunWithThreadValues'>;
}

/**
 * Waits for the run's end: through the stream's live watch when it has one (cheaper, see
 * waitByWatch), else — or when the watch has no verdict — by following the run's event log from
 * its start, which also replays an end that happened before the wait began. Its store reads
 * retry through a database outage (store-outage.ts). `liveSinceAdmission`: a watch started before
 * the run was admitted (`RunService.create` with `watchEnd`), used and closed here.
 */
export async function waitForRunEnd(
  waitDeps: WaitDeps,
  tenantId: string,
  runId: string,
  signal: AbortSignal,
  liveSinceAdmission?: RunEndWatch,
): Promise<WaitResult> {
  const deps = { ...waitDeps, store: readsThroughOutages(waitDeps.store, signal) };
  const watched = await waitByWatch(deps, tenantId, runId, signal, liveSinceAdmission);
  if (watched) return watched;
  const cursor = new EventCursor(deps.events, runId, 0, signal);
  try {
    const read = await deps.store.getRunWithThreadValues(tenantId, runId);
    if (!read) return { kind: 'missing' };
    if (isTerminal(read.run.status)) return finished(read, errorFromRecord(read.run));
    let error: RunErrorInfo | undefined;
    let sawEnd = false;
    for (;;) {
      const ev = await cursor.next();
      if (ev === undefined || ev === 'idle') break;
      if (ev.event === 'error') error = parseErrorEvent(ev.dataJson);
      if (ev.event === 'end') {
        sawEnd = true;
        break;
      }
    }
    if (!sawEnd && signal.aborted) return { kind: 'aborted' };
    const end = await deps.store.getRunWithThreadValues(tenantId, runId);
    if (!end) return { kind: 'missing' };
    if (!sawEnd && !isTerminal(end.run.status)) {
      throw new UnavailableError(`The event stream of run ${runId} closed before the run finished; join it again.`);
    }
    return finished(end, error ?? errorFromRecord(end.run));
  } finally {
    cursor.close();
  }
}

/**
 * The run's end through RunEventStream.watchEnd (JetStream: a core NATS subscription instead of
 * a consumer created, pulled and deleted per wait — issue 9, bench/throughput "Cluster mode").
 * The watch is live before the record is read, and the end event is published only after the
 * record says the run ended, so an end is either in the record or seen by the watch. A watch live
 * since before the run was admitted sees every end of the run, so that first read is skipped
 * (`runs.wait`: one statement fewer, issue 9). A run deleted between its admission and the wait is
 * then waited for as one deleted just after that read was. Undefined
 * when it has no verdict: no watch, or the connection dropped (events may be lost). A failed run
 * whose `error` event was published before the watch started has it read from the log (its type).
 */
async function waitByWatch(
  deps: WaitDeps,
  tenantId: string,
  runId: string,
  signal: AbortSignal,
  liveSinceAdmission: RunEndWatch | undefined,
): Promise<WaitResult | undefined> {
  const watch = liveSinceAdmission ?? deps.events.watchEnd?.(runId, signal);
  if (!watch) return undefined;
  try {
    await watch.ready;
    if (!liveSinceAdmission) {
      const read = await deps.store.getRunWithThreadValues(tenantId, runId);
      if (!read) return { kind: 'missing' };
      if (isTerminal(read.run.status)) return finished(read, errorFromRecord(read.run));
    }
    const r = await watch.done;
    if (r.kind === 'aborted') return { kind: 'aborted' };
    if (r.kind === 'lost') return undefined;
    const end = await deps.store.getRunWithThreadValues(tenantId, runId);
    if (!end) return { kind: 'missing' };
    const { run } = end;
    if (r.errorJson !== undefined) return finished(end, parseErrorEvent(r.errorJson));
    if (run.status !== 'error' && run.status !== 'timeout') return finished(end, undefined);
    return finished(end, (await errorFromLog(deps.events, runId, signal)) ?? errorFromRecord(run));
  } finally {
    watch.close();
  }
}

/**
 * A finished wait: the run and, read in the same statement, its thread's values, which the run's
 * end wrote in the transaction that ended it — the body of `runs.wait` without a read of the
 * thread after it (issue 9).
 */
function finished(read: { run: RunRecord; threadValues: JsonObject | null }, error: RunErrorInfo | undefined): WaitResult {
  return { kind: 'finished', run: read.run, error, threadValues: read.threadValues };
}

/** The `error` event of a run whose `end` is in its log already (undefined: none). */
async function errorFromLog(events: RunEventStream, runId: string, signal: AbortSignal): Promise<RunErrorInfo | undefined> {
  const cursor = new EventCursor(events, runId, 0, signal);
  try {
    let error: RunErrorInfo | undefined;
    for (;;) {
      // The log is complete up to `end`: silence means it was purged meanwhile (thread deleted).
      const ev = await cursor.next(LOG_IDLE_MS);
      if (ev === undefined || ev === 'idle') return error;
      if (ev.event === 'error') error = parseErrorEvent(ev.dataJson);
      if (ev.event === 'end') return error;
    }
  } finally {
    cursor.close();
  }
}
