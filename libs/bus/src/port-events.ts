/**
 * A RunEventStream on one end of a `MessagePort` (embedded mode's orchestrator thread, issue 9):
 * the log itself is the MemoryRunEventStream on the other end (port-bridge.ts), where the
 * gateway's SSE and `runs.wait` read it. Event data is serialized to JSON here, in the publishing
 * thread, and crosses the port as text.
 */
import type { MessagePort } from 'node:worker_threads';
import { UnavailableError } from '@agentloop/core';
import { PortCaller } from './port-caller.js';
import type { PortEvent } from './port-protocol.js';
import { assertRunId } from './run-id.js';
import type { RunEventStream, RunEventSubscribeOptions, StoredRunEvent } from './types.js';

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

  constructor(port: MessagePort) {
    this.caller = new PortCaller(port, (e) => this.onEvent(e));
  }

  async publish(runId: string, threadId: string, event: string, data: unknown): Promise<number> {
    if (this.closed) throw new UnavailableError('The run event stream is closed');
    assertRunId(runId);
    return this.caller.call<number>({ t: 'events.publish', runId, threadId, event, dataJson: JSON.stringify(data ?? null) });
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
