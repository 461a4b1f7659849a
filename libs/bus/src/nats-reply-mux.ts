/**
 * Requests over one wildcard reply subscription, as nats.js's `request()` does, without the Error it
 * builds for every request: its `RequestOne.cancel()` creates a `RequestError("cancelled")` — stack
 * trace included — after each *successful* reply too, and `noAsyncTraces` does not cover it (~1% of
 * a cluster orchestrator's CPU, bench/throughput/README.md "Cluster: a run's events in 3–4
 * JetStream messages"). Here an Error is built only for a request that fails.
 *
 * Failures keep nats.js's error types, so NatsBus maps them as before: a timeout is its
 * `TimeoutError`, nobody subscribed its `RequestError` caused by `NoRespondersError` (the server's
 * 503 status reply), a closed connection its `ClosedConnectionError`.
 */
import {
  ClosedConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';

interface Pending {
  subject: string;
  resolve: (msg: Msg) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class NatsReplyMux {
  private sub: Subscription | undefined;
  private prefix = '';
  private readonly pending = new Map<string, Pending>();
  private next = 0;

  constructor(private readonly nc: NatsConnection) {}

  /** Sends `data` to `subject` and resolves with the first reply, or rejects after `timeoutMs`. */
  request(subject: string, data: Uint8Array, opts: { timeoutMs: number; headers?: MsgHdrs }): Promise<Msg> {
    return new Promise<Msg>((resolve, reject) => {
      // The subscription is created on first use and after the connection closed it; nats.js writes
      // SUB before the PUB below on the same connection, so the reply cannot come before it exists.
      const prefix = this.subscribed();
      const token = (this.next++).toString(36);
      const timer = setTimeout(() => {
        this.pending.delete(token);
        reject(new TimeoutError());
      }, opts.timeoutMs);
      this.pending.set(token, { subject, resolve, reject, timer });
      try {
        this.nc.publish(subject, data, { reply: prefix + token, ...(opts.headers ? { headers: opts.headers } : {}) });
      } catch (err) {
        this.settle(token)?.reject(err as Error);
      }
    });
  }

  private subscribed(): string {
    if (this.sub && !this.sub.isClosed()) return this.prefix;
    // The connection's own inbox prefix, if it was given one (permissions are often granted on it).
    const inboxPrefix = (this.nc as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
    const prefix = `${createInbox(inboxPrefix)}.`;
    const sub = this.nc.subscribe(`${prefix}*`, { callback: (err, msg) => (err ? undefined : this.dispatch(prefix, msg)) });
    this.sub = sub;
    this.prefix = prefix;
    // The connection closed, or the subscription failed (a permissions error): nothing will answer
    // what is waiting.
    void sub.closed.then((err) => this.failAll(prefix, err instanceof Error ? err : new ClosedConnectionError()));
    return prefix;
  }

  private dispatch(prefix: string, msg: Msg): void {
    const pending = this.settle(msg.subject.slice(prefix.length));
    if (!pending) return;
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      const cause = new NoRespondersError(pending.subject);
      pending.reject(new RequestError(cause.message, { cause }));
    } else {
      pending.resolve(msg);
    }
  }

  private settle(token: string): Pending | undefined {
    const pending = this.pending.get(token);
    if (!pending) return undefined;
    this.pending.delete(token);
    clearTimeout(pending.timer);
    return pending;
  }

  private failAll(prefix: string, err: Error): void {
    if (this.prefix !== prefix) return;
    this.sub = undefined;
    for (const token of [...this.pending.keys()]) this.settle(token)?.reject(err);
  }
}
