import { create, fromBinary, toBinary, RunEventSchema, type RunEvent } from '@agentloop/proto';

/**
 * The wire format of one JetStream message of the RUN_EVENTS stream (jetstream-events.ts).
 *
 * A message holds one or more of a run's events, in order: the events a run publishes while the
 * previous message of the run waits for its JetStream ack go out together as the next message
 * (jetstream-batcher.ts). Issue 9 ("fewer round trips per step, batch what belongs to one step"):
 * each JetStream publish is a request the publisher, nats-server and its file store each pay for.
 *
 * - A message of one event is that proto RunEvent (what every message was before batching, so
 *   events already stored still read). Its first byte is a field tag, never 0.
 * - A message of several starts with the byte 0 (BATCH_MARK: tag 0 is invalid in protobuf, so no
 *   RunEvent starts with it), then the events as proto RunEvents, each preceded by its length as
 *   a 4-byte big-endian integer. No proto change, and no NATS headers (which cost a parse on
 *   every read): the framing is this file's.
 *
 * An event's id (the SSE `id:`, what `Last-Event-ID` sends back) is `seq * ID_SPAN + index`, the
 * message's stream sequence and the event's index in it: monotonic across runs, and a position a
 * subscriber resumes from exactly, inside a message too. Ids given out before batching were the
 * bare sequence: a client resuming from one replays from an earlier message (repeats, never a
 * gap). Ids stay within the gateway's 15-digit `Last-Event-ID` (services/gateway sse.ts) up to a
 * stream sequence of 10^12.
 */
export const BATCH_MARK = 0;

/** Ids per message: the most events one message may hold. */
export const ID_SPAN = 1000;

/** The id of the index-th event of the message at stream sequence seq. */
export function eventId(seq: number, index: number): number {
  return seq * ID_SPAN + index;
}

/** Where to resume after the event `afterId`: the message to start from and the events of it to skip. */
export function resumePoint(afterId: number): { seq: number; skip: number } {
  const seq = Math.floor(afterId / ID_SPAN);
  if (seq < 1) return { seq: 1, skip: 0 };
  const index = afterId % ID_SPAN;
  // ID_SPAN - 1 is the last index a message can hold: that message is done.
  return index === ID_SPAN - 1 ? { seq: seq + 1, skip: 0 } : { seq, skip: index + 1 };
}

export interface EncodedBatch {
  payload: Uint8Array;
  /** Events in the payload; 1 is sent as a bare RunEvent (no header). */
  count: number;
}

/** The proto RunEvent of one published event. */
export function runEventOf(runId: string, threadId: string, event: string, dataJson: string, seq: number): RunEvent {
  return create(RunEventSchema, { runId, threadId, event, dataJson, tsMs: BigInt(Date.now()), seq: BigInt(seq) });
}

/** Encodes events for one message: a bare RunEvent for one, the marked, framed sequence for more. */
export function encodeBatch(events: readonly Uint8Array[]): EncodedBatch {
  if (events.length === 1) return { payload: events[0]!, count: 1 };
  let size = 1;
  for (const e of events) size += 4 + e.length;
  const payload = new Uint8Array(size);
  const view = new DataView(payload.buffer);
  payload[0] = BATCH_MARK;
  let at = 1;
  for (const e of events) {
    view.setUint32(at, e.length);
    payload.set(e, at + 4);
    at += 4 + e.length;
  }
  return { payload, count: events.length };
}

/** Encodes one event as it goes into a message (encodeBatch's input). */
export const encodeEvent = (ev: RunEvent): Uint8Array => toBinary(RunEventSchema, ev);

/** The encoded events of one message, in order. Throws when a batch is truncated. */
export function framesOf(data: Uint8Array): Uint8Array[] {
  if (data.length === 0 || data[0] !== BATCH_MARK) return [data];
  const out: Uint8Array[] = [];
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 1;
  while (at < data.length) {
    if (at + 4 > data.length) throw new Error('truncated run event batch');
    const len = view.getUint32(at);
    if (at + 4 + len > data.length) throw new Error('truncated run event batch');
    out.push(data.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  return out;
}

/** The events of one message, in order (throws when undecodable: the caller skips the message). */
export function decodeMessage(data: Uint8Array): RunEvent[] {
  return framesOf(data).map((f) => fromBinary(RunEventSchema, f));
}

const EVENT_FIELD = 3; // RunEvent.event (proto/agentloop/v1/runs.proto)

/**
 * The `event` of an encoded RunEvent without decoding the rest (its `data_json` is most of its
 * bytes): what a reader that only looks for `error` and `end` needs (run-end-watch.ts).
 * Undefined when the bytes are not a well-formed RunEvent.
 */
export function eventNameOf(frame: Uint8Array): string | undefined {
  let at = 0;
  const varint = (): number | undefined => {
    let v = 0;
    for (let shift = 0; shift < 70 && at < frame.length; shift += 7) {
      const b = frame[at++]!;
      v += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return v;
    }
    return undefined;
  };
  let name = '';
  while (at < frame.length) {
    const tag = varint();
    if (tag === undefined) return undefined;
    const wire = tag & 7;
    if (wire === 0) {
      if (varint() === undefined) return undefined;
    } else if (wire === 2) {
      const len = varint();
      if (len === undefined || at + len > frame.length) return undefined;
      // The last occurrence of a field wins in protobuf.
      if (tag >>> 3 === EVENT_FIELD) name = TEXT.decode(frame.subarray(at, at + len));
      at += len;
    } else return undefined; // RunEvent has no other wire types
  }
  return name;
}

const TEXT = new TextDecoder();
