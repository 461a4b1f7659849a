/**
 * `/metrics` on every service in cluster mode (docs/operations.md): each of the seven processes,
 * over real NATS, Redis and MariaDB, serves its own Prometheus endpoint; after a run that waits for
 * approval, the orchestrator reports the run and the queue gauges and the gateway the thread
 * waiting for a person (read from MySQL).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { freePort } from '@agentloop/devservers';
import type { ServiceName } from '@agentloop/agentloop-app';
import { poll, scripted, useCluster } from './helpers.js';

const SERVICES: ServiceName[] = ['gateway', 'orchestrator', 'tool-runner', 'approval', 'indexer', 'skill-sandbox', 'mcp-broker'];

describe('observability (cluster): /metrics on every service', () => {
  // Allocated before the cluster starts (this hook is registered first): one port per process.
  const ports = new Map<ServiceName, number>();
  beforeAll(async () => {
    for (const s of SERVICES) ports.set(s, await freePort());
  });
  const cluster = useCluster({
    serviceEnv: (name) => ({
      OTEL_METRICS_EXPORTER: 'prometheus',
      OTEL_EXPORTER_PROMETHEUS_HOST: '127.0.0.1',
      OTEL_EXPORTER_PROMETHEUS_PORT: String(ports.get(name)),
    }),
  });
  const scrape = async (s: ServiceName) => {
    const res = await fetch(`http://127.0.0.1:${ports.get(s)}/metrics`);
    expect(res.status, s).toBe(200);
    return res.text();
  };

  it('every service answers /metrics; the orchestrator and gateway report runs, queues and waiting approvals', async () => {
    const c = cluster();
    for (const s of ['indexer', 'skill-sandbox', 'mcp-broker'] as const) c.start(s, 1);
    const client = new Client({ apiUrl: c.url });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'save the key' }] },
      config: scripted([{ tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/key.env', content: 'API_KEY=abc123' } }] }]),
    })) as { __interrupt__?: unknown[] };
    expect(values.__interrupt__).toHaveLength(1);

    // The late services may still be starting: their endpoint answers once they have initialised telemetry.
    for (const s of SERVICES)
      await poll(async () => ((await fetch(`http://127.0.0.1:${ports.get(s)}/metrics`).catch(() => undefined))?.ok ? true : undefined), 90_000);
    const texts = Object.fromEntries(await Promise.all(SERVICES.map(async (s) => [s, await scrape(s)] as const)));
    for (const s of SERVICES) expect(texts[s], s).toMatch(/^target_info\{[^}]*service_name="[^"]+"/m);
    expect(texts.orchestrator).toMatch(/^agentloop_runs_finished_total\{[^}]*status="interrupted"[^}]*\} 1$/m);
    expect(texts.orchestrator).toMatch(/^agentloop_queue_depth\{[^}]*queue="runs"[^}]*state="waiting"[^}]*\} 0$/m);
    expect(texts.gateway).toMatch(/^agentloop_approvals_pending\{[^}]*agentloop_tenant="default"[^}]*\} 1$/m);
    expect(texts.gateway).toMatch(/^http_server_request_duration_count\{[^}]*http_route="\/threads\/:thread_id\/runs\/wait"/m);
    expect(texts.approval).toMatch(/^agentloop_approval_decisions_total\{[^}]*verdict="require_approval"/m);
  });
});
