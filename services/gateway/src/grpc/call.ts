import * as grpc from '@grpc/grpc-js';
import type { DescMethod } from '@bufbuild/protobuf';
import { UnavailableError, type Logger } from '@agentloop/core';
import { context, extractTraceContext, failSpan, SpanKind, trace, tracer } from '@agentloop/telemetry';
import type { ApiKeyAuthenticator } from '../auth.js';
import type { RouteContext } from '../context.js';
import type { CronService } from '../cron-service.js';
import type { StoreApi } from '../store-api.js';
import { statusOf } from '../errors.js';
import { GrpcStatusError, toGrpcStatus, toServiceError } from './status.js';
import type { Caller } from '../auth.js';

/** What the gRPC API shares with the HTTP API: the same run service, store and API keys. */
export interface GrpcContext extends RouteContext {
  auth: ApiKeyAuthenticator;
  /** The store's operations, as HTTP /store serves them. */
  storeApi: StoreApi;
  /** The crons, as HTTP /runs/crons serves them. */
  crons: CronService;
  /** Replaces host paths in text bound for a client (redaction.ts): status details, run errors. */
  redact: (text: string) => string;
}

/** What every handler of one server runs with. */
export interface CallEnv {
  ctx: GrpcContext;
  /** Aborted when this gRPC server closes or the run service stops (calls in flight end with UNAVAILABLE). */
  closing: AbortSignal;
}

/** Why a call's signal aborted. */
export type AbortReason = 'cancelled' | 'deadline' | 'wait-limit' | 'closing';

/** One call, as a handler sees it. */
export interface CallScope {
  /** The tenant of the call's API key ("default" when auth is off). */
  tenant: string;
  /** The id of the call's API key ("" when auth is off); see auth.ts `apiKeyId`. */
  apiKeyId: string;
  /**
   * Aborted when the client cancels, the call's deadline passes, RUN_WAIT_MAX_MS passes (the same
   * cap as HTTP waits and streams) or the gateway stops: waits and event reads stop at once.
   */
  signal: AbortSignal;
  /** Why `signal` aborted (undefined while it has not). */
  readonly abortReason: AbortReason | undefined;
  log: Logger;
}

type AnyServerCall = grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>;

/** The call's API key metadata as the header bag ApiKeyAuthenticator reads (`x-api-key`, `authorization`). */
function authHeaders(md: grpc.Metadata): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of ['x-api-key', 'authorization']) {
    const v = md.get(name)[0];
    if (typeof v === 'string') headers[name] = v;
  }
  return headers;
}

function traceHeaders(md: grpc.Metadata): Record<string, string | undefined> {
  const first = (name: string) => {
    const v = md.get(name)[0];
    return typeof v === 'string' ? v : undefined;
  };
  return { traceparent: first('traceparent'), tracestate: first('tracestate') };
}

/** Milliseconds until the call's deadline (Infinity when it has none). */
function msUntil(deadline: grpc.Deadline): number {
  const at = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : Infinity;
}

/** Builds the scope of a call; `dispose` releases its timer and listeners. */
function openScope(env: CallEnv, call: AnyServerCall, caller: Caller, log: Logger): CallScope & { dispose(): void } {
  const { ctx, closing } = env;
  const ac = new AbortController();
  let reason: AbortReason | undefined;
  const abort = (why: AbortReason) => {
    if (ac.signal.aborted) return;
    reason = why;
    ac.abort();
  };
  const onCancelled = () => abort('cancelled');
  const onClosing = () => abort('closing');
  call.on('cancelled', onCancelled);
  closing.addEventListener('abort', onClosing, { once: true });
  const deadlineMs = msUntil(call.getDeadline());
  const capMs = Math.min(deadlineMs, ctx.config.RUN_WAIT_MAX_MS);
  const timer = setTimeout(() => abort(deadlineMs <= ctx.config.RUN_WAIT_MAX_MS ? 'deadline' : 'wait-limit'), capMs);
  timer.unref();
  if (call.cancelled) abort('cancelled');
  if (closing.aborted) abort('closing');
  return {
    tenant: caller.tenant,
    apiKeyId: caller.keyId,
    signal: ac.signal,
    get abortReason() {
      return reason;
    },
    log,
    dispose() {
      clearTimeout(timer);
      call.off('cancelled', onCancelled);
      closing.removeEventListener('abort', onClosing);
    },
  };
}

/** The error that ends a call whose scope aborted before its work was done. */
export function abortedError(scope: CallScope, what: string): GrpcStatusError {
  switch (scope.abortReason) {
    case 'closing':
      return new GrpcStatusError(grpc.status.UNAVAILABLE, 'UNAVAILABLE', `The gateway is shutting down; ${what}`);
    case 'cancelled':
      return new GrpcStatusError(grpc.status.CANCELLED, 'INTERNAL', 'The call was cancelled by the client.');
    case 'deadline':
      return new GrpcStatusError(grpc.status.DEADLINE_EXCEEDED, 'TIMEOUT', `The call's deadline passed; ${what}`);
    case 'wait-limit':
    case undefined:
      return new GrpcStatusError(grpc.status.DEADLINE_EXCEEDED, 'TIMEOUT', `The server's wait limit (RUN_WAIT_MAX_MS) passed; ${what}`);
  }
}

/** Whether an error is the server's fault (the span is marked failed), not the caller's. */
function isServerFault(err: unknown): boolean {
  if (err instanceof GrpcStatusError) return err.grpcCode === grpc.status.UNAVAILABLE;
  return statusOf(err) >= 500;
}

/**
 * Runs a handler body for one call: authenticates (UNAUTHENTICATED before anything else), opens a
 * SERVER span continuing the caller's `traceparent` (so the runs it enqueues join the caller's
 * trace, as over HTTP), and releases the scope afterwards.
 */
async function runCall<T>(env: CallEnv, method: DescMethod, call: AnyServerCall, body: (scope: CallScope) => Promise<T>): Promise<T> {
  const { ctx } = env;
  const caller = ctx.auth.identify(authHeaders(call.metadata));
  const tenant = caller.tenant;
  const log = ctx.logger.child({ component: 'grpc', rpc: method.name, tenant });
  const parent = extractTraceContext(traceHeaders(call.metadata));
  const attributes = { 'rpc.system': 'grpc', 'rpc.service': method.parent.typeName, 'rpc.method': method.name, 'agentloop.tenant': tenant };
  const span = tracer().startSpan(`${method.parent.typeName}/${method.name}`, { kind: SpanKind.SERVER, attributes }, parent);
  const scope = openScope(env, call, caller, log);
  try {
    return await context.with(trace.setSpan(parent, span), () => body(scope));
  } catch (err) {
    if (isServerFault(err)) failSpan(span, err);
    throw err;
  } finally {
    scope.dispose();
    span.end();
  }
}

export type UnaryImpl<I, O extends object> = (request: I, scope: CallScope) => Promise<O>;

/** A grpc-js unary handler around `impl`; any error becomes a status (status.ts). */
export function unaryHandler<I, O extends object>(env: CallEnv, method: DescMethod, impl: UnaryImpl<I, O>): grpc.handleUnaryCall<I, O> {
  const log = env.ctx.logger.child({ component: 'grpc', rpc: method.name });
  return (call, callback) => {
    runCall(env, method, call as AnyServerCall, (scope) => impl(call.request, scope)).then(
      (response) => callback(null, response),
      (err: unknown) => callback(toServiceError(toGrpcStatus(err, log, env.ctx.redact))),
    );
  };
}

/**
 * Writes a server stream's messages with backpressure: `write` resolves once grpc-js has room for
 * more, and false once the call is over (cancelled, deadline, gateway stopping), so the caller stops
 * reading events instead of buffering them for nobody.
 */
export class StreamSink<O> {
  constructor(
    private readonly call: grpc.ServerWritableStream<unknown, O>,
    private readonly signal: AbortSignal,
  ) {}

  get open(): boolean {
    return !this.call.cancelled && !this.signal.aborted && !this.call.destroyed && !this.call.writableEnded;
  }

  async write(message: O): Promise<boolean> {
    if (!this.open) return false;
    if (!this.call.write(message)) await this.drained();
    return this.open;
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.call.off('drain', done);
        this.call.off('close', done);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      this.call.on('drain', done);
      this.call.on('close', done);
      this.signal.addEventListener('abort', done, { once: true });
    });
  }
}

export type StreamImpl<I, O> = (request: I, scope: CallScope, sink: StreamSink<O>) => Promise<void>;

/** A grpc-js server-streaming handler around `impl`: OK when it returns, its error's status when it throws. */
export function serverStreamHandler<I, O>(env: CallEnv, method: DescMethod, impl: StreamImpl<I, O>): grpc.handleServerStreamingCall<I, O> {
  const log = env.ctx.logger.child({ component: 'grpc', rpc: method.name });
  return (call) => {
    runCall(env, method, call as grpc.ServerWritableStream<unknown, unknown>, (scope) => impl(call.request, scope, new StreamSink(call, scope.signal))).then(
      () => {
        if (!call.cancelled) call.end();
      },
      (err: unknown) => {
        // A cancelled call has no reader left: nothing to send, nothing worth an error log.
        if (call.cancelled) return;
        call.emit('error', toServiceError(toGrpcStatus(err, log, env.ctx.redact)));
      },
    );
  };
}

/** The event stream a call reads from was lost (not aborted by the call itself). */
export function lostStream(runId: string, cause: unknown): UnavailableError {
  return new UnavailableError(`Lost the event stream of run ${runId}; re-join it with JoinRunStream after the last event id you received.`, { cause });
}
