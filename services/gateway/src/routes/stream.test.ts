import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryRunEventStream, type RunEventStream, type RunEventSubscribeOptions, type StoredRunEvent } from '@agentloop/bus';
import { latch, parseSse, startTestGateway, type TestGateway } from '../testing/index.js';
import { RunLifecycle } from '@agentloop/store';

let gw: TestGateway;
afterEach(async () => gw.close());

const hi = (text = 'hi') => ({ messages: [{ role: 'user', content: text }] });

async function newThread(): Promise<string> {
  return (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json().thread_id as string;
}

describe('POST /threads/{id}/runs/stream', () => {
  it('answers text/event-stream: metadata first, the values events with ids, then end', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/stream`, payload: { assistant_id: 'agent', input: hi('s') } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseSse(res.payload);
    expect(events.map((e) => e.event)).toEqual(['metadata', 'values', 'values', 'end']);
    const runId = (events[0]!.data as { run_id: string }).run_id;
    expect(events[0]!.data).toMatchObject({ run_id: runId, attempt: 1 });
    expect(res.headers['content-location']).toBe(`/threads/${tid}/runs/${runId}`);
    expect(res.headers.location).toBe(`/threads/${tid}/runs/${runId}/stream`);
    const ids = events.slice(1).map((e) => Number(e.id));
    expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect((events[2]!.data as { messages: { content: string }[] }).messages.at(-1)!.content).toBe('echo: s');
    expect(events.at(-1)!.data).toBeNull();
  });

  it('sends only the requested stream modes', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    const res = await gw.app.inject({
      method: 'POST',
      url: `/threads/${tid}/runs/stream`,
      payload: { assistant_id: 'agent', input: hi(), stream_mode: ['updates'] },
    });
    const events = parseSse(res.payload);
    expect(events.map((e) => e.event)).toEqual(['metadata', 'updates', 'end']);
    expect(events[1]!.data).toMatchObject({ agent: { messages: [{ type: 'ai', content: 'echo: hi' }] } });
  });

  it('passes the error event of a failed run before end', async () => {
    gw = await startTestGateway({
      orchestrator: {
        reply: () => {
          throw new TypeError('bad tool call');
        },
      },
    });
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/stream`, payload: { assistant_id: 'agent', input: hi() } });
    const events = parseSse(res.payload);
    expect(events.slice(-2)).toEqual([
      expect.objectContaining({ event: 'error', data: { error: 'TypeError', message: 'bad tool call' } }),
      expect.objectContaining({ event: 'end' }),
    ]);
  });

  it('validates before streaming: a 404 for an unknown thread is plain JSON', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/threads/00000000-0000-4000-8000-000000000000/runs/stream',
      payload: { assistant_id: 'agent' },
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/application\/json/);
  });
});

describe('POST /runs/stream', () => {
  it('streams a stateless run and removes its thread afterwards', async () => {
    gw = await startTestGateway();
    const res = await gw.app.inject({ method: 'POST', url: '/runs/stream', payload: { assistant_id: 'agent', input: hi(), stream_mode: 'values' } });
    const events = parseSse(res.payload);
    expect(events[0]!.event).toBe('metadata');
    expect(events.at(-1)!.event).toBe('end');
    const job = gw.orchestrator!.jobs[0]!;
    expect(job.ephemeral).toBe(true);
    expect(await gw.store.getThread('default', job.threadId)).toBeUndefined();
  });
});

describe('GET /threads/{id}/runs/{run_id}/stream', () => {
  it("replays the whole run for a join without Last-Event-ID, in the run's stream modes", async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    const first = parseSse(
      (
        await gw.app.inject({
          method: 'POST',
          url: `/threads/${tid}/runs/stream`,
          payload: { assistant_id: 'agent', input: hi(), stream_mode: ['values', 'updates'] },
        })
      ).payload,
    );
    const runId = (first[0]!.data as { run_id: string }).run_id;
    const joined = parseSse((await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${runId}/stream` })).payload);
    expect(joined).toEqual(first.slice(1));
  });

  it('resumes after Last-Event-ID', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    const first = parseSse(
      (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/stream`, payload: { assistant_id: 'agent', input: hi() } })).payload,
    );
    const runId = (first[0]!.data as { run_id: string }).run_id;
    const firstValues = first[1]!;
    const res = await gw.app.inject({
      method: 'GET',
      url: `/threads/${tid}/runs/${runId}/stream`,
      headers: { 'last-event-id': firstValues.id! },
    });
    const rejoined = parseSse(res.payload);
    expect(rejoined).toEqual(first.slice(2));
    expect(rejoined.every((e) => Number(e.id) > Number(firstValues.id))).toBe(true);
  });

  it('honours a stream_mode query parameter', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    const first = parseSse(
      (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/stream`, payload: { assistant_id: 'agent', input: hi() } })).payload,
    );
    const runId = (first[0]!.data as { run_id: string }).run_id;
    const res = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${runId}/stream?stream_mode=updates` });
    expect(parseSse(res.payload).map((e) => e.event)).toEqual(['updates', 'end']);
  });

  it('ends with a synthetic end when a finished run has no events left', async () => {
    gw = await startTestGateway({ orchestrator: false, env: { SSE_REPLAY_IDLE_MS: '20' } });
    const tid = await newThread();
    const run = (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent' } })).json();
    await new RunLifecycle(gw.store).end({ tenantId: 'default', runId: run.run_id, status: 'success', cause: 'finished' });
    const res = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${run.run_id}/stream` });
    expect(parseSse(res.payload).map((e) => e.event)).toEqual(['end']);
  });

  it('is a 422 for a malformed Last-Event-ID and a 404 for an unknown run', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const run = (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent' } })).json();
    const bad = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${run.run_id}/stream`, headers: { 'last-event-id': 'x' } });
    const unknown = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/00000000-0000-4000-8000-000000000000/stream` });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('headers.last-event-id');
    expect(unknown.statusCode).toBe(404);
  });
});

describe('client disconnect', () => {
  it('stops the run event subscription when the SSE client goes away', async () => {
    const counting = new CountingEvents(new MemoryRunEventStream());
    const gate = latch();
    gw = await startTestGateway({ events: counting, orchestrator: { gate: () => gate.wait() } });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (gw.app.server.address() as AddressInfo).port;
    const tid = await newThread();
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/threads/${tid}/runs/stream`, headers: { 'content-type': 'application/json' } });
    req.end(JSON.stringify({ assistant_id: 'agent', input: hi() }));
    const res = await new Promise<IncomingMessage>((resolve) => req.on('response', resolve));
    const first = await new Promise<string>((resolve) => res.once('data', (chunk: Buffer) => resolve(chunk.toString('utf8'))));
    expect(first).toContain('event: metadata');
    await until(() => counting.active === 1);
    req.destroy();
    await until(() => counting.active === 0);
    gate.open();
    expect(counting.active).toBe(0);
  });
});

describe('shutdown', () => {
  it('ends open SSE streams without an end event so clients rejoin elsewhere', async () => {
    const gate = latch();
    gw = await startTestGateway({ orchestrator: { gate: () => gate.wait() } });
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (gw.app.server.address() as AddressInfo).port;
    const tid = await newThread();
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: `/threads/${tid}/runs/stream`, headers: { 'content-type': 'application/json' } });
    req.end(JSON.stringify({ assistant_id: 'agent', input: hi() }));
    const res = await new Promise<IncomingMessage>((resolve) => req.on('response', resolve));
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (c: string) => (body += c));
    const ended = new Promise<void>((resolve) => res.on('end', resolve));
    await until(() => body.includes('event: metadata'));
    await gw.app.close();
    await ended;
    gate.open();
    expect(parseSse(body).map((e) => e.event)).toEqual(['metadata']);
  });
});

/** Polls a condition (bounded by the test timeout). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

/** A RunEventStream decorator that counts open subscriptions. */
class CountingEvents implements RunEventStream {
  active = 0;
  constructor(private readonly inner: RunEventStream) {}
  publish(runId: string, threadId: string, event: string, data: unknown): Promise<number> {
    return this.inner.publish(runId, threadId, event, data);
  }
  async *subscribe(runId: string, opts?: RunEventSubscribeOptions): AsyncGenerator<StoredRunEvent> {
    this.active += 1;
    try {
      yield* this.inner.subscribe(runId, opts);
    } finally {
      this.active -= 1;
    }
  }
  purge(runId: string): Promise<void> {
    return this.inner.purge(runId);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
