import { encodeBatch, eventId, ID_SPAN, type EncodedBatch } from './run-event-batch.js';

/** Sends one message of a run's events and resolves with its stream sequence once stored (acked). */
export type SendBatch = (runId: string, batch: EncodedBatch, firstEvent: string) => Promise<number>;

interface Queued {
  bytes: Uint8Array;
  event: string;
  resolve: (id: number) => void;
  reject: (err: unknown) => void;
}

interface RunQueue {
  queued: Queued[];
  /** A message of the run is being sent (or about to be): later events wait for its ack. */
  busy: boolean;
}

/**
 * Per run, at most one JetStream message in flight: the events published while it waits for its
 * ack go out together as the next message, in publication order (run-event-batch.ts for the
 * format and ids). With zero model latency a run's steps come faster than a JetStream ack, so a
 * step's `updates` and `values` (and, at the end, everything the stream loop still had buffered)
 * share a message; a publisher that awaits each event before the next still gets one message per
 * event. Each caller's promise settles with its own event: its id once the message holding it is
 * stored, or the send's error.
 *
 * The first event of an idle run is sent on the next macrotask rather than at once, so that the
 * events published in the same burst (a stream loop draining chunks LangGraph already buffered)
 * share its message.
 */
export class RunEventBatcher {
  private readonly runs = new Map<string, RunQueue>();

  constructor(
    private readonly send: SendBatch,
    /** The most payload bytes one message may carry (the server's max_payload, less room for headers). */
    private readonly maxBytes: () => number,
  ) {}

  /** Queues one encoded event of the run; resolves with its id once stored. */
  enqueue(runId: string, bytes: Uint8Array, event: string): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      let q = this.runs.get(runId);
      if (!q) {
        q = { queued: [], busy: false };
        this.runs.set(runId, q);
      }
      q.queued.push({ bytes, event, resolve, reject });
      if (!q.busy) {
        q.busy = true;
        setImmediate(() => void this.drain(runId, q));
      }
    });
  }

  /** Runs with events queued or in flight (tests, diagnostics). */
  get pendingRuns(): number {
    return this.runs.size;
  }

  private async drain(runId: string, q: RunQueue): Promise<void> {
    while (q.queued.length > 0) {
      const batch = this.take(q);
      try {
        const seq = await this.send(runId, encodeBatch(batch.map((b) => b.bytes)), batch[0]!.event);
        batch.forEach((b, i) => b.resolve(eventId(seq, i)));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    q.busy = false;
    this.runs.delete(runId);
  }

  /** The next message's events: as many queued as fit in ID_SPAN events and maxBytes (at least one). */
  private take(q: RunQueue): Queued[] {
    const limit = this.maxBytes();
    let bytes = 0;
    let n = 0;
    while (n < q.queued.length && n < ID_SPAN) {
      const size = q.queued[n]!.bytes.length + 4;
      if (n > 0 && bytes + size > limit) break;
      bytes += size;
      n++;
    }
    return q.queued.splice(0, n);
  }
}
