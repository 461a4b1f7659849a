/**
 * OpenTelemetry for AgentLoop: `initTelemetry` (SDK from the standard OTEL_*
 * environment: OTLP/console traces, OTLP/Prometheus metrics) and the helpers
 * instrumented code uses (`withSpan`, trace-context propagation, the shared
 * metric instruments and gauges, the pino → OTel log tee). Without initTelemetry everything is a no-op.
 */
export { initTelemetry, type Telemetry, type TelemetryOptions } from './sdk.js';
export {
  withSpan,
  tracingEnabled,
  failSpan,
  tracer,
  injectTraceContext,
  extractTraceContext,
  currentTraceparent,
  traceLogFields,
  instruments,
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type AgentLoopInstruments,
  type SpanOptions,
  type Span,
  type Attributes,
  type Context,
} from './instruments.js';
export { tracedMethods } from './traced-methods.js';
export { exportLogLine, logTelemetry } from './logs.js';
export { observeQueues, observePendingApprovals, type ObservedQueue, type PendingCount } from './gauges.js';
export {
  initThreadTelemetry,
  receiveThreadTelemetry,
  flushThreadTelemetryOnCollect,
  threadTelemetryConfig,
  type ThreadTelemetry,
  type ThreadTelemetryConfig,
  type ThreadTelemetryReceiver,
} from './threads.js';
export { startTestTelemetry, type TestTelemetry, type ReadableSpan, type ReadableLogRecord } from './testing.js';
