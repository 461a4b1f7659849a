import { afterEach, describe, expect, it } from 'vitest';
import { freePortForTest } from './test-port.js';
import { initTelemetry, type Telemetry } from './sdk.js';
import { instruments } from './instruments.js';

let t: Telemetry | undefined;
afterEach(async () => {
  await t?.shutdown();
  t = undefined;
});

describe('initTelemetry', () => {
  it('is a no-op without OTEL settings', async () => {
    t = await initTelemetry({ serviceName: 'x', env: {} });
    expect({ tracing: t.tracing, metrics: t.metrics, prometheusPort: t.prometheusPort }).toEqual({ tracing: false, metrics: false, prometheusPort: undefined });
  });

  it('serves Prometheus metrics when OTEL_METRICS_EXPORTER=prometheus', async () => {
    const port = await freePortForTest();
    t = await initTelemetry({
      serviceName: 'orchestrator',
      env: { OTEL_METRICS_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: String(port), OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1' },
    });
    instruments().runsFinished.add(3, { status: 'success' });
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(text).toMatch(/agentloop_runs_finished(_total)?\{[^}]*status="success"[^}]*\} 3/);
  });

  it.each([
    [{ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER: "zipkin" is not one of otlp, console, none'],
    [{ OTEL_METRICS_EXPORTER: 'statsd' }, 'OTEL_METRICS_EXPORTER: "statsd" is not one of otlp, prometheus, none'],
    [{ OTEL_TRACES_SAMPLER_ARG: '2' }, 'OTEL_TRACES_SAMPLER_ARG: expected a ratio between 0 and 1'],
  ])('refuses %j with a clear message', async (env, message) => {
    await expect(initTelemetry({ serviceName: 'x', env })).rejects.toThrow(message);
  });
});
