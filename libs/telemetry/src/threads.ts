/**
 * Telemetry of worker threads (embedded mode's orchestrator threads, issue 9), forwarded to the
 * thread that started them, so a process has ONE set of exporters whatever its thread count: one
 * Prometheus /metrics endpoint, one OTLP resource, the same exporter configuration (the main
 * thread's, in-process test exporters included) for every thread's spans, metrics and log records.
 *
 * - Spans: the worker records them with a tracer provider of its own (so a run's spans parent on
 *   the trace context that crossed the queue or the port, as in a cluster process) whose one
 *   processor posts each ended span here; the main thread hands it to its own span processors.
 * - Metrics: the worker's instruments do not aggregate; each measurement (a counter's add, a
 *   histogram's record…) is posted here and recorded on the main thread's instrument of the same
 *   name. One MeterProvider then aggregates every thread's measurements: a counter is the sum of
 *   every thread's adds, a histogram has every thread's samples in its buckets, a gauge its last
 *   value — each series once, with the attributes it was recorded with (no thread label: a run
 *   does not belong to a thread an operator can address, and summing pre-aggregated cumulative
 *   series per thread would reset whenever a thread restarts). Before each collection the main
 *   thread asks every worker for what it has not posted yet (`flushThreadTelemetryOnCollect`), so a
 *   scrape right after a run sees that run's measurements.
 * - Log records: posted here and emitted on the main thread's log exporter, in the span they were
 *   logged in.
 * Batched: one message per event-loop turn of the worker at most.
 */
import {
  context,
  createNoopMeter,
  metrics,
  propagation,
  ROOT_CONTEXT,
  trace,
  type Attributes,
  type Meter,
  type MeterProvider,
  type MetricOptions,
  type SpanContext,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { AnyValueMap, LogRecord, Logger as OtelLogger, SeverityNumber } from '@opentelemetry/api-logs';
import { NodeTracerProvider, ParentBasedSampler, TraceIdRatioBasedSampler, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { setTracingRegistered, tracingEnabled } from './instruments.js';
import { forwardedLogRecord, logsExported, setLogExport } from './logs.js';
import { exportForeignSpan, metricsRegistered, samplerRatio } from './sdk.js';

/** What the main thread exports, so a worker records only that (nothing at all when telemetry is off). */
export interface ThreadTelemetryConfig {
  tracing: boolean;
  metrics: boolean;
  logs: boolean;
}

type InstrumentKind = 'counter' | 'updown' | 'histogram' | 'gauge';

interface WireSpan {
  name: string;
  kind: ReadableSpan['kind'];
  spanContext: SpanContext;
  parentSpanContext: SpanContext | undefined;
  startTime: ReadableSpan['startTime'];
  endTime: ReadableSpan['endTime'];
  status: ReadableSpan['status'];
  attributes: Attributes;
  links: ReadableSpan['links'];
  events: ReadableSpan['events'];
  duration: ReadableSpan['duration'];
  instrumentationScope: ReadableSpan['instrumentationScope'];
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
}

interface WireLogRecord {
  severityNumber?: SeverityNumber;
  severityText?: string;
  body?: string;
  attributes?: AnyValueMap;
  timestamp?: number;
  spanContext?: SpanContext;
}

/** Worker → main thread. */
export type ThreadTelemetryMessage =
  | {
      t: 'telemetry';
      /** Instruments first used since the last batch: id, kind, scope, name, options. */
      instruments: Array<[number, InstrumentKind, string, string, MetricOptions | undefined]>;
      /** Measurements: instrument id, value, attributes. */
      measurements: Array<[number, number, Attributes | undefined]>;
      spans: WireSpan[];
      logs: WireLogRecord[];
    }
  | { t: 'telemetry.flushed'; id: number };

/** Main thread → worker. */
export type ThreadTelemetryRequest = { t: 'telemetry.flush'; id: number };

/** One end of the channel between a worker and the main thread: a Worker, or a worker's `parentPort`. */
export interface TelemetryPort {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Worker's and a MessagePort's `on` both take listeners of `any`
  on(event: 'message', listener: (m: any) => void): unknown;
  postMessage(m: unknown): void;
}

/** What the main thread exports now: handed to each worker it starts. */
export function threadTelemetryConfig(): ThreadTelemetryConfig {
  return { tracing: tracingEnabled(), metrics: metricsRegistered(), logs: logsExported() };
}

export interface ThreadTelemetry {
  /** Posts what is left and stops recording. */
  shutdown(): Promise<void>;
}

/**
 * In a worker thread: registers the global tracer provider, meter provider and log export that
 * forward to `port` (the other end is `receiveThreadTelemetry` in the main thread), as far as
 * `config` says the main thread exports anything. Spans are sampled as initTelemetry samples them
 * (parent-based, `OTEL_TRACES_SAMPLER_ARG` of `env`).
 */
export function initThreadTelemetry(port: TelemetryPort, config: ThreadTelemetryConfig, env: NodeJS.ProcessEnv): ThreadTelemetry {
  let batch: Extract<ThreadTelemetryMessage, { t: 'telemetry' }> = { t: 'telemetry', instruments: [], measurements: [], spans: [], logs: [] };
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const b = batch;
    if (b.instruments.length + b.measurements.length + b.spans.length + b.logs.length === 0) return;
    batch = { t: 'telemetry', instruments: [], measurements: [], spans: [], logs: [] };
    port.postMessage(b);
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  port.on('message', (m: ThreadTelemetryRequest) => {
    if (m.t !== 'telemetry.flush') return;
    flush();
    port.postMessage({ t: 'telemetry.flushed', id: m.id } satisfies ThreadTelemetryMessage);
  });

  let tracerProvider: NodeTracerProvider | undefined;
  if (config.tracing) {
    const forward: SpanProcessor = {
      onStart: () => undefined,
      onEnd: (span) => {
        batch.spans.push(toWireSpan(span));
        schedule();
      },
      forceFlush: async () => flush(),
      shutdown: async () => flush(),
    };
    tracerProvider = new NodeTracerProvider({
      spanProcessors: [forward],
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(samplerRatio(env)) }),
    });
    tracerProvider.register({ propagator: new W3CTraceContextPropagator() });
    setTracingRegistered(true);
  } else {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }

  if (config.metrics) {
    let nextId = 0;
    const record = (kind: InstrumentKind, scope: string, name: string, options: MetricOptions | undefined) => {
      let id: number | undefined;
      return (value: number, attributes?: Attributes) => {
        if (id === undefined) batch.instruments.push([(id = ++nextId), kind, scope, name, options]);
        batch.measurements.push([id, value, attributes]);
        schedule();
      };
    };
    const meters = new Map<string, Meter>();
    const provider: MeterProvider = {
      getMeter(scope) {
        let meter = meters.get(scope);
        if (meter) return meter;
        // Observable instruments are read where they are collected: embedded mode registers its gauges in the main thread.
        const noop = createNoopMeter();
        meter = {
          createObservableGauge: noop.createObservableGauge.bind(noop),
          createObservableCounter: noop.createObservableCounter.bind(noop),
          createObservableUpDownCounter: noop.createObservableUpDownCounter.bind(noop),
          addBatchObservableCallback: noop.addBatchObservableCallback.bind(noop),
          removeBatchObservableCallback: noop.removeBatchObservableCallback.bind(noop),
          createCounter: (name, options) => ({ add: record('counter', scope, name, options) }),
          createUpDownCounter: (name, options) => ({ add: record('updown', scope, name, options) }),
          createHistogram: (name, options) => ({ record: record('histogram', scope, name, options) }),
          createGauge: (name, options) => ({ record: record('gauge', scope, name, options) }),
        };
        meters.set(scope, meter);
        return meter;
      },
    };
    metrics.setGlobalMeterProvider(provider);
  }

  if (config.logs) {
    const logger: OtelLogger = {
      emit(r: LogRecord) {
        const sc = r.context ? trace.getSpanContext(r.context) : undefined;
        batch.logs.push({
          severityNumber: r.severityNumber,
          severityText: r.severityText,
          body: typeof r.body === 'string' ? r.body : JSON.stringify(r.body),
          attributes: r.attributes as AnyValueMap | undefined,
          timestamp: typeof r.timestamp === 'number' ? r.timestamp : undefined,
          spanContext: sc,
        });
        schedule();
      },
      enabled: () => true,
    };
    setLogExport(logger);
  }

  return {
    async shutdown() {
      if (config.logs) setLogExport(undefined);
      await tracerProvider?.shutdown();
      flush();
      if (tracerProvider) {
        trace.disable();
        setTracingRegistered(false);
      }
      if (config.metrics) metrics.disable();
    },
  };
}

function toWireSpan(s: ReadableSpan): WireSpan {
  return {
    name: s.name,
    kind: s.kind,
    spanContext: s.spanContext(),
    parentSpanContext: s.parentSpanContext,
    startTime: s.startTime,
    endTime: s.endTime,
    status: s.status,
    attributes: s.attributes,
    links: s.links,
    events: s.events,
    duration: s.duration,
    instrumentationScope: s.instrumentationScope,
    droppedAttributesCount: s.droppedAttributesCount,
    droppedEventsCount: s.droppedEventsCount,
    droppedLinksCount: s.droppedLinksCount,
  };
}

export interface ThreadTelemetryReceiver {
  /** Resolves once every measurement, span and log record the worker had when asked has been handed over (or after `timeoutMs`). */
  flush(timeoutMs?: number): Promise<void>;
  close(): void;
}

/**
 * In the main thread: exports what a worker's initThreadTelemetry posts on the other end of
 * `port` (a Worker, whose `parentPort` is the other end: its telemetry then arrives in order with
 * its other messages, so all of it is here before the worker says it stopped).
 */
export function receiveThreadTelemetry(port: TelemetryPort): ThreadTelemetryReceiver {
  const instruments = new Map<number, (value: number, attributes?: Attributes) => void>();
  const flushes = new Map<number, () => void>();
  let nextFlush = 0;
  let closed = false;
  port.on('message', (m: ThreadTelemetryMessage) => {
    if (m.t === 'telemetry.flushed') {
      flushes.get(m.id)?.();
      flushes.delete(m.id);
      return;
    }
    // The port carries the worker's other messages too.
    if (m.t !== 'telemetry') return;
    for (const [id, kind, scope, name, options] of m.instruments) instruments.set(id, mainInstrument(kind, scope, name, options));
    for (const [id, value, attributes] of m.measurements) instruments.get(id)?.(value, attributes);
    for (const s of m.spans) exportForeignSpan({ ...s, spanContext: () => s.spanContext, ended: true });
    for (const r of m.logs) {
      const { spanContext, ...rest } = r;
      forwardedLogRecord({ ...rest, context: spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : context.active() });
    }
  });
  const release = () => {
    for (const done of flushes.values()) done();
    flushes.clear();
  };
  return {
    flush(timeoutMs = 2_000) {
      if (closed) return Promise.resolve();
      const id = ++nextFlush;
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          flushes.delete(id);
          resolve();
        }, timeoutMs);
        flushes.set(id, () => {
          clearTimeout(timer);
          resolve();
        });
        port.postMessage({ t: 'telemetry.flush', id } satisfies ThreadTelemetryRequest);
      });
    },
    close() {
      closed = true;
      release();
    },
  };
}

/** The main thread's instrument a worker's measurements are recorded on (the current meter provider's). */
function mainInstrument(
  kind: InstrumentKind,
  scope: string,
  name: string,
  options: MetricOptions | undefined,
): (value: number, attributes?: Attributes) => void {
  const meter = metrics.getMeterProvider().getMeter(scope);
  switch (kind) {
    case 'counter': {
      const c = meter.createCounter(name, options);
      return (v, a) => c.add(v, a);
    }
    case 'updown': {
      const c = meter.createUpDownCounter(name, options);
      return (v, a) => c.add(v, a);
    }
    case 'histogram': {
      const h = meter.createHistogram(name, options);
      return (v, a) => h.record(v, a);
    }
    case 'gauge': {
      const g = meter.createGauge(name, options);
      return (v, a) => g.record(v, a);
    }
  }
}

/**
 * Asks every worker in `receivers()` for what it has not posted yet before each metric collection
 * of the main thread (a scrape, an OTLP export), through an observable gauge of the same meter
 * scope as the forwarded instruments (the SDK runs a scope's callbacks before it reads the scope's
 * synchronous instruments): `agentloop.embedded.threads`, the orchestrator threads running.
 * Returns a function that unregisters it.
 */
export function flushThreadTelemetryOnCollect(receivers: () => ThreadTelemetryReceiver[], scope = 'agentloop'): () => void {
  const meter = metrics.getMeterProvider().getMeter(scope);
  const gauge = meter.createObservableGauge('agentloop.embedded.threads', { description: 'Orchestrator threads of an embedded process (EMBEDDED_THREADS)' });
  const callback = async (result: { observe(value: number): void }) => {
    const rs = receivers();
    await Promise.all(rs.map((r) => r.flush()));
    result.observe(rs.length);
  };
  gauge.addCallback(callback);
  return () => gauge.removeCallback(callback);
}
