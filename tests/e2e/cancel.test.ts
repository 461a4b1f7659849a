/**
 * Cancelling runs (LangGraph `POST /threads/{id}/runs/{run_id}/cancel`), embedded and as a
 * cluster: a running run stops where it is (the orchestrator executing it hears the cancel over
 * the bus), a queued run never starts, and the thread stays usable.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import * as grpc from '@grpc/grpc-js';
import { AgentLoopGrpcClient } from '@agentloop/gateway';
import { poll, scripted, useCluster, useEmbeddedServer } from './helpers.js';

type Msg = { type: string; content: string };

async function cancelJourney(baseUrl: string): Promise<void> {
  const client = new Client({ apiUrl: baseUrl });
  const thread = await client.threads.create();
  // A model call that would take a minute.
  const slow = await client.runs.create(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'take your time' }] },
    config: scripted([{ content: 'too late', delay_ms: 60_000 }]),
  });
  // A second run queued behind it.
  const queued = await client.runs.create(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'queued message' }] },
    multitaskStrategy: 'enqueue',
    config: scripted([{ content: 'queued answer' }]),
  });
  await poll(async () => ((await client.runs.get(thread.thread_id, slow.run_id)).status === 'running' ? true : undefined), 30_000, 50);

  // Cancel the queued one first: it must never run.
  await client.runs.cancel(thread.thread_id, queued.run_id);
  expect((await client.runs.get(thread.thread_id, queued.run_id)).status).toBe('interrupted');

  const started = Date.now();
  await client.runs.cancel(thread.thread_id, slow.run_id, true);
  await client.runs.join(thread.thread_id, slow.run_id);
  expect(Date.now() - started).toBeLessThan(30_000);
  expect((await client.runs.get(thread.thread_id, slow.run_id)).status).toBe('interrupted');
  await poll(async () => ((await client.threads.get(thread.thread_id)).status === 'idle' ? true : undefined), 30_000, 100);

  // The thread goes on; neither cancelled run left an answer, and the queued input never ran.
  const values = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'now quick' }] },
    config: scripted([{ content: 'quick answer' }]),
  })) as { messages: Msg[] };
  const contents = values.messages.map((m) => m.content);
  expect(contents.at(-1)).toBe('quick answer');
  expect(contents).not.toContain('too late');
  expect(contents).not.toContain('queued message');
  expect((await client.runs.get(thread.thread_id, queued.run_id)).status).toBe('interrupted');

  // multitask_strategy "interrupt": a new run stops the one in progress and runs.
  const busy = await client.runs.create(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'another slow one' }] },
    config: scripted([{ content: 'never', delay_ms: 60_000 }]),
  });
  await poll(async () => ((await client.runs.get(thread.thread_id, busy.run_id)).status === 'running' ? true : undefined), 30_000, 50);
  const replacing = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'replace it' }] },
    multitaskStrategy: 'interrupt',
    config: scripted([{ content: 'replaced' }]),
  })) as { messages: Msg[] };
  expect(replacing.messages.at(-1)!.content).toBe('replaced');
  expect((await client.runs.get(thread.thread_id, busy.run_id)).status).toBe('interrupted');

  // A finished run cannot be cancelled, nor rolled back.
  const done = (await client.runs.list(thread.thread_id)).find((r) => r.status === 'success')!;
  const res = await fetch(`${baseUrl}/threads/${thread.thread_id}/runs/${done.run_id}/cancel`, { method: 'POST' });
  expect(res.status).toBe(409);
  const rollback = await fetch(`${baseUrl}/threads/${thread.thread_id}/runs/${done.run_id}/cancel?action=rollback`, { method: 'POST' });
  expect(rollback.status).toBe(409);
}

describe('cancel (embedded)', () => {
  const server = useEmbeddedServer('agentloop-cancel-');

  it('stops a running run, keeps a queued one from starting, and the thread goes on', async () => {
    await cancelJourney(server.url);
  });
});

describe('cancel (cluster: the cancel crosses NATS to the orchestrator process)', () => {
  const cluster = useCluster();

  it('stops a running run, keeps a queued one from starting, and the thread goes on', async () => {
    await cancelJourney(cluster().url);
    expect(cluster().logs.some((l) => l.includes('cancelling run'))).toBe(true);
  }, 120_000);

  it('serves the same runs over gRPC (the gateway process, api.proto): wait, stream, and cancel', async () => {
    const client = new AgentLoopGrpcClient(cluster().grpcAddress, grpc.credentials.createInsecure()) as unknown as Record<
      string,
      (...a: unknown[]) => unknown
    > &
      grpc.Client;
    const unary = <T>(method: string, req: object) =>
      new Promise<T>((resolve, reject) =>
        client[method]!.call(client, req, new grpc.Metadata(), (err: Error | null, res: T) => (err ? reject(err) : resolve(res))),
      );
    try {
      const thread = await unary<{ threadId: string }>('createThread', {});
      const result = await unary<{ run: { status: string }; valuesJson: string }>('waitRun', {
        threadId: thread.threadId,
        inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'hi over grpc' }] }),
        configJson: JSON.stringify(scripted([{ tool_calls: [{ name: 'now', args: {} }] }, { content: 'hello from the cluster' }])),
      });
      expect(result.run.status).toBe('success');
      expect((JSON.parse(result.valuesJson) as { messages: Msg[] }).messages.at(-1)!.content).toBe('hello from the cluster');
      const events = await new Promise<Array<{ event: string }>>((resolve, reject) => {
        const out: Array<{ event: string }> = [];
        const call = client.streamRun!.call(
          client,
          {
            threadId: thread.threadId,
            inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'again' }] }),
            configJson: JSON.stringify(scripted([{ content: 'streamed' }])),
          },
          new grpc.Metadata(),
        ) as grpc.ClientReadableStream<{ event: string }>;
        call.on('data', (e: { event: string }) => out.push(e));
        call.on('end', () => resolve(out));
        call.on('error', reject);
      });
      expect(events[0]!.event).toBe('metadata');
      expect(events.at(-1)!.event).toBe('end');
    } finally {
      client.close();
    }
  }, 60_000);
});
