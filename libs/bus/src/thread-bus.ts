/**
 * The bus of a worker thread that serves some subjects itself (embedded mode's orchestrator
 * thread, issue 9): a request goes to a server in this thread when there is one — the
 * orchestrator's calls to the tool-runner, approval or skill sandbox next to it never cross the
 * port — and over the port (PortBus) otherwise. What this thread serves is also served over the
 * port, so the main thread's gateway reaches it.
 *
 * An event published here is delivered to this thread's subscribers here, and over the port to
 * everyone else's: the bridge must be made with `noEcho` (bridgeBus), so that the main thread's
 * network does not send it back across the port. Delivering it here keeps the order one thread
 * has: an MCP call's last progress notification, published by the broker just before it answers
 * the orchestrator next to it, reaches the orchestrator before the answer does — sent round the
 * main thread, it arrived after the call had ended and stopped listening (issue 9).
 */
import type { MemoryBus } from './memory-bus.js';
import type { PortBus } from './port-bus.js';
import type { Bus, BusMessage, EventHandler, RequestHandler, RequestOptions, ServeOptions, Subscription } from './types.js';

export class ThreadBus implements Bus {
  constructor(
    private readonly local: MemoryBus,
    private readonly remote: PortBus,
  ) {}

  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMessage> {
    return this.local.serves(subject) ? this.local.request(subject, data, opts) : this.remote.request(subject, data, opts);
  }

  async serve(subject: string, opts: ServeOptions, handler: RequestHandler): Promise<Subscription> {
    const subs = [await this.local.serve(subject, opts, handler), await this.remote.serve(subject, opts, handler)];
    return { unsubscribe: async () => void (await Promise.all(subs.map((s) => s.unsubscribe()))) };
  }

  async publish(subject: string, data: Uint8Array, headers?: Record<string, string>): Promise<void> {
    await this.local.publish(subject, data, headers);
    await this.remote.publish(subject, data, headers);
  }

  async subscribe(subject: string, handler: EventHandler): Promise<Subscription> {
    const subs = [await this.local.subscribe(subject, handler), await this.remote.subscribe(subject, handler)];
    return { unsubscribe: async () => void (await Promise.all(subs.map((s) => s.unsubscribe()))) };
  }

  /** Stops serving over the port first (no new requests from the main thread), then here. */
  async close(): Promise<void> {
    await this.remote.close();
    await this.local.close();
  }
}
