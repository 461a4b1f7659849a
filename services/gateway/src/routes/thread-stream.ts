/**
 * `GET /threads/{id}/stream` (the SDK's `threads.joinStream`): one SSE stream of the events of every
 * run on the thread, run after run, until the client leaves. Each run starts with a `metadata`
 * event ({run_id, thread_id}) and ends with `end`; in between come its events as
 * `GET /runs/{id}/stream` sends them (redacted errors). `stream_mode` is LangGraph's thread stream
 * mode — `run_modes` (default: each run's events in the modes the run was created with),
 * `lifecycle` (only each run's `metadata` and `end`), `state_update` (state updates made outside a
 * run: not published yet, so it adds nothing) — or run stream modes (`values`, `updates`...) to
 * filter every run's events alike. Event ids are `<run_id>:<event id>`, so a client reconnecting
 * with `Last-Event-ID` picks up where it left: the rest of that run, then the runs after. Without
 * it the stream starts with the run holding the thread, if any, then each new run.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { errorMessage, isUuid } from '@agentloop/core';
import type { RunRecord } from '@agentloop/store';
import type { RouteContext } from '../context.js';
import { invalid } from '../errors.js';
import { normalizeStreamModes, StreamModeSchema, wantsEvent } from '../run-schema.js';
import { SseWriter } from '../sse.js';
import { parseRequest, ThreadParams } from '../validation.js';
import { requireThread } from './threads.js';

const THREAD_STREAM_MODES = ['run_modes', 'lifecycle', 'state_update'] as const;
const ThreadStreamMode = z.union([z.enum(THREAD_STREAM_MODES), StreamModeSchema]);
const ThreadStreamQuery = z.object({ stream_mode: z.union([ThreadStreamMode, z.array(ThreadStreamMode)]).optional() });

/** Which of a run's events the client gets, by the thread stream modes it asked for. */
function eventFilter(requested: readonly string[]): (event: string, run: RunRecord) => boolean {
  const runModes = requested.filter((m) => !(THREAD_STREAM_MODES as readonly string[]).includes(m));
  const ownModes = requested.includes('run_modes');
  return (event, run) => {
    if (event === 'metadata' || event === 'end' || event === 'error') return true;
    if (ownModes && wantsEvent(event, normalizeStreamModes(storedModes(run)))) return true;
    return runModes.length > 0 && wantsEvent(event, runModes);
  };
}

/** The stream modes a run was created with (kwargs.stream_mode), if it named any. */
function storedModes(run: RunRecord): string[] | undefined {
  const m = run.kwargs.stream_mode;
  if (typeof m === 'string') return [m];
  return Array.isArray(m) && m.every((x) => typeof x === 'string') ? (m as string[]) : undefined;
}

/** How often the stream looks for the thread's next run while none is running. */
const NEXT_RUN_POLL_MS = 250;
const TERMINAL = new Set(['success', 'error', 'timeout', 'interrupted']);

/** Where a reconnecting client left: `<run_id>:<event id>`. */
function parseThreadEventId(header: string | string[] | undefined): { runId: string; afterId: number } | null {
  const raw = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!raw) return null;
  const m = /^([0-9a-fA-F-]{36}):(\d{1,15})$/.exec(raw);
  if (!m || !isUuid(m[1]!)) throw invalid('headers.last-event-id', `must be an id this stream sent ("<run_id>:<event id>"), got "${raw}"`);
  return { runId: m[1]!.toLowerCase(), afterId: Number(m[2]) };
}

const byCreation = (a: RunRecord, b: RunRecord): number => a.createdAt.getTime() - b.createdAt.getTime() || a.runId.localeCompare(b.runId);

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Aborts when the client leaves or the gateway shuts down (no time cap: the stream is the client's to end). */
function streamSignal(ctx: RouteContext, reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.on('close', () => gone.abort());
  return AbortSignal.any([gone.signal, ctx.runs.closingSignal]);
}

export function registerThreadStreamRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/threads/:thread_id/stream', async (request, reply) => {
    const { thread_id } = parseRequest(ThreadParams, request.params, 'params');
    const q = parseRequest(ThreadStreamQuery, request.query ?? {}, 'query');
    const resume = parseThreadEventId(request.headers['last-event-id']);
    const tenantId = request.tenantId;
    await requireThread(ctx, tenantId, thread_id);
    const requested = q.stream_mode === undefined ? ['run_modes'] : ([q.stream_mode].flat(2) as string[]);
    const wanted = eventFilter(requested);
    const list = () => ctx.store.listRuns(tenantId, thread_id, { limit: 100 });

    // Runs already done (or, when resuming, older than the run the client was in) are not replayed.
    const seen = new Set<string>();
    const cursors = new Map<string, number>();
    const initial = await list();
    const resumed = resume ? initial.find((r) => r.runId === resume.runId) : undefined;
    for (const r of initial) {
      if (resumed ? byCreation(r, resumed) < 0 : TERMINAL.has(r.status)) seen.add(r.runId);
    }
    if (resume && resumed) cursors.set(resumed.runId, resume.afterId);

    const signal = streamSignal(ctx, reply);
    reply.hijack();
    const sse = new SseWriter(reply.raw);
    sse.open({ ...reply.getHeaders(), 'content-location': `/threads/${thread_id}/stream` }, ctx.config.SSE_HEARTBEAT_MS);
    try {
      while (!signal.aborted && !sse.closed) {
        const next = (await list()).filter((r) => !seen.has(r.runId)).sort(byCreation)[0];
        if (!next) {
          await pause(NEXT_RUN_POLL_MS, signal);
          continue;
        }
        seen.add(next.runId);
        const afterId = cursors.get(next.runId) ?? 0;
        // A resumed run's metadata was sent before the reconnect.
        if (!cursors.has(next.runId)) await sse.send({ event: 'metadata', data: JSON.stringify({ run_id: next.runId, thread_id }), id: `${next.runId}:0` });
        for await (const ev of ctx.runs.events(tenantId, next.runId, afterId, signal)) {
          if (wanted(ev.event, next)) {
            await sse.send({ event: ev.event, data: ev.event === 'error' ? ctx.redact(ev.dataJson) : ev.dataJson, id: `${next.runId}:${ev.id}` });
          }
          if (sse.closed) break;
        }
      }
    } catch (err) {
      request.log.error({ thread_id, err: errorMessage(err) }, 'thread event stream failed');
      await sse.send({
        event: 'error',
        data: JSON.stringify({ error: 'StreamError', message: `Lost the thread's event stream: ${errorMessage(err)}. Join it again.` }),
      });
    } finally {
      sse.end();
    }
  });
}
