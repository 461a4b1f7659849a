import {
  context,
  INVALID_SPAN_CONTEXT,
  metrics,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Counter,
  type Gauge,
  type Histogram,
  type Meter,
  type MeterProvider,
  type Span,
  type UpDownCounter,
} from '@opentelemetry/api';

export { SpanKind, SpanStatusCode, context, trace, type Span, type Attributes, type Context };

const SCOPE = 'agentloop';

/** A span that records nothing, handed to `withSpan` callers while tracing is off. */
const NOOP_SPAN: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
/** Whether initTelemetry registered a tracer provider (see setTracingRegistered). */
let tracingRegistered = false;

/** Called by initTelemetry when it registers (true) or removes (false) its tracer provider. */
export function setTracingRegistered(on: boolean): void {
  tracingRegistered = on;
}

/** Whether spans are recorded at all: instrumentation that costs something even as a no-op can skip itself. */
export function tracingEnabled(): boolean {
  return tracingRegistered;
}

export function tracer() {
  return trace.getTracer(SCOPE);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** Parent context (default: the active one). */
  parent?: Context;
}

/**
 * Runs `fn` inside a new active span: the span ends when `fn` settles, with an
 * error status (and the exception recorded) when it throws. A no-op span when
 * no tracer provider is registered.
 */
export async function withSpan<T>(name: string, opts: SpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  // Tracing off (no provider registered): no span, no context switch. Without a registered
  // context manager `context.with` would not carry anything anyway; skipping it saves the span
  // objects and closures built for every bus request and tool call (issue 9 profile).
  if (!tracingRegistered) return fn(NOOP_SPAN);
  const parent = opts.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, ...(opts.attributes ? { attributes: opts.attributes } : {}) }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/** Marks a span as failed with the error's message. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : new Error(String(err)));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

/** Adds the active context's `traceparent` (W3C) to a header bag. */
export function injectTraceContext(headers: Record<string, string>, ctx: Context = context.active()): Record<string, string> {
  propagation.inject(ctx, headers);
  return headers;
}

/** The context a `traceparent` header bag (or value) carries, on top of the active one. */
export function extractTraceContext(carrier: Record<string, string | undefined> | string | undefined): Context {
  if (carrier === undefined || carrier === '') return context.active();
  const bag = typeof carrier === 'string' ? { traceparent: carrier } : carrier;
  return propagation.extract(context.active(), bag);
}

/** The active span's `traceparent` value, or '' when there is none. */
export function currentTraceparent(): string {
  // Tracing off: no context manager is registered, so the active context is always the root one,
  // which carries no span — nothing to inject (a run created per request asked for it: issue 9).
  if (!tracingRegistered) return '';
  const bag: Record<string, string> = {};
  propagation.inject(context.active(), bag);
  return bag.traceparent ?? '';
}

/**
 * `trace_id` and `span_id` of the span active where a line is logged (none outside a span, or
 * with tracing off): the `mixin` of every service's logger (createLogger), so a log line leads to
 * its trace and back (issue 10).
 */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  // Tracing off: no active span anywhere (see currentTraceparent); this runs for every log line.
  // A new object each time: pino merges the line's fields into what the mixin returns.
  if (!tracingRegistered) return {};
  const span = trace.getActiveSpan();
  if (!span) return {};
  const sc = span.spanContext();
  return trace.isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}

/** The instruments every service records into (names follow OTel semantic conventions where one exists). */
export interface AgentLoopInstruments {
  runsStarted: Counter;
  runsFinished: Counter;
  runDuration: Histogram;
  runsActive: UpDownCounter;
  toolCalls: Counter;
  toolCallDuration: Histogram;
  modelCalls: Counter;
  modelCallDuration: Histogram;
  tokens: Counter;
  /** Tokens a tenant's budget has left, by tenant and budget (daily, monthly), as of its last check (issue 17). */
  tokenBudgetRemaining: Gauge;
  busRequestDuration: Histogram;
  httpRequestDuration: Histogram;
  webhookDeliveries: Counter;
  approvals: Counter;
}

let cached: { provider: MeterProvider; instruments: AgentLoopInstruments } | undefined;

function build(meter: Meter): AgentLoopInstruments {
  const seconds = { unit: 's', advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900] } };
  return {
    runsStarted: meter.createCounter('agentloop.runs.started', { description: 'Run executions started (a resumed run counts again)' }),
    runsFinished: meter.createCounter('agentloop.runs.finished', { description: 'Runs finished, by status' }),
    runDuration: meter.createHistogram('agentloop.run.duration', { description: 'Wall time of a run execution', ...seconds }),
    runsActive: meter.createUpDownCounter('agentloop.runs.active', { description: 'Runs executing now' }),
    toolCalls: meter.createCounter('agentloop.tool.calls', { description: 'Tool calls, by tool and outcome' }),
    toolCallDuration: meter.createHistogram('agentloop.tool.duration', { description: 'Tool call latency seen by the orchestrator', ...seconds }),
    modelCalls: meter.createCounter('agentloop.model.calls', { description: 'Model calls, by model and outcome' }),
    modelCallDuration: meter.createHistogram('agentloop.model.duration', { description: 'Model call latency', ...seconds }),
    tokens: meter.createCounter('agentloop.model.tokens', { description: 'Tokens, by model, tenant and type (input, output)', unit: '{token}' }),
    tokenBudgetRemaining: meter.createGauge('agentloop.tokens.budget_remaining', {
      description: "Tokens left in a tenant's budget, by tenant and budget (daily, monthly), as of its last check",
      unit: '{token}',
    }),
    busRequestDuration: meter.createHistogram('agentloop.bus.request.duration', { description: 'Bus request latency, by subject and outcome', ...seconds }),
    httpRequestDuration: meter.createHistogram('http.server.request.duration', { description: 'HTTP request latency', ...seconds }),
    webhookDeliveries: meter.createCounter('agentloop.webhook.deliveries', { description: 'Webhook delivery attempts, by outcome' }),
    approvals: meter.createCounter('agentloop.approval.decisions', { description: 'Tool approval verdicts and decisions' }),
  };
}

/**
 * The instruments on the current global meter provider (re-created when
 * telemetry is initialised after first use, so early callers are not stuck
 * with no-op instruments).
 */
export function instruments(): AgentLoopInstruments {
  const provider = metrics.getMeterProvider();
  if (cached?.provider !== provider) cached = { provider, instruments: build(provider.getMeter(SCOPE)) };
  return cached.instruments;
}
