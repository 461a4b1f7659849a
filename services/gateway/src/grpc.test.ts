import { afterEach, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import type { RunStreamEvent } from '@agentloop/proto';
import { startTestGateway, type TestGateway } from './testing/index.js';
import { AgentLoopGrpcClient, startGrpcServer, type GrpcServer } from './grpc.js';

let gw: TestGateway | undefined;
let server: GrpcServer | undefined;
let client: grpc.Client | undefined;
afterEach(async () => {
  client?.close();
  await server?.close();
  await gw?.close();
  gw = undefined;
  server = undefined;
  client = undefined;
});

async function setup(env: NodeJS.ProcessEnv = {}) {
  gw = await startTestGateway({ env });
  server = await startGrpcServer({ context: gw.app.agentloop, host: '127.0.0.1', port: 0, logger: gw.app.log as never });
  client = new AgentLoopGrpcClient(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
  return client as unknown as Record<string, (...args: unknown[]) => unknown>;
}

/** A unary call as a promise; rejects with the grpc ServiceError. */
function unary<T>(c: Record<string, (...args: unknown[]) => unknown>, method: string, req: object, key?: string): Promise<T> {
  const md = new grpc.Metadata();
  if (key) md.set('x-api-key', key);
  return new Promise((resolve, reject) => {
    c[method]!.call(client, req, md, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res)));
  });
}

function stream(c: Record<string, (...args: unknown[]) => unknown>, method: string, req: object): Promise<RunStreamEvent[]> {
  return new Promise((resolve, reject) => {
    const events: RunStreamEvent[] = [];
    const call = c[method]!.call(client, req, new grpc.Metadata()) as grpc.ClientReadableStream<RunStreamEvent>;
    call.on('data', (e: RunStreamEvent) => events.push(e));
    call.on('end', () => resolve(events));
    call.on('error', reject);
  });
}

const hi = JSON.stringify({ messages: [{ role: 'user', content: 'hello there' }] });

describe('gRPC API', () => {
  it('creates a thread, waits for a run and returns the final values (same run service as HTTP)', async () => {
    const c = await setup();
    const thread = await unary<{ threadId: string; status: string }>(c, 'createThread', {});
    expect(thread.status).toBe('idle');
    const result = await unary<{ run: { status: string; runId: string }; valuesJson: string; errorJson: string }>(c, 'waitRun', { threadId: thread.threadId, inputJson: hi });
    expect(result.run.status).toBe('success');
    expect(JSON.parse(result.valuesJson).messages.at(-1).content).toBe('echo: hello there');
    expect(result.errorJson).toBe('');
    // Visible over HTTP too.
    const http = await gw!.app.inject({ method: 'GET', url: `/threads/${thread.threadId}/runs/${result.run.runId}` });
    expect(http.json()).toMatchObject({ status: 'success' });
    expect(await unary<{ status: string }>(c, 'getThread', { threadId: thread.threadId })).toMatchObject({ status: 'idle' });
  });

  it('streams a run to its end, and JoinRun replays the events after an id', async () => {
    const c = await setup();
    const thread = await unary<{ threadId: string }>(c, 'createThread', {});
    const events = await stream(c, 'streamRun', { threadId: thread.threadId, inputJson: hi, streamMode: ['values', 'updates'] });
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('metadata');
    expect(names).toContain('values');
    expect(names.at(-1)).toBe('end');
    const runId = JSON.parse(events[0]!.dataJson).run_id as string;
    const firstValues = events.find((e) => e.event === 'values')!;
    const rest = await stream(c, 'joinRun', { threadId: thread.threadId, runId, afterEventId: firstValues.id, streamMode: ['values', 'updates'] });
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((e) => e.id > firstValues.id)).toBe(true);
    expect(rest.at(-1)!.event).toBe('end');
  });

  it('maps errors: invalid JSON names the field, an unknown thread is NOT_FOUND, a refused webhook INVALID_ARGUMENT', async () => {
    const c = await setup();
    const bad = await unary(c, 'waitRun', { inputJson: '{nope' }).catch((e: grpc.ServiceError) => e);
    expect(bad).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringContaining('input_json') });
    const missing = await unary(c, 'getThread', { threadId: '00000000-0000-4000-8000-000000000000' }).catch((e: grpc.ServiceError) => e);
    expect(missing).toMatchObject({ code: grpc.status.NOT_FOUND });
    const webhook = await unary(c, 'createRun', { inputJson: hi, webhook: 'http://169.254.169.254/' }).catch((e: grpc.ServiceError) => e);
    expect(webhook).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringContaining('body.webhook') });
  });

  it('authenticates with API keys in metadata and keeps tenants apart', async () => {
    const c = await setup({ AGENTLOOP_API_KEYS: 'ka:acme,kb:globex' });
    const none = await unary(c, 'createThread', {}).catch((e: grpc.ServiceError) => e);
    expect(none).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const wrong = await unary(c, 'createThread', {}, 'nope').catch((e: grpc.ServiceError) => e);
    expect(wrong).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const t = await unary<{ threadId: string }>(c, 'createThread', {}, 'ka');
    const other = await unary(c, 'getThread', { threadId: t.threadId }, 'kb').catch((e: grpc.ServiceError) => e);
    expect(other).toMatchObject({ code: grpc.status.NOT_FOUND });
    expect(await unary(c, 'getThread', { threadId: t.threadId }, 'ka')).toMatchObject({ threadId: t.threadId });
  });

  it('a client that cancels a stream leaves the server serving', async () => {
    const c = await setup();
    const thread = await unary<{ threadId: string }>(c, 'createThread', {});
    const call = c.streamRun!.call(client, { threadId: thread.threadId, inputJson: hi }, new grpc.Metadata()) as grpc.ClientReadableStream<RunStreamEvent>;
    await new Promise<void>((resolve) => call.once('data', () => resolve()));
    call.cancel();
    await new Promise<void>((resolve) => call.on('error', () => resolve()));
    expect((await unary<{ status: string }>(c, 'getThread', { threadId: thread.threadId })).status).toBeDefined();
  });
});
