import type { NatsConnection } from '@nats-io/transport-node';

/**
 * What the bus knows about its NATS connection, from the client's status
 * stream: up or down, how many times it dropped (the epoch), and when it came
 * back. The nats.js client discards whatever was buffered for the server while
 * it reconnects (`resetOutbound` on each dial), so a request or publish made
 * while the connection is down, or in flight when it drops, is silently lost:
 * callers use this to wait for the connection and to notice the loss instead
 * of waiting for a reply that cannot come.
 */
export class ConnectionState {
  private up = true;
  private drops = 0;
  private backAt = 0;
  private ended = false;
  private readonly listeners = new Set<() => void>();

  constructor(nc: NatsConnection) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === 'disconnect') {
          this.up = false;
          this.drops++;
        } else if (s.type === 'reconnect') {
          this.up = true;
          this.backAt = Date.now();
        } else continue;
        this.notify();
      }
    })()
      .catch(() => undefined)
      .finally(() => {
        this.up = false;
        this.ended = true;
        this.notify();
      });
    void nc.closed().then(() => {
      this.up = false;
      this.ended = true;
      this.notify();
    });
  }

  get connected(): boolean {
    return this.up;
  }

  /** Incremented on every disconnect. */
  get epoch(): number {
    return this.drops;
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Milliseconds since the last reconnect (Infinity when it never dropped). */
  get sinceReconnect(): number {
    return this.backAt === 0 ? Infinity : Date.now() - this.backAt;
  }

  /** Resolves true once connected, false when the deadline (epoch ms) passes or the connection is closed. */
  async whenConnected(deadline: number): Promise<boolean> {
    while (!this.up) {
      if (this.ended || Date.now() >= deadline) return false;
      await this.change(deadline - Date.now());
    }
    return true;
  }

  /** A promise that resolves when the connection drops after `epoch`; cancel it once it is no longer needed. */
  lostAfter(epoch: number): { promise: Promise<void>; cancel: () => void } {
    let cancel = () => undefined as void;
    const promise = new Promise<void>((resolve) => {
      if (this.drops !== epoch || this.ended) return resolve();
      const check = () => {
        if (this.drops !== epoch || this.ended) {
          this.listeners.delete(check);
          resolve();
        }
      };
      this.listeners.add(check);
      cancel = () => void this.listeners.delete(check);
    });
    return { promise, cancel };
  }

  /** Resolves on the next status change, or after ms. */
  private change(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.listeners.add(done);
    });
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }
}

const states = new WeakMap<NatsConnection, ConnectionState>();

/** The one ConnectionState of a connection (shared by the bus and the JetStream clients on it). */
export function connectionState(nc: NatsConnection): ConnectionState {
  let s = states.get(nc);
  if (!s) {
    s = new ConnectionState(nc);
    states.set(nc, s);
  }
  return s;
}
