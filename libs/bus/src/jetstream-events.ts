import { randomUUID } from 'node:crypto';
import { UnavailableError, errorMessage, silentLogger, type Logger } from '@agentloop/core';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { connectionState, type ConnectionState } from './connection-state.js';
import type { NatsBus } from './nats-bus.js';
import { assertRunId, END_EVENT } from './run-id.js';
import { watchRunEnd } from './run-end-watch.js';
import { RunEventBatcher } from './jetstream-batcher.js';
import { decodeMessage, encodeEvent, eventId, ID_SPAN, resumePoint, runEventOf, type EncodedBatch } from './run-event-batch.js';
import type { RunEndWatch, RunEventStream, RunEventSubscribeOptions, StoredRunEvent } from './types.js';

export const RUN_EVENTS_STREAM = 'RUN_EVENTS';
export const RUN_EVENTS_SUBJECT_PREFIX = 'agentloop.events';
const DAY_MS = 24 * 60 * 60 * 1000;
/** JetStream's default duplicate window; it may not exceed max age. */
const DEFAULT_DUPLICATE_WINDOW_MS = 2 * 60 * 1000;
/** One publish try; a lost ack is retried with the same message id until publishTimeoutMs. */
const PUBLISH_TRY_MS = 5_000;
const RESUBSCRIBE_WAIT_MS = 30_000;
const RESUBSCRIBE_ATTEMPTS = 30;
const RESUBSCRIBE_PAUSE_MS = 100;
/** Payload bytes of a message left for its headers (the message id) under the server's max_payload. */
const HEADER_ROOM = 4 * 1024;
const LOST: unique symbol = Symbol('connection lost');

/** Resolves after ms, or early when the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** JetStreamRunEventStreamOptions.maxBytes's default. */
export const DEFAULT_STREAM_MAX_BYTES = 1024 * 1024 * 1024;

export interface JetStreamRunEventStreamOptions {
  /** Drop events older than this (default 24 h). */
  maxAgeMs?: number;
  /**
   * Bytes the stream keeps for all runs together, oldest events discarded first (default 1 GiB;
   * -1: no limit). Bounds the server's disk and memory however large the tenants' states grow.
   */
  maxBytes?: number;
  /** How long one publish keeps retrying through a reconnect or a server restart (default 30 s). */
  publishTimeoutMs?: number;
  /** Stream name (default RUN_EVENTS; tests may isolate themselves with another). */
  streamName?: string;
  /** Subject prefix (default `agentloop.events`); events go to `<prefix>.<run_id>`. */
  subjectPrefix?: string;
  logger?: Logger;
}

const isApiError = (err: unknown, code: number) => err instanceof JetStreamApiError && err.code === code;

/**
 * RunEventStream over the JetStream stream RUN_EVENTS (`agentloop.events.>`,
 * file storage, limits retention). Each event is one message encoded as the
 * proto RunEvent; its id is the JetStream stream sequence, so it is monotonic
 * across runs and what a client sends back as `Last-Event-ID`. A subscriber is
 * an ordered consumer filtered on the run's subject, starting after `afterId`.
 */
export class JetStreamRunEventStream implements RunEventStream {
  private readonly nc: NatsConnection;
  private readonly js: JetStreamClient;
  private readonly jsm: Promise<JetStreamManager>;
  private readonly stream: string;
  private readonly prefix: string;
  private readonly maxAgeMs: number;
  private readonly maxBytes: number;
  private readonly logger: Logger;
  private readonly conn: ConnectionState;
  private readonly publishTimeoutMs: number;
  private readonly active = new Set<ConsumerMessages>();
  /** Publisher-side per-run counter for RunEvent.seq (informational; ids come from JetStream). */
  private readonly runSeq = new Map<string, number>();
  private readonly batcher = new RunEventBatcher(
    (runId, batch, first) => this.sendBatch(runId, batch, first),
    () => Math.max(64 * 1024, (this.nc.info?.max_payload ?? 1024 * 1024) - HEADER_ROOM),
  );
  private closed = false;

  constructor(nc: NatsConnection, opts: JetStreamRunEventStreamOptions = {}) {
    this.stream = opts.streamName ?? RUN_EVENTS_STREAM;
    this.prefix = opts.subjectPrefix ?? RUN_EVENTS_SUBJECT_PREFIX;
    this.maxAgeMs = opts.maxAgeMs ?? DAY_MS;
    this.maxBytes = opts.maxBytes ?? DEFAULT_STREAM_MAX_BYTES;
    this.logger = opts.logger ?? silentLogger();
    this.publishTimeoutMs = opts.publishTimeoutMs ?? 30_000;
    this.nc = nc;
    this.conn = connectionState(nc);
    this.js = jetstream(nc);
    this.jsm = jetstreamManager(nc);
    this.jsm.catch(() => undefined);
  }

  /** Creates the stream, or updates its subjects / max age; safe to run from every replica. */
  async start(): Promise<void> {
    const jsm = await this.jsm;
    const wanted: Partial<StreamConfig> & { name: string } = {
      name: this.stream,
      subjects: [`${this.prefix}.>`],
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: nanos(this.maxAgeMs),
      max_bytes: this.maxBytes,
      duplicate_window: nanos(Math.min(DEFAULT_DUPLICATE_WINDOW_MS, this.maxAgeMs)),
    };
    try {
      const info = await jsm.streams.info(this.stream);
      const c = info.config;
      const same = c.max_age === wanted.max_age && c.max_bytes === wanted.max_bytes && c.subjects?.length === 1 && c.subjects[0] === wanted.subjects?.[0];
      if (!same) {
        await jsm.streams.update(this.stream, {
          ...c,
          subjects: wanted.subjects,
          max_age: wanted.max_age,
          max_bytes: wanted.max_bytes,
          duplicate_window: wanted.duplicate_window,
        });
        this.logger.info({ stream: this.stream }, 'run events stream updated');
      }
    } catch (err) {
      if (!isApiError(err, JetStreamApiCodes.StreamNotFound)) throw this.unavailable('prepare', err);
      try {
        await jsm.streams.add(wanted);
        this.logger.info({ stream: this.stream }, 'run events stream created');
      } catch (addErr) {
        // Another replica created it in the meantime with a different config.
        try {
          await jsm.streams.update(this.stream, wanted);
        } catch {
          throw this.unavailable('create', addErr);
        }
      }
    }
  }

  subjectOf(runId: string): string {
    assertRunId(runId);
    return `${this.prefix}.${runId}`;
  }

  /**
   * Queues the event on its run's message batcher (jetstream-batcher.ts): resolves with its id once
   * the message holding it is stored. Events of one run are stored in the order published, also
   * when the caller does not await one before publishing the next.
   */
  publish(runId: string, threadId: string, event: string, data: unknown): Promise<number> {
    if (this.closed) return Promise.reject(new UnavailableError('The run event stream is closed'));
    assertRunId(runId);
    const seq = (this.runSeq.get(runId) ?? 0) + 1;
    if (event === END_EVENT) this.runSeq.delete(runId);
    else {
      this.runSeq.set(runId, seq);
      if (this.runSeq.size > 10_000) {
        const oldest = this.runSeq.keys().next();
        if (!oldest.done) this.runSeq.delete(oldest.value);
      }
    }
    const bytes = encodeEvent(runEventOf(runId, threadId, event, JSON.stringify(data ?? null), seq));
    return this.batcher.enqueue(runId, bytes, event);
  }

  /** Stores one message of a run's events (RunEventBatcher's SendBatch); resolves with its stream sequence. */
  private async sendBatch(runId: string, batch: EncodedBatch, firstEvent: string): Promise<number> {
    const subject = this.subjectOf(runId);
    const what = batch.count === 1 ? `publish the "${firstEvent}" event of run ${runId}` : `publish ${batch.count} events ("${firstEvent}"…) of run ${runId}`;
    // One message id per message: JetStream drops a repeat within its duplicate window, so the
    // publish can be retried when its ack is lost to a reconnect or a server restart.
    const msgID = randomUUID();
    const deadline = Date.now() + this.publishTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      if (!this.conn.connected && !(await this.conn.whenConnected(deadline))) {
        throw this.unavailable(what, new Error('the NATS connection is down'));
      }
      const epoch = this.conn.epoch;
      const lost = this.conn.lostAfter(epoch);
      try {
        const timeout = Math.max(1, Math.min(PUBLISH_TRY_MS, deadline - Date.now()));
        const sent = this.js.publish(subject, batch.payload, { msgID, timeout });
        sent.catch(() => undefined); // abandoned when the connection drops first
        const ack = await Promise.race([sent, lost.promise.then((): typeof LOST => LOST)]);
        if (ack !== LOST) return ack.seq;
        if (Date.now() >= deadline) throw new Error('the NATS connection dropped');
      } catch (err) {
        // Timeouts, "no responders" and "JetStream not ready" are what a server restart looks like.
        if (Date.now() >= deadline || this.closed) throw this.unavailable(what, err);
        this.logger.debug({ err: errorMessage(err), attempt, subject }, 'run event publish failed; retrying');
        await sleep(Math.min(1_000, 50 * 2 ** attempt));
      } finally {
        lost.cancel();
      }
    }
  }

  async *subscribe(runId: string, opts: RunEventSubscribeOptions = {}): AsyncGenerator<StoredRunEvent> {
    const subject = this.subjectOf(runId);
    const { signal } = opts;
    let after = opts.afterId ?? 0;
    let resume = resumePoint(after);
    let failures = 0;
    // An ordered consumer from the next unseen sequence; when the connection drops (a server
    // restart loses the consumer, and nats.js may wait long before noticing) or the consumer
    // fails, a new one resumes exactly after the last event delivered.
    while (!signal?.aborted && !this.closed) {
      let messages: ConsumerMessages;
      let consumer;
      try {
        if (!(await this.conn.whenConnected(Date.now() + RESUBSCRIBE_WAIT_MS))) throw new Error('the NATS connection is down');
        resume = resumePoint(after);
        consumer = await this.js.consumers.get(this.stream, {
          filter_subjects: subject,
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: resume.seq,
        });
        messages = await consumer.consume();
      } catch (err) {
        // After a restart JetStream answers "not ready"/no responders for a moment: retry for a while.
        if (++failures > RESUBSCRIBE_ATTEMPTS || this.closed) throw this.unavailable(`read the events of run ${runId}`, err);
        this.logger.debug({ err: errorMessage(err), subject, attempt: failures }, 'run event consumer not created; retrying');
        await sleep(Math.min(1_000, 50 * 2 ** failures), signal);
        continue;
      }
      this.active.add(messages);
      const onAbort = () => messages.stop();
      signal?.addEventListener('abort', onAbort, { once: true });
      const lost = this.conn.lostAfter(this.conn.epoch);
      void lost.promise.then(() => messages.stop());
      try {
        if (signal?.aborted) return;
        for await (const m of messages) {
          failures = 0;
          let evs;
          try {
            evs = decodeMessage(m.data);
          } catch (err) {
            this.logger.warn({ err, seq: m.seq, subject }, 'undecodable run event skipped');
            after = eventId(m.seq, ID_SPAN - 1);
            continue;
          }
          // Only the message holding `after` may hold events already delivered (it may be gone: purged, aged out).
          const first = m.seq === resume.seq ? resume.skip : 0;
          for (let i = first; i < evs.length; i++) {
            const ev = evs[i]!;
            after = eventId(m.seq, i);
            yield { id: after, runId: ev.runId, event: ev.event, dataJson: ev.dataJson, tsMs: Number(ev.tsMs) };
            if (ev.event === END_EVENT || signal?.aborted) return;
          }
          after = eventId(m.seq, ID_SPAN - 1);
        }
      } catch (err) {
        if (this.closed || signal?.aborted) return;
        this.logger.debug({ err: errorMessage(err), subject }, 'run event consumer failed; resuming');
      } finally {
        lost.cancel();
        signal?.removeEventListener('abort', onAbort);
        this.active.delete(messages);
        messages.stop();
        consumer.delete().catch(() => undefined);
      }
      if (this.closed || signal?.aborted) return;
      // The consumer ended without `end` (connection lost, consumer gone): start a new one after `after`.
      await sleep(RESUBSCRIBE_PAUSE_MS, signal);
    }
  }

  /** See RunEndWatch: a core NATS subscription on the run's subject instead of a JetStream consumer. */
  watchEnd(runId: string, signal: AbortSignal): RunEndWatch {
    return watchRunEnd(this.nc, this.conn, this.subjectOf(runId), signal);
  }

  async purge(runId: string): Promise<void> {
    const subject = this.subjectOf(runId);
    try {
      const jsm = await this.jsm;
      await jsm.streams.purge(this.stream, { filter: subject });
    } catch (err) {
      throw this.unavailable(`purge the events of run ${runId}`, err);
    }
  }

  /** Ends the live subscriptions; the NATS connection belongs to the caller. */
  async close(): Promise<void> {
    this.closed = true;
    for (const m of this.active) m.stop();
    this.active.clear();
  }

  private unavailable(what: string, err: unknown): UnavailableError {
    return new UnavailableError(`Could not ${what} (JetStream stream ${this.stream}): ${errorMessage(err)}`, { cause: err });
  }
}

export interface CreateJetStreamRunEventStreamOptions extends JetStreamRunEventStreamOptions {
  /** A NatsBus whose connection is shared, or... */
  bus?: NatsBus;
  /** ...a NATS connection. One of the two is required. */
  nc?: NatsConnection;
}

/**
 * Builds a JetStreamRunEventStream on the bus's (or the given) connection and
 * makes sure the stream exists with the wanted config. The connection is not
 * closed by the stream's `close()`.
 */
export async function createJetStreamRunEventStream(opts: CreateJetStreamRunEventStreamOptions): Promise<JetStreamRunEventStream> {
  const nc = opts.nc ?? opts.bus?.connection;
  if (!nc) throw new UnavailableError('createJetStreamRunEventStream needs `bus` (a NatsBus) or `nc` (a NATS connection)');
  const { bus: _bus, nc: _nc, ...rest } = opts;
  const s = new JetStreamRunEventStream(nc, { ...rest, logger: (opts.logger ?? silentLogger()).child({ component: 'run-events' }) });
  await s.start();
  return s;
}
