import { startNats, type DevServer } from '@agentloop/devservers';
import { create, toBinary, RunEventSchema } from '@agentloop/proto';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJetStreamRunEventStream, type JetStreamRunEventStream } from './jetstream-events.js';
import { decodeMessage, encodeBatch, encodeEvent, eventId, eventNameOf, framesOf, ID_SPAN, resumePoint, runEventOf } from './run-event-batch.js';
import type { StoredRunEvent } from './types.js';

describe('run event batch format', () => {
  it('round-trips several events, and one event as a bare RunEvent', () => {
    const evs = ['values', 'updates', 'end'].map((e, i) => runEventOf('r1', 't1', e, `{"i":${i}}`, i + 1));
    const batch = encodeBatch(evs.map(encodeEvent));
    expect(batch.count).toBe(3);
    expect(decodeMessage(batch.payload).map((e) => [e.event, e.dataJson, Number(e.seq)])).toEqual([
      ['values', '{"i":0}', 1],
      ['updates', '{"i":1}', 2],
      ['end', '{"i":2}', 3],
    ]);
    const single = encodeBatch([encodeEvent(evs[0]!)]);
    expect(single.count).toBe(1);
    expect(decodeMessage(single.payload)[0]?.event).toBe('values');
  });

  it('reads the event name of an encoded event without decoding it, and not from garbage', () => {
    const evs = ['values', 'end'].map((e) => runEventOf('r1', 't1', e, JSON.stringify({ big: 'x'.repeat(300) }), 1));
    const frames = framesOf(encodeBatch(evs.map(encodeEvent)).payload);
    expect(frames.map(eventNameOf)).toEqual(['values', 'end']);
    expect(eventNameOf(encodeEvent(create(RunEventSchema, { runId: 'r', event: 'error', dataJson: '{}', tsMs: BigInt(Date.now()), seq: 2n ** 40n })))).toBe(
      'error',
    );
    expect(eventNameOf(new Uint8Array([0x1a, 0x05, 0x65]))).toBeUndefined(); // a length past the end
  });

  it('rejects a truncated batch', () => {
    const batch = encodeBatch(['a', 'b'].map((e) => encodeEvent(runEventOf('r1', 't1', e, 'null', 1))));
    expect(() => decodeMessage(batch.payload.subarray(0, batch.payload.length - 2))).toThrow(/truncated/);
  });

  it('resumes inside a message, after a full one, and from ids of before batching (repeats, no gap)', () => {
    expect(resumePoint(0)).toEqual({ seq: 1, skip: 0 });
    expect(resumePoint(eventId(7, 0))).toEqual({ seq: 7, skip: 1 });
    expect(resumePoint(eventId(7, 2))).toEqual({ seq: 7, skip: 3 });
    expect(resumePoint(eventId(7, ID_SPAN - 1))).toEqual({ seq: 8, skip: 0 });
    // A bare stream sequence given out before batching: an earlier message, never a later one.
    expect(resumePoint(42)).toEqual({ seq: 1, skip: 0 });
    expect(resumePoint(5_000).seq).toBeLessThanOrEqual(5_000);
  });
});

let server: DevServer;
let nc: NatsConnection;
let s: JetStreamRunEventStream;
const STREAM = 'RUN_EVENTS_BATCH';
const PREFIX = 'batch.events';
beforeAll(async () => {
  server = await startNats({ jetstream: true });
  nc = await connect({ servers: server.url });
  s = await createJetStreamRunEventStream({ nc, streamName: STREAM, subjectPrefix: PREFIX });
});
afterAll(async () => {
  await s?.close();
  await nc?.close();
  await server?.stop();
});

async function messagesOf(runId: string): Promise<number> {
  const subject = `${PREFIX}.${runId}`;
  const info = await (await jetstreamManager(nc)).streams.info(STREAM, { subjects_filter: subject });
  return info.state.subjects?.[subject] ?? 0;
}

async function collect(iter: AsyncIterable<StoredRunEvent>): Promise<StoredRunEvent[]> {
  const out: StoredRunEvent[] = [];
  for await (const e of iter) out.push(e);
  return out;
}

describe('JetStreamRunEventStream batching', () => {
  it('stores the events published while none of the run is acked yet as one message; awaited ones one each', async () => {
    await Promise.all([
      s.publish('run-b1', 't', 'updates', { n: 1 }),
      s.publish('run-b1', 't', 'values', { n: 2 }),
      s.publish('run-b1', 't', 'values', { n: 3 }),
    ]);
    expect(await messagesOf('run-b1')).toBe(1);
    await s.publish('run-b1', 't', 'values', { n: 4 });
    await s.publish('run-b1', 't', 'end', null);
    expect(await messagesOf('run-b1')).toBe(3);
    const events = await collect(s.subscribe('run-b1', { signal: AbortSignal.timeout(10_000) }));
    expect(events.map((e) => e.dataJson)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', 'null']);
  });

  it('reads messages stored before batching (a bare RunEvent each), ids after the stream sequence', async () => {
    const js = jetstream(nc);
    const bare = (event: string, dataJson: string) =>
      js.publish(
        `${PREFIX}.run-old`,
        toBinary(RunEventSchema, create(RunEventSchema, { runId: 'run-old', threadId: 't', event, dataJson, tsMs: 1n, seq: 1n })),
      );
    const a = await bare('values', '{"old":1}');
    const b = await bare('end', 'null');
    const events = await collect(s.subscribe('run-old', { signal: AbortSignal.timeout(10_000) }));
    expect(events.map((e) => [e.id, e.event])).toEqual([
      [eventId(a.seq, 0), 'values'],
      [eventId(b.seq, 0), 'end'],
    ]);
  });

  it('sees an end and the error before it when both share a message (watchEnd)', async () => {
    const watch = s.watchEnd('run-b2', AbortSignal.timeout(10_000));
    await watch.ready;
    await Promise.all([s.publish('run-b2', 't', 'error', { error: 'E', message: 'boom' }), s.publish('run-b2', 't', 'end', null)]);
    expect(await messagesOf('run-b2')).toBe(1);
    const r = await watch.done;
    expect(r.kind === 'end' && JSON.parse(r.errorJson ?? 'null')).toEqual({ error: 'E', message: 'boom' });
  });

  it('rejects every event of a message that could not be stored, and goes on with the next', async () => {
    const tiny = await createJetStreamRunEventStream({ nc, streamName: STREAM, subjectPrefix: PREFIX, publishTimeoutMs: 200 });
    const big = 'x'.repeat(2 * 1024 * 1024); // over the server's max_payload (1 MiB)
    const results = await Promise.allSettled([tiny.publish('run-b3', 't', 'values', big), tiny.publish('run-b3', 't', 'end', null)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    await tiny.close();
  });
});

describe('JetStreamRunEventStream resuming', () => {
  it('resumes after an event inside a message whose events were partly read, and skips nothing of a later message', async () => {
    const ids = await Promise.all([s.publish('run-r1', 't', 'values', { n: 1 }), s.publish('run-r1', 't', 'values', { n: 2 })]);
    const later = await s.publish('run-r1', 't', 'values', { n: 3 });
    const end = await s.publish('run-r1', 't', 'end', null);
    const fromFirst = await collect(s.subscribe('run-r1', { afterId: ids[0], signal: AbortSignal.timeout(10_000) }));
    expect(fromFirst.map((e) => e.id)).toEqual([ids[1], later, end]);
    // An id whose message is gone (here: one that never held this run's events) skips nothing after it.
    const fromGone = await collect(s.subscribe('run-r1', { afterId: eventId(Math.floor(ids[0]! / ID_SPAN) - 1, 0), signal: AbortSignal.timeout(10_000) }));
    expect(fromGone.map((e) => e.id)).toEqual([ids[0], ids[1], later, end]);
  });
});
