import { tracedRequest } from './tracing.js';
import { InvalidArgumentError, TimeoutError, UnavailableError, silentLogger, type Logger } from '@agentloop/core';
import { decodeErrorHeader } from './errors.js';
import { copyBytes, InFlight, invokeHandler, type HandlerOutcome } from './handler.js';
import { assertTimeout, assertValidSubject, requestDeadline, subjectMatches } from './subject.js';
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

interface ServerEntry {
  subject: string;
  queue: string;
  handler: RequestHandler;
  owner: MemoryBus;
}

interface SubEntry {
  subject: string;
  handler: EventHandler;
  owner: MemoryBus;
}

const MAX_CACHED_SUBJECTS = 1_000;

/** The in-process "server" that MemoryBus peers share. */
class Network {
  readonly servers: ServerEntry[] = [];
  readonly subs: SubEntry[] = [];
  private readonly rr = new Map<string, number>();
  /**
   * The queue groups serving each subject requested so far, so that a request does not match
   * every served pattern again (issue 9: a run makes a dozen requests over a few subjects).
   * Cleared whenever a server comes or goes, and past MAX_CACHED_SUBJECTS (subjects are a
   * program's constants, but nothing stops a caller from putting an id in one).
   */
  private readonly groupsBySubject = new Map<string, Array<[string, ServerEntry[]]>>();

  addServer(entry: ServerEntry): void {
    this.servers.push(entry);
    this.groupsBySubject.clear();
  }

  removeServers(keep: (s: ServerEntry) => boolean): void {
    for (let i = this.servers.length - 1; i >= 0; i--) if (!keep(this.servers[i]!)) this.servers.splice(i, 1);
    this.groupsBySubject.clear();
  }

  /** One member per queue group, round-robin within the group. */
  pickServers(subject: string): ServerEntry[] {
    let groups = this.groupsBySubject.get(subject);
    if (!groups) {
      const byQueue = new Map<string, ServerEntry[]>();
      for (const s of this.servers) {
        if (!subjectMatches(s.subject, subject)) continue;
        const g = byQueue.get(s.queue);
        if (g) g.push(s);
        else byQueue.set(s.queue, [s]);
      }
      groups = [...byQueue];
      if (this.groupsBySubject.size >= MAX_CACHED_SUBJECTS) this.groupsBySubject.clear();
      this.groupsBySubject.set(subject, groups);
    }
    const picked: ServerEntry[] = [];
    for (const [queue, members] of groups) {
      const n = this.rr.get(queue) ?? 0;
      this.rr.set(queue, n + 1);
      const m = members[n % members.length];
      if (m) picked.push(m);
    }
    return picked;
  }

  remove<T>(list: T[], item: T): void {
    const i = list.indexOf(item);
    if (i >= 0) list.splice(i, 1);
  }
}

export interface MemoryBusOptions {
  logger?: Logger;
  /** Join the in-process network of this bus instead of starting a new one (see `peer()`). */
  peerOf?: MemoryBus;
  /**
   * Do not deliver this connection's own publications to its own subscriptions (NATS's `noEcho`
   * connection option). The bridge of an orchestrator thread's ThreadBus uses it: that thread
   * delivers its publications to its own subscribers itself (thread-bus.ts).
   */
  noEcho?: boolean;
}

const copyMessage = (m: BusMessage): BusMessage => ({ subject: m.subject, data: copyBytes(m.data), headers: { ...m.headers } });

/**
 * In-process Bus for the embedded mode and unit tests. Same semantics as
 * NatsBus: queue groups (one member per request, round-robin), `*`/`>`
 * wildcards, typed timeout / no-responder / remote errors, deadline header.
 * Payloads are copied on every hop so no two parties share memory.
 * `peer()` gives a second "connection" to the same in-process network.
 */
export class MemoryBus implements Bus {
  private readonly network: Network;
  private readonly logger: Logger;
  private readonly inflight = new InFlight();
  private readonly noEcho: boolean;
  private closed = false;

  constructor(opts: MemoryBusOptions = {}) {
    this.logger = opts.logger ?? silentLogger();
    this.network = opts.peerOf?.network ?? new Network();
    this.noEcho = opts.noEcho ?? false;
  }

  /** Another bus on the same in-process network (like a second NATS connection). */
  peer(opts: { logger?: Logger; noEcho?: boolean } = {}): MemoryBus {
    return new MemoryBus({ logger: opts.logger ?? this.logger, peerOf: this, ...(opts.noEcho ? { noEcho: true } : {}) });
  }

  /** Whether some connection of this network serves `subject` (without picking one). */
  serves(subject: string): boolean {
    return this.network.servers.some((s) => subjectMatches(s.subject, subject));
  }

  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMessage> {
    return tracedRequest('memory', subject, opts, (o) => this.send(subject, data, o));
  }

  private async send(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMessage> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: false });
    assertTimeout(opts.timeoutMs);
    const headers: Record<string, string> = { ...opts.headers };
    const deadline = requestDeadline(opts.timeoutMs, headers[Headers.deadline]);
    headers[Headers.deadline] = String(deadline);
    const targets = this.network.pickServers(subject);
    if (targets.length === 0) throw new UnavailableError(`no service is serving ${subject}`);

    const outcome = await new Promise<Exclude<HandlerOutcome, undefined>>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(
        () => {
          settled = true;
          reject(new TimeoutError(`No reply from ${subject} within ${opts.timeoutMs} ms`));
        },
        Math.max(1, deadline - Date.now()),
      );
      for (const t of targets) {
        const msg: BusMessage = { subject, data: copyBytes(data), headers: { ...headers } };
        const run = new Promise<void>((r) => setImmediate(r)).then(() => invokeHandler(t.handler, msg, t.owner.logger));
        void t.owner.inflight.track(run).then((out) => {
          if (settled || out === undefined) return;
          settled = true;
          clearTimeout(timer);
          resolve(out);
        });
      }
    });
    if (!outcome.ok) throw decodeErrorHeader(subject, outcome.errorHeader);
    return { subject, data: copyBytes(outcome.data), headers: {} };
  }

  async serve(subject: string, opts: ServeOptions, handler: RequestHandler): Promise<Subscription> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: true });
    if (!opts.queue) throw new InvalidArgumentError(`serve(${subject}) needs a queue group name`);
    const entry: ServerEntry = { subject, queue: opts.queue, handler, owner: this };
    this.network.addServer(entry);
    return { unsubscribe: async () => this.network.removeServers((s) => s !== entry) };
  }

  async publish(subject: string, data: Uint8Array, headers: Record<string, string> = {}): Promise<void> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: false });
    const msg: BusMessage = { subject, data, headers };
    for (const s of this.network.subs) {
      if (!subjectMatches(s.subject, subject) || (this.noEcho && s.owner === this)) continue;
      const copy = copyMessage(msg);
      // Delivered asynchronously and in order, like a NATS subscription callback.
      queueMicrotask(() => {
        try {
          s.handler(copy);
        } catch (err) {
          s.owner.logger.warn({ err, subject }, 'event handler threw');
        }
      });
    }
  }

  async subscribe(subject: string, handler: EventHandler): Promise<Subscription> {
    this.assertOpen();
    assertValidSubject(subject, { wildcards: true });
    const entry: SubEntry = { subject, handler, owner: this };
    this.network.subs.push(entry);
    return { unsubscribe: async () => this.network.remove(this.network.subs, entry) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.network.removeServers((s) => s.owner !== this);
    const subs = this.network.subs;
    for (let i = subs.length - 1; i >= 0; i--) if (subs[i]?.owner === this) subs.splice(i, 1);
    await this.inflight.idle();
  }

  private assertOpen(): void {
    if (this.closed) throw new UnavailableError('The bus is closed');
  }
}
