/**
 * What an operator sees (issue 16, docs/operations.md), on an embedded AgentLoop with its
 * telemetry pointed at an in-process OTLP/HTTP receiver and a Prometheus endpoint: one scripted
 * run with a failing tool call, a tool call that waits for approval, and a webhook.
 * - every metric the shipped Grafana dashboard and Prometheus alert rules query is one the
 *   process really exposes on /metrics (names as the Prometheus exporter writes them);
 * - the run's spans and log records arrive over OTLP in one trace, and its metrics with them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { freePort } from '@agentloop/devservers';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { scripted, startWebhookReceiver } from './helpers.js';
import { attr, startOtlpReceiver } from './otlp-receiver.js';
import { dashboardQueries, exposedMetricNames, metricNamesOf, ruleQueries } from '../deploy/promql.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DASHBOARD = path.join(ROOT, 'deploy/grafana/agentloop-dashboard.json');
const RULES = path.join(ROOT, 'deploy/prometheus/agentloop-alerts.yaml');

// With orchestrator threads too, whatever EMBEDDED_THREADS the suite runs with: one /metrics
// endpoint for the process, every thread's measurements on it (libs/telemetry threads.ts).
describe.each([...new Set([EMBEDDED_TEST_THREADS, 'orchestrator:2'])])('observability (embedded, OTLP + Prometheus, EMBEDDED_THREADS=%s)', (threads) => {
  let server: EmbeddedServer;
  let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let hooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let dataDir: string;
  let metricsUrl: string;
  const scrapes: string[] = [];
  let traceId = '';

  const scrape = async () => {
    const text = await (await fetch(metricsUrl)).text();
    scrapes.push(text);
    return text;
  };

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    hooks = await startWebhookReceiver();
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-obs-'));
    const promPort = await freePort();
    metricsUrl = `http://127.0.0.1:${promPort}/metrics`;
    server = await startEmbedded({
      port: 0,
      env: {
        DATA_DIR: dataDir,
        EMBEDDED_THREADS: threads,
        LOG_LEVEL: 'info',
        WEBHOOK_ALLOW: '127.0.0.1',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
        OTEL_METRICS_EXPORTER: 'otlp,prometheus',
        OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
        OTEL_EXPORTER_PROMETHEUS_PORT: String(promPort),
        OTEL_METRIC_EXPORT_INTERVAL: '1000',
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await Promise.allSettled([otlp?.close(), hooks?.close()]);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs a failing tool call, an approval and a webhook; the gauges show the waiting approval', async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'read the notes, then save the key' }] },
      config: scripted([
        { tool_calls: [{ name: 'read_file', args: { file_path: 'notes/missing.txt' } }] },
        { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/key.env', content: 'API_KEY=abc123' } }] },
      ]),
    })) as { __interrupt__?: Array<{ value: { type: string } }> };
    expect(first.__interrupt__?.[0]?.value.type).toBe('tool_approval');
    expect(await scrape()).toMatch(/^agentloop_approvals_pending\{[^}]*agentloop_tenant="default"[^}]*\} 1$/m);

    const run = await client.runs.create(thread.thread_id, 'agent', {
      command: { resume: { decision: 'approve', by: 'ops@example.com' } },
      config: scripted([{ content: 'Saved.' }]),
      webhook: hooks.url,
    });
    await hooks.waitFor(1);
    expect(hooks.deliveries[0]!.json).toMatchObject({ run_id: run.run_id, status: 'success' });

    const text = await scrape();
    expect(text).toMatch(/^agentloop_approvals_pending\{[^}]*\} 0$/m);
    expect(text).toMatch(/^agentloop_webhook_deliveries_total\{[^}]*outcome="delivered"[^}]*\} 1$/m);
    expect(text).toMatch(/^agentloop_tool_calls_total\{[^}]*agentloop_tool="read_file"[^}]*\} 1$/m);
    expect(text).toMatch(/^agentloop_queue_depth\{[^}]*queue="runs"[^}]*\} 0$/m);
    // Valid exposition with any number of threads: each metric family and each series once.
    const types = text.split('\n').filter((l) => l.startsWith('# TYPE '));
    expect(types.length).toBe(new Set(types.map((l) => l.split(' ')[2])).size);
    const series = text
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map((l) => l.slice(0, l.lastIndexOf(' ')));
    expect(series.length).toBe(new Set(series).size);
  });

  it('the dashboard and the alert rules query only metrics the process exposes', () => {
    const exposed = exposedMetricNames(scrapes.join('\n'));
    const queries = [...dashboardQueries(DASHBOARD), ...ruleQueries(RULES)];
    expect(queries.length).toBeGreaterThan(10);
    const missing = queries.flatMap((q) =>
      metricNamesOf(q.expr)
        .filter((name) => !exposed.has(name))
        .map((name) => `${q.where}: ${name}`),
    );
    expect(missing, `exposed: ${[...exposed].sort().join(', ')}`).toEqual([]);
  });

  it('exports the run as spans and log records of one trace over OTLP, with its metrics', async () => {
    // Closing the server flushes the batch exporters.
    await server.close();
    const spans = otlp.spans().map((s) => s.item);
    const request = spans.find((s) => s.name === 'POST /threads/:thread_id/runs/wait');
    expect(request).toBeDefined();
    traceId = request!.traceId;
    const inTrace = spans.filter((s) => s.traceId === traceId);
    expect(inTrace.map((s) => s.name)).toEqual(expect.arrayContaining(['agentloop.run', 'chat scripted', 'tool read_file']));
    const chat = inTrace.find((s) => s.name === 'chat scripted')!;
    expect({
      operation: attr(chat.attributes, 'gen_ai.operation.name'),
      model: attr(chat.attributes, 'gen_ai.request.model'),
      provider: attr(chat.attributes, 'gen_ai.provider.name'),
      input: Number(attr(chat.attributes, 'gen_ai.usage.input_tokens')) > 0,
      finish: attr(chat.attributes, 'gen_ai.response.finish_reasons'),
    }).toEqual({ operation: 'chat', model: 'scripted', provider: 'scripted', input: true, finish: { values: [{ stringValue: 'tool_calls' }] } });

    const logs = otlp.logRecords().map((l) => l.item);
    const runLogs = logs.filter((l) => l.traceId === traceId);
    expect(runLogs.map((l) => l.body?.stringValue)).toContain('tool call');
    const toolLine = runLogs.find((l) => l.body?.stringValue === 'tool call' && attr(l.attributes, 'tool') === 'read_file')!;
    expect(toolLine.severityText).toBe('INFO');
    expect(inTrace.map((s) => s.spanId)).toContain(toolLine.spanId);

    const metricNames = new Set(otlp.metrics().map((m) => m.item.name));
    for (const name of ['agentloop.runs.finished', 'agentloop.tool.calls', 'agentloop.model.tokens', 'agentloop.webhook.deliveries', 'agentloop.queue.depth'])
      expect(metricNames).toContain(name);
  });
});
