import os from 'node:os';
import { metrics, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { logs } from '@opentelemetry/api-logs';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  BatchLogRecordProcessor,
  ConsoleLogRecordExporter,
  LoggerProvider,
  SimpleLogRecordProcessor,
  type LogRecordExporter,
  type LogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader, type IMetricReader } from '@opentelemetry/sdk-metrics';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import { ConfigError, type Logger } from '@agentloop/core';
import { setTracingRegistered } from './instruments.js';
import { setLogExport } from './logs.js';

export interface TelemetryOptions {
  /** service.name (OTEL_SERVICE_NAME overrides it). */
  serviceName: string;
  serviceVersion?: string;
  /** Environment to read the OTEL_* settings from (default process.env). */
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  /** Extra span exporter (tests: an InMemorySpanExporter), exported synchronously. */
  spanExporter?: SpanExporter;
  /** Extra metric reader (tests). */
  metricReader?: IMetricReader;
  /** Extra log record exporter (tests: an InMemoryLogRecordExporter), exported synchronously. */
  logRecordExporter?: LogRecordExporter;
}

export interface Telemetry {
  /** Whether traces are exported anywhere. */
  readonly tracing: boolean;
  /** Whether metrics are exported or served. */
  readonly metrics: boolean;
  /** Whether log lines are exported as OTel log records. */
  readonly logs: boolean;
  /** Port of the Prometheus scrape endpoint when OTEL_METRICS_EXPORTER=prometheus. */
  readonly prometheusPort: number | undefined;
  /** Flushes and stops the exporters; the global providers fall back to no-ops. */
  shutdown(): Promise<void>;
}

const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');

/**
 * The OTLP/HTTP URL of one signal from `env` (the exporters would read process.env, which an
 * embedded server started with its own env does not share): the signal's own endpoint as given,
 * else the base endpoint plus `/v1/<signal>`, as the OTLP exporter specification says.
 */
function otlpUrl(env: NodeJS.ProcessEnv, signal: 'traces' | 'metrics' | 'logs'): { url?: string } {
  const own = env[`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`];
  if (own) return { url: own };
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? { url: `${base.replace(/\/+$/, '')}/v1/${signal}` } : {};
}

/** The root sampling ratio of OTEL_TRACES_SAMPLER_ARG (default 1). */
export function samplerRatio(env: NodeJS.ProcessEnv): number {
  const ratio = env.OTEL_TRACES_SAMPLER_ARG === undefined || env.OTEL_TRACES_SAMPLER_ARG === '' ? 1 : Number(env.OTEL_TRACES_SAMPLER_ARG);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1)
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG: expected a ratio between 0 and 1, got "${env.OTEL_TRACES_SAMPLER_ARG}"`);
  return ratio;
}

/** The span processors and resource of the registered tracer provider (initTelemetry's), for spans other threads recorded. */
let spanSink: { resource: Resource; processors: SpanProcessor[] } | undefined;
/** Whether initTelemetry registered a meter provider. */
let meterRegistered = false;

/** Whether a meter provider of initTelemetry's is registered (metrics are exported or served). */
export function metricsRegistered(): boolean {
  return meterRegistered;
}

/**
 * Hands a span another thread recorded (threads.ts) to the registered tracer provider's
 * processors, as if this thread had ended it: same exporters, this process's resource.
 */
export function exportForeignSpan(span: Omit<ReadableSpan, 'resource'>): void {
  const sink = spanSink;
  if (!sink) return;
  const readable: ReadableSpan = { ...span, resource: sink.resource };
  for (const p of sink.processors) p.onEnd(readable);
}

/**
 * Starts OpenTelemetry for a process, from the standard environment:
 * - traces: `OTEL_TRACES_EXPORTER` = otlp | console | none (default otlp when
 *   `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, else none);
 *   sampling `OTEL_TRACES_SAMPLER_ARG` (ratio, parent-based; default 1);
 * - metrics: `OTEL_METRICS_EXPORTER` = otlp | prometheus | none (default otlp when an OTLP endpoint
 *   is set, else none); Prometheus on `OTEL_EXPORTER_PROMETHEUS_PORT` (default 9464) at /metrics;
 *   OTLP export every `OTEL_METRIC_EXPORT_INTERVAL` ms (default 60000);
 * - logs: `OTEL_LOGS_EXPORTER` = otlp | console | none (default otlp when an OTLP endpoint is set,
 *   else none): every line of a logger built with `logTelemetry` becomes a log record in the trace
 *   it was logged in.
 * With nothing configured the API stays a no-op: instrumented code costs next to nothing.
 * W3C trace context is the propagator, so `traceparent` headers link the services.
 */
export async function initTelemetry(opts: TelemetryOptions): Promise<Telemetry> {
  const env = opts.env ?? process.env;
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const traceExporters = env.OTEL_TRACES_EXPORTER ? list(env.OTEL_TRACES_EXPORTER) : endpoint ? ['otlp'] : [];
  const metricsEndpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  const metricExporters = env.OTEL_METRICS_EXPORTER ? list(env.OTEL_METRICS_EXPORTER) : metricsEndpoint ? ['otlp'] : [];
  for (const e of traceExporters)
    if (!['otlp', 'console', 'none'].includes(e)) throw new ConfigError(`OTEL_TRACES_EXPORTER: "${e}" is not one of otlp, console, none`);
  for (const e of metricExporters)
    if (!['otlp', 'prometheus', 'none'].includes(e)) throw new ConfigError(`OTEL_METRICS_EXPORTER: "${e}" is not one of otlp, prometheus, none`);
  const logsEndpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT;
  const logExporters = env.OTEL_LOGS_EXPORTER ? list(env.OTEL_LOGS_EXPORTER) : logsEndpoint ? ['otlp'] : [];
  for (const e of logExporters)
    if (!['otlp', 'console', 'none'].includes(e)) throw new ConfigError(`OTEL_LOGS_EXPORTER: "${e}" is not one of otlp, console, none`);
  const ratio = samplerRatio(env);

  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME || opts.serviceName,
    ...(opts.serviceVersion ? { [ATTR_SERVICE_VERSION]: opts.serviceVersion } : {}),
    'service.namespace': 'agentloop',
    'service.instance.id': `${os.hostname()}:${process.pid}`,
  });

  const processors: SpanProcessor[] = [];
  for (const e of traceExporters) {
    if (e === 'otlp') processors.push(new BatchSpanProcessor(new OTLPTraceExporter(otlpUrl(env, 'traces'))));
    if (e === 'console') processors.push(new SimpleSpanProcessor(new ConsoleSpanExporter()));
  }
  if (opts.spanExporter) processors.push(new SimpleSpanProcessor(opts.spanExporter));
  let tracerProvider: NodeTracerProvider | undefined;
  if (processors.length > 0) {
    tracerProvider = new NodeTracerProvider({
      resource,
      spanProcessors: processors,
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
    });
    tracerProvider.register({ propagator: new W3CTraceContextPropagator() });
    setTracingRegistered(true);
    spanSink = { resource, processors };
  } else {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  }

  const readers: IMetricReader[] = [];
  let prometheusPort: number | undefined;
  for (const e of metricExporters) {
    if (e === 'otlp') {
      const interval = Number(env.OTEL_METRIC_EXPORT_INTERVAL ?? 60_000);
      readers.push(
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter(otlpUrl(env, 'metrics')),
          exportIntervalMillis: Number.isFinite(interval) && interval > 0 ? interval : 60_000,
        }),
      );
    }
    if (e === 'prometheus') {
      const port = Number(env.OTEL_EXPORTER_PROMETHEUS_PORT ?? 9464);
      if (!Number.isInteger(port) || port < 0 || port > 65535)
        throw new ConfigError(`OTEL_EXPORTER_PROMETHEUS_PORT: expected a port, got "${env.OTEL_EXPORTER_PROMETHEUS_PORT}"`);
      const exporter = await new Promise<PrometheusExporter>((resolve, reject) => {
        const ex: PrometheusExporter = new PrometheusExporter(
          { port, host: env.OTEL_EXPORTER_PROMETHEUS_HOST || '0.0.0.0', preventServerStart: false },
          (err) => (err ? reject(err) : resolve(ex)),
        );
      });
      prometheusPort = port;
      readers.push(exporter);
    }
  }
  if (opts.metricReader) readers.push(opts.metricReader);
  let meterProvider: MeterProvider | undefined;
  if (readers.length > 0) {
    meterProvider = new MeterProvider({ resource, readers });
    metrics.setGlobalMeterProvider(meterProvider);
    meterRegistered = true;
  }

  const logProcessors: LogRecordProcessor[] = [];
  for (const e of logExporters) {
    if (e === 'otlp') logProcessors.push(new BatchLogRecordProcessor({ exporter: new OTLPLogExporter(otlpUrl(env, 'logs')) }));
    if (e === 'console') logProcessors.push(new SimpleLogRecordProcessor({ exporter: new ConsoleLogRecordExporter() }));
  }
  if (opts.logRecordExporter) logProcessors.push(new SimpleLogRecordProcessor({ exporter: opts.logRecordExporter }));
  let loggerProvider: LoggerProvider | undefined;
  if (logProcessors.length > 0) {
    loggerProvider = new LoggerProvider({ resource, processors: logProcessors });
    logs.setGlobalLoggerProvider(loggerProvider);
    setLogExport(loggerProvider.getLogger('agentloop'));
  }
  opts.logger?.info(
    {
      traces: traceExporters.filter((e) => e !== 'none'),
      metrics: metricExporters.filter((e) => e !== 'none'),
      logs: logExporters.filter((e) => e !== 'none'),
      prometheus_port: prometheusPort,
    },
    'telemetry',
  );

  let down = false;
  const sink = spanSink;
  return {
    tracing: tracerProvider !== undefined,
    metrics: meterProvider !== undefined,
    logs: loggerProvider !== undefined,
    prometheusPort,
    async shutdown() {
      if (down) return;
      down = true;
      // Lines logged from here on are no longer exported; those already emitted are flushed below.
      if (loggerProvider) setLogExport(undefined);
      await Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown(), loggerProvider?.shutdown()]);
      // Only what this instance registered: another instance (a test's) keeps its providers.
      if (tracerProvider) {
        trace.disable();
        setTracingRegistered(false);
        if (spanSink === sink) spanSink = undefined;
      }
      if (meterProvider) {
        metrics.disable();
        meterRegistered = false;
      }
      if (loggerProvider) logs.disable();
    },
  };
}
