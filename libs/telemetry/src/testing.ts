import { InMemoryLogRecordExporter, type ReadableLogRecord } from '@opentelemetry/sdk-logs';
import { MetricReader, type DataPoint, type MetricData } from '@opentelemetry/sdk-metrics';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { initTelemetry, type Telemetry } from './sdk.js';

/** A pull-only metric reader for tests. */
class CollectingReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export interface TestTelemetry extends AsyncDisposable {
  telemetry: Telemetry;
  /** Finished spans so far. */
  spans(): ReadableSpan[];
  /** Log records emitted so far (lines of loggers built with `logTelemetry`). */
  logRecords(): ReadableLogRecord[];
  /** Data points of one metric (summed over collections: cumulative temporality). */
  points(name: string): DataPoint<unknown>[];
  /** Collects metrics now; call before `points`. */
  collect(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Telemetry with in-memory exporters, for tests that check spans, metrics and log records.
 * Registers the global providers: one per test process at a time.
 */
export async function startTestTelemetry(serviceName = 'test'): Promise<TestTelemetry> {
  const spans = new InMemorySpanExporter();
  const logRecords = new InMemoryLogRecordExporter();
  const reader = new CollectingReader();
  const telemetry = await initTelemetry({ serviceName, env: {}, spanExporter: spans, metricReader: reader, logRecordExporter: logRecords });
  let collected: MetricData[] = [];
  const shutdown = () => telemetry.shutdown();
  return {
    telemetry,
    spans: () => spans.getFinishedSpans(),
    logRecords: () => logRecords.getFinishedLogRecords(),
    async collect() {
      const { resourceMetrics } = await reader.collect();
      collected = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics);
    },
    points: (name) => collected.filter((m) => m.descriptor.name === name).flatMap((m) => m.dataPoints as DataPoint<unknown>[]),
    shutdown,
    [Symbol.asyncDispose]: shutdown,
  };
}

export type { ReadableSpan, ReadableLogRecord };
