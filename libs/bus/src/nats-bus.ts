import { tracedRequest } from './tracing.js';
import { InvalidArgumentError, TimeoutError, UnavailableError, errorMessage, silentLogger, sleep, type Logger } from '@agentloop/core';
import {
  connect,
  Empty,
  headers as natsHeaders,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription as NatsSubscription,
} from '@nats-io/transport-node';
import { Svcm, type Service, type ServiceMsg } from '@nats-io/services';
import { connectionState, type ConnectionState } from './connection-state.js';
import { decodeErrorHeader, RemoteError } from './errors.js';
import { NatsReplyMux } from './nats-reply-mux.js';
import { InFlight, invokeHandler } from './handler.js';
import { assertTimeout, assertValidSubject, requestDeadline } from './subject.js';
import {
  Headers,
  type Bus,
  type BusMessage,
  type EventHandler,
  type RequestHandler,
  type RequestOptions,
  type ServeOptions,
  type Subscription,
} from './types.js';

interface Endpoint {
  name: string;
  subject: string;
  handler: RequestHandler;
}

/** One NATS micro-service per queue group: `$SRV.INFO.<queue>` lists its endpoints. */
interface MicroService {
  opts: ServeOptions;
  service: Service;
  endpoints: Endpoint[];
}

/** NATS status codes for `Nats-Service-Error-Code`, so `nats micro` tooling shows something meaningful. */
const SERVICE_ERROR_STATUS: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  PATH_OUTSIDE_WORKSPACE: 400,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNAVAILABLE: 503,
  TIMEOUT: 504,
};

/**
 * @nats-io/services 3.0.0-25 (the latest) is typed against an older nats-core
 * than the transport; the objects are the same at runtime, so the boundary
 * types below are structural.
 */
type SvcmConnection = ConstructorParameters<typeof Svcm>[0];
type ServiceRespondOptions = NonNullable<Parameters<ServiceMsg['respondError']>[3]>;
/**
 * A message's headers as a record, each key with its first value (what `get(key)` returns).
 * Iterated rather than read with `keys()` and `get()`: nats.js's `get` lists and filters every key
 * again for each one (issue 9: a few of these per bus request, in every process).
 */
function headersToRecord(h: Iterable<[string, string[]]> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  for (const [k, values] of h) out[k] = values[0] ?? '';
  return out;
}

function recordToHeaders(rec: Record<string, string>): MsgHdrs | undefined {
  const keys = Object.keys(rec);
  if (keys.length === 0) return undefined;
  const h = natsHeaders();
  // A record's keys are distinct: append, not set (which first looks for the key to replace).
  for (const k of keys) h.append(k, rec[k] ?? '');
  return h;
}

/** Endpoint names may only hold `[-\w]`. */
const endpointName = (subject: string) =>
  subject
    .replace(/\*/g, 'any')
    .replace(/>/g, 'all')
    .replace(/[^-\w]/g, '_');

export interface NatsBusOptions {
  logger?: Logger;
  /** Close the NATS connection in `close()` (default true). */
  ownsConnection?: boolean;
}

/**
 * Bus over a NATS connection. Served subjects are registered as NATS
 * micro-service endpoints (one service per queue group, queue group = service
 * name) so `$SRV.PING/INFO/STATS` show them.
 */
export class NatsBus implements Bus {
  private readonly logger: Logger;
  private readonly svcm: Svcm;
  /** Keyed by queue group; a promise so concurrent serve() calls share one micro-service. */
  private readonly services = new Map<string, Promise<MicroService>>();
  private readonly subs = new Set<NatsSubscription>();
  private readonly inflight = new InFlight();
  private readonly ownsConnection: boolean;
  private readonly state: ConnectionState;
  /** Requests without the Error nats.js builds for each one (nats-reply-mux.ts). */
  private readonly replies: NatsReplyMux;
  private closed = false;

  constructor(
    /** The underlying connection (JetStream clients may share it). */
    readonly connection: NatsConnection,
    opts: NatsBusOptions = {},
  ) {
    this.logger = opts.logger ?? silentLogger();
    this.ownsConnection = opts.ownsConnection ?? true;
    this.svcm = new Svcm(connection as unknown as SvcmConnection);
    this.state = connectionState(connection);
    this.replies = new NatsReplyMux(connection);
  }

  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMessage> {
    return tracedRequest('nats', subject, opts, (o) => this.send(subject, data, o));
  }

  private async send(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMessage> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: false });
    assertTimeout(opts.timeoutMs);
    const rec: Record<string, string> = { ...opts.headers };
    const deadline = requestDeadline(opts.timeoutMs, rec[Headers.deadline]);
    rec[Headers.deadline] = String(deadline);
    const headers = recordToHeaders(rec);
    // A request with an idempotency key may be sent again when the connection drops before its
    // reply: the server side answers a repeated key from its record instead of running it twice.
    const resendable = opts.idempotent ?? rec[Headers.idempotencyKey] !== undefined;
    const conn = this.state;
    let reply: Msg;
    for (;;) {
      // nats.js drops what is written while it reconnects: wait for the connection instead.
      if (!conn.connected && !(await conn.whenConnected(deadline))) {
        throw conn.closed
          ? new UnavailableError(`Request to ${subject} failed: the NATS connection is closed`)
          : new TimeoutError(`No reply from ${subject} within ${opts.timeoutMs} ms (the NATS connection is down)`);
      }
      const epoch = conn.epoch;
      // (A client that throws synchronously, e.g. closed, rejects this promise instead.)
      const sent = Promise.resolve().then(() => this.replies.request(subject, data, { timeoutMs: Math.max(1, deadline - Date.now()), headers }));
      const lost = resendable ? conn.lostAfter(epoch) : undefined;
      try {
        const r = await (lost ? Promise.race([sent, lost.promise.then((): typeof LOST => LOST)]) : sent);
        if (r === LOST) {
          sent.catch(() => undefined);
          if (Date.now() < deadline) continue;
          throw new TimeoutError(`No reply from ${subject} within ${opts.timeoutMs} ms (the NATS connection dropped)`);
        }
        reply = r;
        break;
      } catch (err) {
        if (err instanceof TimeoutError) throw err;
        // Nobody received it (no responders): right after a reconnect the services are still
        // re-subscribing, so asking again until the deadline is safe and usually answered.
        if (isNoResponders(err) && conn.sinceReconnect < RESUBSCRIBE_GRACE_MS && Date.now() + RESUBSCRIBE_POLL_MS < deadline) {
          await sleep(RESUBSCRIBE_POLL_MS);
          continue;
        }
        if (resendable && conn.epoch !== epoch && Date.now() < deadline) continue;
        throw mapRequestError(err, subject, opts.timeoutMs);
      } finally {
        lost?.cancel();
      }
    }
    const h = headersToRecord(reply.headers);
    const errHeader = h[Headers.error];
    if (errHeader) throw decodeErrorHeader(subject, errHeader);
    // A micro-service that is not ours failing with the standard NATS headers.
    const svcErr = h['Nats-Service-Error'];
    if (svcErr) {
      const status = Number(h['Nats-Service-Error-Code']);
      const code = Object.entries(SERVICE_ERROR_STATUS).find(([, s]) => s === status)?.[0] ?? 'INTERNAL';
      throw new RemoteError(subject, code, svcErr, status === 503 || status === 504);
    }
    return { subject, data: reply.data, headers: h };
  }

  async serve(subject: string, opts: ServeOptions, handler: RequestHandler): Promise<Subscription> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: true });
    if (!/^[-\w]+$/.test(opts.queue)) {
      throw new InvalidArgumentError(`Invalid queue group "${opts.queue}": use letters, digits, '-' or '_' (it is also the NATS micro-service name)`);
    }
    let pending = this.services.get(opts.queue);
    if (!pending) {
      pending = this.startService(opts).then((service) => ({ opts, service, endpoints: [] }));
      this.services.set(opts.queue, pending);
      pending.catch(() => this.services.delete(opts.queue));
    }
    const ms = await pending;
    const base = endpointName(subject);
    let name = base;
    for (let i = 2; ms.endpoints.some((e) => e.name === name); i++) name = `${base}-${i}`;
    const ep: Endpoint = { name, subject, handler };
    ms.endpoints.push(ep);
    this.addEndpoint(ms, ep);
    await this.connection.flush();
    const group = ms;
    return {
      unsubscribe: async () => {
        const i = group.endpoints.indexOf(ep);
        if (i < 0) return;
        group.endpoints.splice(i, 1);
        // A micro-service cannot drop a single endpoint: restart it with the others.
        await group.service.stop().catch(() => undefined);
        if (group.endpoints.length === 0 || this.closed) {
          this.services.delete(group.opts.queue);
          return;
        }
        group.service = await this.startService(group.opts);
        for (const e of group.endpoints) this.addEndpoint(group, e);
        await this.connection.flush();
      },
    };
  }

  async publish(subject: string, data: Uint8Array, headers: Record<string, string> = {}): Promise<void> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: false });
    const h = recordToHeaders(headers);
    this.connection.publish(subject, data, h ? { headers: h } : undefined);
  }

  async subscribe(subject: string, handler: EventHandler): Promise<Subscription> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: true });
    const sub = this.connection.subscribe(subject, {
      callback: (err, msg) => {
        if (err) {
          this.logger.warn({ err, subject }, 'subscription error');
          return;
        }
        try {
          handler({ subject: msg.subject, data: msg.data, headers: headersToRecord(msg.headers) });
        } catch (e) {
          this.logger.warn({ err: e, subject: msg.subject }, 'event handler threw');
        }
      },
    });
    this.subs.add(sub);
    await this.connection.flush();
    return {
      unsubscribe: async () => {
        this.subs.delete(sub);
        sub.unsubscribe();
      },
    };
  }

  /** Stops serving and subscribing, waits for in-flight handlers to reply, then drains the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.services.values()].map(async (p) => (await p).service.stop()));
    this.services.clear();
    for (const s of this.subs) s.unsubscribe();
    this.subs.clear();
    await this.inflight.idle();
    if (this.ownsConnection && !this.connection.isClosed()) {
      await this.connection.drain().catch((err: unknown) => {
        this.logger.debug({ err }, 'drain failed; closing');
        return this.connection.close();
      });
    }
  }

  private async startService(opts: ServeOptions): Promise<Service> {
    return this.svcm.add({
      name: opts.queue,
      version: opts.version ?? '0.0.0',
      description: opts.description ?? '',
      queue: opts.queue,
    });
  }

  private addEndpoint(ms: MicroService, ep: Endpoint): void {
    ms.service.addEndpoint(ep.name, {
      subject: ep.subject,
      queue: ms.opts.queue,
      handler: (err, msg) => {
        if (err) {
          this.logger.warn({ err, subject: ep.subject }, 'service endpoint error');
          return;
        }
        void this.inflight.track(this.handle(ep, msg));
      },
    });
  }

  private async handle(ep: Endpoint, msg: ServiceMsg): Promise<void> {
    const req: BusMessage = { subject: msg.subject, data: msg.data, headers: headersToRecord(msg.headers) };
    const out = await invokeHandler(ep.handler, req, this.logger);
    if (out === undefined || !msg.reply) return;
    try {
      if (out.ok) {
        msg.respond(out.data);
      } else {
        const h = natsHeaders();
        h.set(Headers.error, out.errorHeader);
        const { code, message } = JSON.parse(out.errorHeader) as { code: string; message: string };
        msg.respondError(SERVICE_ERROR_STATUS[code] ?? 500, message.replace(/[\r\n]+/g, ' '), Empty, { headers: h } as unknown as ServiceRespondOptions);
      }
    } catch (err) {
      this.logger.warn({ err, subject: msg.subject }, 'could not send the reply');
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError('The bus is closed');
  }
}

const LOST: unique symbol = Symbol('connection lost');
/** How long after a reconnect a "no responders" answer is taken for services still re-subscribing. */
const RESUBSCRIBE_GRACE_MS = 10_000;
const RESUBSCRIBE_POLL_MS = 100;

function isNoResponders(err: unknown): boolean {
  const e = err as { isNoResponders?: () => boolean } | undefined;
  return typeof e?.isNoResponders === 'function' && e.isNoResponders();
}

function mapRequestError(err: unknown, subject: string, timeoutMs: number): Error {
  const e = err as Error & { isNoResponders?: () => boolean };
  if (e?.name === 'TimeoutError') return new TimeoutError(`No reply from ${subject} within ${timeoutMs} ms`, { cause: err });
  if (typeof e?.isNoResponders === 'function' && e.isNoResponders()) return new UnavailableError(`no service is serving ${subject}`, { cause: err });
  if (e?.name === 'ClosedConnectionError' || e?.name === 'DrainingConnectionError') {
    return new UnavailableError(`Request to ${subject} failed: the NATS connection is closed`, { cause: err });
  }
  if (e?.name === 'InvalidSubjectError' || e?.name === 'InvalidArgumentError') return new InvalidArgumentError(errorMessage(err), { cause: err });
  return new UnavailableError(`Request to ${subject} failed: ${errorMessage(err)}`, { cause: err });
}

export interface ConnectNatsBusOptions {
  /** One URL or several, comma-separated (e.g. `nats://a:4222,nats://b:4222`). */
  url: string;
  /** Connection name shown by the server (service name). */
  name: string;
  logger?: Logger;
}

/**
 * Connects to NATS and returns a NatsBus that owns the connection. The client
 * reconnects forever, so a restarted nats-server is rejoined (subscriptions and
 * micro-services are re-registered by the client).
 */
export async function connectNatsBus(opts: ConnectNatsBusOptions): Promise<NatsBus> {
  const logger = (opts.logger ?? silentLogger()).child({ component: 'bus' });
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers: opts.url
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      name: opts.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 10_000,
      // No stack trace captured up front for every request and timer, in case it fails: measured at
      // ~5% of a cluster orchestrator's CPU (issue 9, bench/throughput "Cluster mode"); our errors
      // carry their own message (UnavailableError, RemoteError) rather than the client's stack.
      noAsyncTraces: true,
    });
  } catch (err) {
    throw new UnavailableError(`Cannot connect to NATS at ${opts.url}: ${errorMessage(err)}. Is nats-server running? Check NATS_URL.`, { cause: err });
  }
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'error') logger.warn({ status: s.type }, 'NATS connection status');
      else if (s.type === 'reconnect') logger.info({ status: s.type }, 'NATS reconnected');
      else logger.debug({ status: s.type }, 'NATS connection status');
    }
  })().catch(() => undefined);
  return new NatsBus(nc, { logger });
}
