/**
 * A RunEventStream on one end of a `MessagePort` (embedded mode's orchestrator thread, issue 9):
 * the log itself is the MemoryRunEventStream on the other end (port-bridge.ts), where the
 * gateway's SSE and `runs.wait` read it. Event data is serialized to JSON here, in the publishing
 * thread, and crosses the port as text.
 *
 * The events published in one turn of this thread's event loop cross the port as one message and
 * are answered by one (issue 9, bench/throughput/README.md "Orchestrator threads at 4 clients and
 * in flight"): a run's PublishPipeline hands a step's events over together, and a message per
 * event and an answer per event cost both threads a wake-up each. Each event still resolves
 * with its own id or fails alone, and the port keeps them in publication order.
 */
import type { MessagePort } from 'node:worker_threads';
import { UnavailableError } from '@agentloop/core';
import { PortCaller } from './port-caller.js';
import { fromWireFailure, type PortEvent, type PublishedEvent, type PublishedEventCall } from './port-protocol.js';
import { assertRunId } from './run-id.js';
import type { RunEventStream, RunEventSubscribeOptions, StoredRunEvent } from './types.js';

interface Unsent {
  call: PublishedEventCall;
  resolve: (id: number) => void;
  reject: (err: unknown) => void;
}

interface Reader {
  items: StoredRunEvent[];
  ended: boolean;
  wake: (() => void) | undefined;
}

export class PortRunEventStream implements RunEventStream {
  private readonly caller: PortCaller;
  private readonly readers = new Map<number, Reader>();
  private nextSid = 0;
  private closed = false;
  /** Events published in this turn of the event loop, sent at its end (`send`). */
  private unsent: Unsent[] = [];

  constructor(port: MessagePort) {
    this.caller = new PortCaller(port, (e) => this.onEvent(e));
  }

  async publish(runId: string, threadId: string, event: string, data: unknown): Promise<number> {
    if (this.closed) throw new UnavailableError('The run event stream is closed');
    assertRunId(runId);
    // Serialized now: the caller may change `data` once publish returns.
    const call = { runId, threadId, event, dataJson: JSON.stringify(data ?? null) };
    return new Promise<number>((resolve, reject) => {
      if (this.unsent.push({ call, resolve, reject }) === 1) queueMicrotask(() => this.send());
    });
  }

  /** Sends the unsent events as one `events.publish`; each settles with its own outcome. */
  private send(): void {
    const batch = this.unsent;
    if (batch.length === 0) return;
    this.unsent = [];
    this.caller.call<PublishedEvent[]>({ t: 'events.publish', events: batch.map((u) => u.call) }).then(
      (results) =>
        batch.forEach((u, i) => {
          const r = results[i];
          if (r && 'id' in r) u.resolve(r.id);
          else u.reject(r ? fromWireFailure(r.error) : new UnavailableError('The other thread did not answer for this event'));
        }),
      (err: unknown) => batch.forEach((u) => u.reject(err)),
    );
  }

  async *subscribe(runId: string, opts: RunEventSubscribeOptions = {}): AsyncGenerator<StoredRunEvent> {
    assertRunId(runId);
    const { signal } = opts;
    if (signal?.aborted || this.closed) return;
    const sid = ++this.nextSid;
    const reader: Reader = { items: [], ended: false, wake: undefined };
    this.readers.set(sid, reader);
    const stop = () => {
      reader.ended = true;
      reader.wake?.();
    };
    signal?.addEventListener('abort', stop, { once: true });
    try {
      // What this thread published before subscribing is in the log before the reader starts.
      this.send();
      await this.caller.call({ t: 'events.subscribe', sid, runId, afterId: opts.afterId ?? 0 });
      for (;;) {
        const next = reader.items.shift();
        if (next) {
          yield next;
          continue;
        }
        if (reader.ended || signal?.aborted || this.closed) return;
        await new Promise<void>((resolve) => (reader.wake = resolve));
        reader.wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', stop);
      this.readers.delete(sid);
      this.caller.post({ t: 'events.unsubscribe', sid });
    }
  }

  async purge(runId: string): Promise<void> {
    // A purge removes what was published before it, as the port's order has it.
    this.send();
    await this.caller.call({ t: 'events.purge', runId });
  }

  /** Ends this side's readers; the log on the other end stays (it is the other thread's). */
  async close(): Promise<void> {
    this.closed = true;
    for (const r of this.readers.values()) {
      r.ended = true;
      r.wake?.();
    }
  }

  private onEvent(e: Exclude<PortEvent, { t: 'done' }>): void {
    if (e.t !== 'events.item' && e.t !== 'events.end') return;
    const reader = this.readers.get(e.sid);
    if (!reader) return;
    if (e.t === 'events.item') reader.items.push(e.event);
    else reader.ended = true;
    reader.wake?.();
  }
}
