/**
 * Transport-neutral messaging used by every service. Two implementations pass
 * the same contract suite (src/contract.ts): NatsBus (cluster) and MemoryBus
 * (embedded, tests).
 */

/** Well-known header names carried on every request. */
export const Headers = {
  traceparent: 'traceparent',
  tenant: 'agentloop-tenant',
  /** Absolute deadline, epoch milliseconds, as a decimal string. */
  deadline: 'agentloop-deadline',
  idempotencyKey: 'agentloop-idempotency-key',
  /** On a tool execute: answer only from the record of an earlier execution with the same idempotency key; never execute. */
  replayOnly: 'agentloop-replay-only',
  /** On a tool execute: run again even though this idempotency key was started before (idempotent tools only). */
  reexecute: 'agentloop-reexecute',
  /** Set on a reply when the handler threw: JSON {code,message,retryable}. */
  error: 'agentloop-error',
} as const;

export interface BusMessage {
  subject: string;
  data: Uint8Array;
  headers: Record<string, string>;
}

export interface RequestOptions {
  /** Time to wait for the reply; also written as the deadline header. */
  timeoutMs: number;
  headers?: Record<string, string>;
  /**
   * The request may be sent again when the connection drops before its reply (NATS: the reply,
   * or the request itself, may be lost in a reconnect). Default: true when the request carries
   * an `agentloop-idempotency-key` header (the server answers a repeated key from its record),
   * false otherwise. Set it for requests that are safe to repeat anyway (reads, ensure/delete).
   */
  idempotent?: boolean;
}

export interface HandlerContext {
  /** Aborted when the caller's deadline passes. */
  signal: AbortSignal;
  /** Absolute deadline (epoch ms) from the request, or undefined. */
  deadline: number | undefined;
}

/** Returns the reply payload. A thrown error is replied with the `agentloop-error` header. */
export type RequestHandler = (msg: BusMessage, ctx: HandlerContext) => Promise<Uint8Array>;
export type EventHandler = (msg: BusMessage) => void;

export interface ServeOptions {
  /** Queue group: one member of the group receives each request. Also the micro-service name on NATS. */
  queue: string;
  /** Service version for the NATS micro-services registry. */
  version?: string;
  description?: string;
}

export interface Subscription {
  unsubscribe(): Promise<void>;
}

export interface Bus {
  /**
   * Request/reply. Throws TimeoutError when no reply arrives in time,
   * UnavailableError when nobody serves the subject, and a RemoteError
   * (code, retryable) when the handler threw.
   */
  request(subject: string, data: Uint8Array, opts: RequestOptions): Promise<BusMessage>;
  /** Serves a subject inside a queue group. */
  serve(subject: string, opts: ServeOptions, handler: RequestHandler): Promise<Subscription>;
  /** Fire-and-forget publish. */
  publish(subject: string, data: Uint8Array, headers?: Record<string, string>): Promise<void>;
  /** Subscribes to a subject (NATS wildcards `*` and `>` supported by both implementations). */
  subscribe(subject: string, handler: EventHandler): Promise<Subscription>;
  /** Waits for in-flight handlers, then closes. */
  close(): Promise<void>;
}

/** One stored run event, with its position in the stream (the SSE id). */
export interface StoredRunEvent {
  /** Monotonic position; the SSE `id:` and what `Last-Event-ID` sends back. */
  id: number;
  runId: string;
  event: string;
  /** JSON text of the event payload. */
  dataJson: string;
  tsMs: number;
}

export interface RunEventSubscribeOptions {
  /** Replay events whose id is greater than this (0 or undefined: from the start). */
  afterId?: number;
  signal?: AbortSignal;
}

/** How a RunEndWatch ended: the run's `end` (with the `error` event's JSON seen before it, if any), or no verdict. */
export type RunEndWatchResult = { kind: 'end'; errorJson?: string } | { kind: 'lost' } | { kind: 'aborted' };

/**
 * A live watch of a run's end (`RunEventStream.watchEnd`). Events published after `ready`
 * resolves are seen: the waiter reads the run's record after that, and waits on `done` only when
 * the record is not terminal yet. `lost`: events may have been missed (connection dropped); the
 * waiter falls back to `subscribe`. `close` is idempotent.
 */
export interface RunEndWatch {
  ready: Promise<void>;
  done: Promise<RunEndWatchResult>;
  close(): void;
}

/**
 * Per-run event log that a client can re-join. NATS: the RUN_EVENTS JetStream
 * stream on `agentloop.events.<run_id>`. Memory: a bounded in-process log.
 * Iteration ends after the event named `end` or when the signal aborts.
 */
export interface RunEventStream {
  /**
   * Stores one event; resolves with its id once stored. A run's events are stored in the order of
   * the calls, also when a caller publishes the next before the previous resolved (the
   * orchestrator's stream loop does: run/publish-pipeline.ts); contract.ts tests it.
   */
  publish(runId: string, threadId: string, event: string, data: unknown): Promise<number>;
  subscribe(runId: string, opts?: RunEventSubscribeOptions): AsyncIterable<StoredRunEvent>;
  /**
   * Optional, cheaper than `subscribe` for a waiter that only needs the run's end: live events
   * only, no replay. Implemented where a replaying subscription costs more (JetStream).
   */
  watchEnd?(runId: string, signal: AbortSignal): RunEndWatch;
  /** Removes a run's events (thread deletion). */
  purge(runId: string): Promise<void>;
  close(): Promise<void>;
}
