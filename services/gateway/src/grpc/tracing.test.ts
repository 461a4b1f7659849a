import { afterEach, describe, expect, it } from 'vitest';
import { startTestTelemetry, type TestTelemetry } from '@agentloop/telemetry';
import { startTestGateway, type TestGateway } from '../testing/index.js';
import { createAgentLoopGrpcClient, startGrpcServer, type AgentLoopClient, type GrpcServer } from './index.js';

let telemetry: TestTelemetry | undefined;
let gw: TestGateway | undefined;
let server: GrpcServer | undefined;
let client: AgentLoopClient | undefined;
afterEach(async () => {
  client?.close();
  await server?.close();
  await gw?.close();
  await telemetry?.shutdown();
});

describe('tracing', () => {
  it('continues the caller’s traceparent: the RPC span and the enqueued run share its trace', async () => {
    telemetry = await startTestTelemetry('gateway-grpc-test');
    gw = await startTestGateway();
    server = await startGrpcServer({ context: gw.app.agentloop, host: '127.0.0.1', port: 0 });
    client = createAgentLoopGrpcClient(`127.0.0.1:${server.port}`);
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const thread = await client.createThread({});
    const run = await client.createRun(
      { threadId: thread.threadId, inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'traced' }] }) },
      { metadata: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
    );
    const span = telemetry.spans().find((s) => s.name === 'agentloop.v1.AgentLoop/CreateRun');
    expect(span?.spanContext().traceId).toBe(traceId);
    expect(span?.attributes['rpc.method']).toBe('CreateRun');
    for await (const ev of client.joinRunStream({ threadId: run.threadId, runId: run.runId })) if (ev.event === 'end') break;
    expect(gw.orchestrator!.jobs.find((j) => j.runId === run.runId)?.traceparent).toContain(traceId);
  });
});
