import { z } from 'zod';
import { errorMessage } from '@agentloop/core';
import { create, RunStreamEventSchema, type RunStreamEvent } from '@agentloop/proto';
import type { RunRecord } from '@agentloop/store';
import { invalid } from '../../errors.js';
import { normalizeStreamModes, StreamModeSchema, wantsEvent } from '../../run-schema.js';
import { parseRequest } from '../../validation.js';
import { abortedError, lostStream, type CallScope, type GrpcContext, type StreamSink } from '../call.js';
import { withProtoFieldNames } from '../convert.js';
import type { RequestOf } from '../definition.js';
import { admitRun, requireRun } from './runs.js';

const JoinModes = z.object({ stream_mode: StreamModeSchema.optional() });

/**
 * Sends the run's events after `afterId` that `modes` asks for (run-schema `wantsEvent`, as the
 * SSE stream does) until `end`. Stops reading as soon as the call is over. Returns normally only
 * once `end` was read; otherwise throws the status the call ends with (CANCELLED, which nobody
 * reads, DEADLINE_EXCEEDED, or UNAVAILABLE when the gateway stops or the event stream is lost).
 */
async function pipeRunEvents(
  ctx: GrpcContext,
  scope: CallScope,
  sink: StreamSink<RunStreamEvent>,
  run: RunRecord,
  afterId: number,
  modes: readonly string[],
): Promise<void> {
  let sawEnd = false;
  try {
    for await (const ev of ctx.runs.events(scope.tenant, run.runId, afterId, scope.signal)) {
      if (ev.event === 'end') sawEnd = true;
      if (!wantsEvent(ev.event, modes)) continue;
      // An `error` event is the run's failure text (orchestrator, tools): redacted like status details.
      const dataJson = ev.event === 'error' ? ctx.redact(ev.dataJson) : ev.dataJson;
      if (!(await sink.write(create(RunStreamEventSchema, { id: BigInt(ev.id), event: ev.event, dataJson })))) break;
    }
  } catch (err) {
    if (!scope.signal.aborted) {
      scope.log.error({ run_id: run.runId, err: errorMessage(err) }, 'run event stream failed');
      throw lostStream(run.runId, err);
    }
  }
  if (sawEnd) return;
  if (scope.signal.aborted) throw abortedError(scope, `run ${run.runId} goes on: re-join it with JoinRunStream after the last event id you received.`);
  throw lostStream(run.runId, undefined);
}

/** StreamRun and JoinRunStream: HTTP's SSE streams (POST .../runs/stream, GET .../runs/{id}/stream) over gRPC. */
export function streamHandlers(ctx: GrpcContext) {
  const { runs } = ctx;
  return {
    async streamRun(req: RequestOf<'streamRun'>, scope: CallScope, sink: StreamSink<RunStreamEvent>): Promise<void> {
      const created = await admitRun(ctx, scope, req);
      const { run } = created;
      let ended = false;
      try {
        const metadata = JSON.stringify({ run_id: run.runId, thread_id: run.threadId, attempt: 1 });
        await sink.write(create(RunStreamEventSchema, { id: 0n, event: 'metadata', dataJson: metadata }));
        await pipeRunEvents(ctx, scope, sink, run, 0, created.streamModes);
        ended = true;
      } finally {
        // A stateless run's temporary thread goes once the run has ended, whether or not the caller stayed.
        if (created.deleteOnCompletion) {
          if (ended)
            await runs
              .deleteStateless(scope.tenant, run)
              .catch((err: unknown) => scope.log.warn({ run_id: run.runId, err: errorMessage(err) }, 'stateless cleanup failed'));
          else runs.cleanupWhenDone(scope.tenant, run);
        }
      }
    },

    async joinRunStream(req: RequestOf<'joinRunStream'>, scope: CallScope, sink: StreamSink<RunStreamEvent>): Promise<void> {
      if (req.afterEventId < 0n || req.afterEventId > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw invalid('after_event_id', 'must be 0 or the id of an event this server sent (RunStreamEvent.id)');
      }
      let requested: z.infer<typeof JoinModes>;
      try {
        requested = parseRequest(JoinModes, { stream_mode: req.streamMode.length === 0 ? undefined : req.streamMode }, 'body');
      } catch (err) {
        throw withProtoFieldNames(err, { stream_mode: 'stream_mode' });
      }
      const run = await requireRun(ctx, scope.tenant, req.threadId, req.runId);
      // Like HTTP: the modes asked for now, else those the run was created with.
      const stored = run.kwargs.stream_mode;
      const modes = normalizeStreamModes(
        requested.stream_mode ?? (Array.isArray(stored) && stored.every((m) => typeof m === 'string') ? (stored as string[]) : undefined),
      );
      await pipeRunEvents(ctx, scope, sink, run, Number(req.afterEventId), modes);
    },
  };
}
