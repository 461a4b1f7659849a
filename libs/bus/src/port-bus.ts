/**
 * A Bus on one end of a `MessagePort` (embedded mode's orchestrator thread, issue 9): every call
 * goes to a bridge on the other end (port-bridge.ts), which makes it on a MemoryBus there. So a
 * service in a worker thread serves and calls the services of the main thread exactly as over
 * NATS, and passes the same contract suite (contract.ts). Payloads cross the port as copies.
 */
import type { MessagePort } from 'node:worker_threads';
import { UnavailableError, silentLogger, type Logger } from '@agentloop/core';
import { InFlight, invokeHandler } from './handler.js';
import { PortCaller } from './port-caller.js';
import type { PortCall, PortEvent } from './port-protocol.js';
import { assertTimeout, assertValidSubject } from './subject.js';
import { tracedRequest } from './tracing.js';
import type { Bus, BusMessage, EventHandler, RequestHandler, RequestOptions, ServeOptions, Subscription } from './types.js';

export interface PortBusOptions {
  logger?: Logger;
}

export class PortBus implements Bus {
  private readonly caller: PortCaller;
  private readonly logger: Logger;
  private readonly handlers = new Map<number, RequestHandler>();
  private readonly listeners = new Map<number, EventHandler>();
  private readonly inflight = new InFlight();
  private nextSid = 0;
  private closed = false;

  constructor(port: MessagePort, opts: PortBusOptions = {}) {
    this.logger = opts.logger ?? silentLogger();
    this.caller = new PortCaller(port, (e) => this.onEvent(e));
  }

  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMessage> {
    return tracedRequest('port', subject, opts, async (o) => {
      this.assertOpen();
      assertValidSubject(subject, { wildcards: false });
      assertTimeout(o.timeoutMs);
      return this.caller.call<BusMessage>({ t: 'request', subject, data, headers: { ...o.headers }, timeoutMs: o.timeoutMs, idempotent: o.idempotent });
    });
  }

  async serve(subject: string, opts: ServeOptions, handler: RequestHandler): Promise<Subscription> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: true });
    const sid = ++this.nextSid;
    this.handlers.set(sid, handler);
    await this.caller.call({ t: 'serve', sid, subject, queue: opts.queue });
    return { unsubscribe: () => this.unsubscribe(sid) };
  }

  async publish(subject: string, data: Uint8Array, headers: Record<string, string> = {}): Promise<void> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: false });
    this.caller.post({ t: 'publish', subject, data, headers });
  }

  async subscribe(subject: string, handler: EventHandler): Promise<Subscription> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: true });
    const sid = ++this.nextSid;
    this.listeners.set(sid, handler);
    await this.caller.call({ t: 'subscribe', sid, subject });
    return { unsubscribe: () => this.unsubscribe(sid) };
  }

  /** Stops serving and listening at once (the bridge drops this side's entries), then waits for the handlers still running. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.caller.call({ t: 'close' }).catch(() => undefined);
    await this.inflight.idle();
    this.caller.port.close();
  }

  private async unsubscribe(sid: number): Promise<void> {
    this.handlers.delete(sid);
    this.listeners.delete(sid);
    if (!this.closed) await this.caller.call({ t: 'unsubscribe', sid }).catch(() => undefined);
  }

  private onEvent(e: Exclude<PortEvent, { t: 'done' }>): void {
    if (e.t === 'event') {
      const listener = this.listeners.get(e.sid);
      if (!listener) return;
      try {
        listener(e.msg);
      } catch (err) {
        this.logger.warn({ err, subject: e.msg.subject }, 'event handler threw');
      }
    } else if (e.t === 'handle') {
      const handler = this.handlers.get(e.sid);
      const run = handler
        ? invokeHandler(handler, e.msg, this.logger)
        : Promise.resolve({
            ok: false as const,
            errorHeader: JSON.stringify({ code: 'UNAVAILABLE', message: `no longer serving ${e.msg.subject}`, retryable: true }),
          });
      void this.inflight.track(run).then((out) => {
        const reply: PortCall =
          out === undefined
            ? { t: 'handled', cid: e.cid }
            : out.ok
              ? { t: 'handled', cid: e.cid, data: out.data }
              : { t: 'handled', cid: e.cid, errorHeader: out.errorHeader };
        this.caller.post(reply);
      });
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError('The bus is closed');
  }
}
