/**
 * Tracing end to end (embedded): one HTTP request that runs a tool produces a
 * single trace — the gateway's HTTP span, the orchestrator's run span (across
 * the queue), the model and tool spans, the bus request and the tool-runner's
 * handling of it — and the run, tool and HTTP metrics are recorded.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { startTestTelemetry, type TestTelemetry } from '@agentloop/telemetry';
import { scripted } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

// With orchestrator threads too, whatever EMBEDDED_THREADS the suite runs with: a thread's spans and
// metrics reach the main thread's telemetry (libs/telemetry threads.ts).
describe.each([...new Set([EMBEDDED_TEST_THREADS, 'orchestrator:2'])])('telemetry (embedded, EMBEDDED_THREADS=%s)', (threads) => {
  let t: TestTelemetry;
  let server: EmbeddedServer;
  let dataDir: string;

  beforeAll(async () => {
    t = await startTestTelemetry('agentloop-e2e');
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-otel-'));
    server = await startEmbedded({ env: { DATA_DIR: dataDir, EMBEDDED_THREADS: threads, LOG_LEVEL: 'warn' }, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await t?.shutdown();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('links the HTTP request, the run, the model and tool calls and the tool-runner in one trace', async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'write it' }] },
      config: scripted([{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/x.txt', content: 'x' } }] }, { content: 'done' }]),
    });
    // A run's span ends just after the run published its end (which answered runs.wait); an
    // orchestrator thread (EMBEDDED_THREADS) hands its spans to this thread's exporter a moment later.
    const spans = await vi.waitFor(() => {
      const all = t.spans();
      expect(all.map((s) => s.name)).toEqual(expect.arrayContaining(['POST /threads/:thread_id/runs/wait', 'agentloop.run']));
      return all;
    });
    const http = spans.find((s) => s.name === 'POST /threads/:thread_id/runs/wait');
    expect(http).toBeDefined();
    const traceId = http!.spanContext().traceId;
    const inTrace = spans.filter((s) => s.spanContext().traceId === traceId).map((s) => s.name);
    expect(inTrace).toEqual(
      expect.arrayContaining([
        'POST /threads/:thread_id/runs/wait',
        'agentloop.run',
        'chat scripted',
        'tool write_file',
        'agentloop.tools.execute request',
        'agentloop.tools.execute process',
      ]),
    );
    const run = spans.find((s) => s.name === 'agentloop.run' && s.spanContext().traceId === traceId)!;
    expect(run.attributes['agentloop.outcome']).toBe('success');
    expect(run.parentSpanContext?.spanId).toBe(http!.spanContext().spanId);

    await t.collect();
    expect(t.points('agentloop.runs.finished').some((p) => p.attributes.status === 'success')).toBe(true);
    expect(t.points('agentloop.tool.calls').some((p) => p.attributes['agentloop.tool'] === 'write_file' && p.attributes.outcome === 'ok')).toBe(true);
    expect(
      t
        .points('http.server.request.duration')
        .some((p) => p.attributes['http.route'] === '/threads/:thread_id/runs/wait' && p.attributes['http.response.status_code'] === 200),
    ).toBe(true);
  });
});
