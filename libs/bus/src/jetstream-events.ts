import { UnavailableError, errorMessage, silentLogger, type Logger } from '@agentloop/core';
import { create, fromBinary, toBinary, RunEventSchema } from '@agentloop/proto';
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
import type { NatsBus } from './nats-bus.js';
import { assertRunId, END_EVENT } from './run-id.js';
import type { RunEventStream, RunEventSubscribeOptions, StoredRunEvent } from './types.js';

export const RUN_EVENTS_STREAM = 'RUN_EVENTS';
export const RUN_EVENTS_SUBJECT_PREFIX = 'agentloop.events';
const DAY_MS = 24 * 60 * 60 * 1000;
/** JetStream's default duplicate window; it may not exceed max age. */
const DEFAULT_DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

export interface JetStreamRunEventStreamOptions {
  /** Drop events older than this (default 24 h). */
  maxAgeMs?: number;
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
  private readonly js: JetStreamClient;
  private readonly jsm: Promise<JetStreamManager>;
  private readonly stream: string;
  private readonly prefix: string;
  private readonly maxAgeMs: number;
  private readonly logger: Logger;
  private readonly active = new Set<ConsumerMessages>();
  /** Publisher-side per-run counter for RunEvent.seq (informational; ids come from JetStream). */
  private readonly runSeq = new Map<string, number>();
  private closed = false;

  constructor(
    nc: NatsConnection,
    opts: JetStreamRunEventStreamOptions = {},
  ) {
    this.stream = opts.streamName ?? RUN_EVENTS_STREAM;
    this.prefix = opts.subjectPrefix ?? RUN_EVENTS_SUBJECT_PREFIX;
    this.maxAgeMs = opts.maxAgeMs ?? DAY_MS;
    this.logger = opts.logger ?? silentLogger();
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
      duplicate_window: nanos(Math.min(DEFAULT_DUPLICATE_WINDOW_MS, this.maxAgeMs)),
    };
    try {
      const info = await jsm.streams.info(this.stream);
      const c = info.config;
      const same =
        c.max_age === wanted.max_age && c.subjects?.length === 1 && c.subjects[0] === wanted.subjects?.[0];
      if (!same) {
        await jsm.streams.update(this.stream, { ...c, subjects: wanted.subjects, max_age: wanted.max_age, duplicate_window: wanted.duplicate_window });
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

  async publish(runId: string, threadId: string, event: string, data: unknown): Promise<number> {
    if (this.closed) throw new UnavailableError('The run event stream is closed');
    const subject = this.subjectOf(runId);
    const seq = (this.runSeq.get(runId) ?? 0) + 1;
    if (event === END_EVENT) this.runSeq.delete(runId);
    else {
      this.runSeq.set(runId, seq);
      if (this.runSeq.size > 10_000) {
        const oldest = this.runSeq.keys().next();
        if (!oldest.done) this.runSeq.delete(oldest.value);
      }
    }
    const msg = create(RunEventSchema, {
      runId,
      threadId,
      event,
      dataJson: JSON.stringify(data ?? null),
      tsMs: BigInt(Date.now()),
      seq: BigInt(seq),
    });
    try {
      const ack = await this.js.publish(subject, toBinary(RunEventSchema, msg));
      return ack.seq;
    } catch (err) {
      throw this.unavailable(`publish the "${event}" event of run ${runId}`, err);
    }
  }

  async *subscribe(runId: string, opts: RunEventSubscribeOptions = {}): AsyncGenerator<StoredRunEvent> {
    const subject = this.subjectOf(runId);
    const { signal } = opts;
    if (signal?.aborted || this.closed) return;
    let consumer;
    try {
      consumer = await this.js.consumers.get(this.stream, {
        filter_subjects: subject,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: (opts.afterId ?? 0) + 1,
      });
    } catch (err) {
      throw this.unavailable(`read the events of run ${runId}`, err);
    }
    const messages = await consumer.consume();
    this.active.add(messages);
    const onAbort = () => messages.stop();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal?.aborted) return;
      for await (const m of messages) {
        let ev;
        try {
          ev = fromBinary(RunEventSchema, m.data);
        } catch (err) {
          this.logger.warn({ err, seq: m.seq, subject }, 'undecodable run event skipped');
          continue;
        }
        yield { id: m.seq, runId: ev.runId, event: ev.event, dataJson: ev.dataJson, tsMs: Number(ev.tsMs) };
        if (ev.event === END_EVENT || signal?.aborted) return;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.active.delete(messages);
      messages.stop();
      consumer.delete().catch(() => undefined);
    }
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
