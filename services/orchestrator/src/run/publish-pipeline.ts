import type { RunEventStream } from '@agentloop/bus';

/** Events published and not yet stored before the loop waits for the oldest (bounds memory on token floods). */
const MAX_IN_FLIGHT = 256;

/**
 * How long a step's events may wait to be handed over together with later ones (see
 * PublishPipeline). Streaming clients see them up to this much later; the run's end never waits
 * for it (`drain` hands everything over at once).
 */
export const LINGER_MS = 25;

/** The modes LangGraph streams at step boundaries (a task's end, a step's end): held for LINGER_MS. */
const STEP_EVENTS = new Set(['values', 'updates', 'debug', 'tasks', 'checkpoints']);

/**
 * A run's event publishing without a round trip per event (issue 9: "batch what belongs to one
 * step"). `send` hands the event to the run event stream and returns; `drain` waits until every
 * event sent is stored and throws the first failure. The stream keeps a run's events in the order
 * they are handed over (its contract), and over JetStream the events handed over while the run's
 * previous message waits for its ack share the next message (libs/bus jetstream-batcher.ts).
 * LangGraph runs the graph ahead of the stream loop anyway (its chunks are buffered), so awaiting
 * each event only serialized the acks.
 *
 * A step streams its tasks' `updates`, then, after its checkpoint is written, its `values`; a fast
 * step (a tool call, an approval check) follows within milliseconds. Step events are therefore
 * held from the first one for LINGER_MS and handed over together: a run of fast steps costs a
 * JetStream message per LINGER_MS rather than two per step; a step after a model call (seconds)
 * is still one message. Everything else — tokens, tool progress, custom and `events` — is handed
 * over at once, after what is held, so clients see it live and in order.
 *
 * A failed publish fails the run as before, at the next `send` or at `drain` rather than at once;
 * `drain` comes before the run's end is recorded, so no run ends with its events unstored.
 */
export class PublishPipeline {
  private readonly pending: Array<Promise<number>> = [];
  private held: Array<[string, unknown]> = [];
  private linger: NodeJS.Timeout | undefined;
  private failure: { err: unknown } | undefined;

  constructor(
    private readonly events: Pick<RunEventStream, 'publish'>,
    private readonly runId: string,
    private readonly threadId: string,
  ) {}

  /** Hands one event to the stream (a step event up to LINGER_MS later); waits only when MAX_IN_FLIGHT are still unstored. */
  async send(event: string, data: unknown): Promise<void> {
    this.throwIfFailed();
    if (STEP_EVENTS.has(event)) {
      this.held.push([event, data]);
      this.linger ??= setTimeout(() => this.release(), LINGER_MS);
      return;
    }
    this.release();
    this.handOver(event, data);
    if (this.pending.length >= MAX_IN_FLIGHT) await this.settleOldest(this.pending.length - MAX_IN_FLIGHT / 2);
  }

  /** Waits until every event sent is stored; throws the first publish failure. */
  async drain(): Promise<void> {
    this.release();
    await this.settleOldest(this.pending.length);
  }

  /** Hands the held step events over. */
  private release(): void {
    clearTimeout(this.linger);
    this.linger = undefined;
    const held = this.held;
    this.held = [];
    for (const [event, data] of held) this.handOver(event, data);
  }

  private handOver(event: string, data: unknown): void {
    const p = this.events.publish(this.runId, this.threadId, event, data);
    p.catch((err: unknown) => {
      this.failure ??= { err };
    });
    this.pending.push(p);
  }

  private async settleOldest(n: number): Promise<void> {
    const batch = this.pending.splice(0, n);
    await Promise.allSettled(batch);
    this.throwIfFailed();
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.err;
  }
}
