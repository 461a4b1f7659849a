/**
 * The runs API beyond create/wait/stream, through the official SDK against the gateway on a real
 * port: RunJob fields, createBatch, delete, cancelMany, thread-less joinStream, after_seconds.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { latch, startTestGateway, type TestGateway, type TestGatewayOptions } from '../testing/index.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  gw = undefined;
});

type Msg = { type: string; content: string };
const input = (text: string) => ({ messages: [{ role: 'user', content: text }] });

/** A gateway with two tenants (acme, globex) and an SDK client for each. */
async function start(opts: TestGatewayOptions = {}) {
  gw = await startTestGateway({ ...opts, env: { AGENTLOOP_API_KEYS: 'acme-key:acme,globex-key:globex', ...opts.env } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  const apiUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
  const post = (path: string, body: unknown) =>
    fetch(`${apiUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'acme-key' }, body: JSON.stringify(body) });
  return { gw, apiUrl, post, acme: new Client({ apiUrl, apiKey: 'acme-key' }), globex: new Client({ apiUrl, apiKey: 'globex-key' }) };
}

/** The run's event log after a marker `end` is appended: just the marker once the log was purged. */
async function eventsOf(g: TestGateway, runId: string, threadId: string): Promise<string[]> {
  await g.events.publish(runId, threadId, 'end', null);
  const seen: string[] = [];
  for await (const e of g.events.subscribe(runId, { signal: AbortSignal.timeout(10_000) })) {
    seen.push(e.event);
    if (e.event === 'end') break;
  }
  return seen;
}

async function poll<T>(fn: () => Promise<T | undefined>): Promise<T> {
  for (const deadline = Date.now() + 10_000; ;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Holds every run the fake orchestrator takes until `release()`. */
function gate() {
  const l = latch();
  return { options: { orchestrator: { gate: () => l.wait() } }, release: l.open };
}

describe('RunJob fields from the run request', () => {
  it('carries interrupt_before/after, stream_subgraphs and context to the orchestrator', async () => {
    const { acme, gw } = await start();
    const thread = await acme.threads.create();
    const run = await acme.runs.create(thread.thread_id, 'agent', {
      input: input('fields'),
      interruptBefore: ['tools', 'await_approval'],
      interruptAfter: '*',
      streamSubgraphs: true,
      context: { user_id: 'u-7', locale: 'fr' },
    });
    await acme.runs.join(thread.thread_id, run.run_id);
    const job = gw.orchestrator!.jobs.find((j) => j.runId === run.run_id)!;
    expect(job.interruptBefore).toEqual(['tools', 'await_approval']);
    expect(job.interruptAfter).toEqual(['*']);
    expect(job.streamSubgraphs).toBe(true);
    expect(JSON.parse(job.contextJson)).toEqual({ user_id: 'u-7', locale: 'fr' });

    const plain = await acme.runs.create(thread.thread_id, 'agent', { input: input('plain') });
    await acme.runs.join(thread.thread_id, plain.run_id);
    const plainJob = gw.orchestrator!.jobs.find((j) => j.runId === plain.run_id)!;
    expect([plainJob.interruptBefore, plainJob.interruptAfter, plainJob.streamSubgraphs, plainJob.contextJson]).toEqual([[], [], false, '']);
  });

  it('is a 422 naming a node the agent graph does not have', async () => {
    const { acme, post } = await start();
    const thread = await acme.threads.create();
    await expect(acme.runs.create(thread.thread_id, 'agent', { input: input('x'), interruptBefore: ['agent', 'nope'] })).rejects.toThrow(/422/);
    const res = await post(`/threads/${thread.thread_id}/runs`, { assistant_id: 'agent', input: input('x'), interrupt_after: ['tools', 'nope'] });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { errors: Array<{ path: string; message: string }> };
    expect(body.errors).toEqual([{ path: 'body.interrupt_after.1', message: expect.stringContaining('"nope" is not a node of graph "agent"') }]);
    expect(await acme.runs.list(thread.thread_id)).toEqual([]);
  });
});

describe('runs.createBatch', () => {
  it('creates one stateless run per payload, each run with its own input', async () => {
    const { acme, gw } = await start();
    // LangGraph's on_completion "keep" (the SDK's type lists other words; the server takes the API's).
    const keep = 'keep' as unknown as 'continue';
    const runs = await acme.runs.createBatch([
      { assistantId: 'agent', input: input('first'), metadata: { n: 1 } },
      { assistantId: 'agent', input: input('second'), metadata: { n: 2 }, onCompletion: keep, streamMode: ['updates'] },
    ]);
    expect(runs).toHaveLength(2);
    expect(runs.map((r) => r.metadata)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(new Set(runs.map((r) => r.thread_id)).size).toBe(2);
    const kept = (await acme.runs.join(runs[1]!.thread_id, runs[1]!.run_id)) as unknown as { messages: Msg[] };
    expect(kept.messages.map((m) => m.content)).toEqual(['second', 'echo: second']);
    const first = gw.orchestrator!.jobs.find((j) => j.runId === runs[0]!.run_id)!;
    expect(JSON.parse(first.inputJson)).toEqual(input('first'));
    expect(first.ephemeral).toBe(true);
    // The SDK sends the payloads' camelCase keys as they are: they are taken as their snake_case fields.
    expect(gw.orchestrator!.jobs.find((j) => j.runId === runs[1]!.run_id)!.streamMode).toEqual(['updates']);
    expect((runs[1] as unknown as { kwargs: unknown }).kwargs).toMatchObject({ on_completion: 'keep', stream_mode: ['updates'] });
  });

  it('is a 422 naming the index of a bad payload, and creates none of the batch', async () => {
    const { post, gw } = await start({ orchestrator: false });
    const res = await post('/runs/batch', [
      { assistant_id: 'agent', input: input('fine') },
      { assistant_id: 'agent', input: input('bad'), webhook: 'ftp://hooks.example.com/x' },
    ]);
    expect(res.status).toBe(422);
    const body = (await res.json()) as { errors: Array<{ path: string }> };
    expect(body.errors.map((e) => e.path)).toEqual(['body.1.webhook']);
    // Checked after the schema: an internal address is refused by the SSRF guard, still before any run is created.
    const ssrf = await post('/runs/batch', [
      { assistant_id: 'agent', input: input('fine') },
      { assistant_id: 'agent', input: input('fine too') },
      { assistant_id: 'agent', webhook: 'http://127.0.0.1/hook' },
    ]);
    expect(ssrf.status).toBe(422);
    expect(((await ssrf.json()) as { errors: Array<{ path: string }> }).errors.map((e) => e.path)).toEqual(['body.2.webhook']);
    expect(await gw.store.countActiveRuns('acme')).toBe(0);
    expect((await post('/runs/batch', [])).status).toBe(422);
    expect((await post('/runs/batch', { assistant_id: 'agent' })).status).toBe(422);
  });
});

describe('runs.delete', () => {
  it('deletes a finished run and its event log; another tenant cannot see or delete it', async () => {
    const { acme, globex, gw } = await start();
    const thread = await acme.threads.create();
    const run = await acme.runs.create(thread.thread_id, 'agent', { input: input('to delete') });
    await acme.runs.join(thread.thread_id, run.run_id);
    await expect(globex.runs.delete(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
    await acme.runs.delete(thread.thread_id, run.run_id);
    await expect(acme.runs.get(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
    expect(await acme.runs.list(thread.thread_id)).toEqual([]);
    expect(await eventsOf(gw, run.run_id, thread.thread_id)).toEqual(['end']);
    await expect(acme.runs.delete(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
    // The thread keeps the values the run left.
    const state = await acme.threads.getState<{ messages: Msg[] }>(thread.thread_id);
    expect(state.values.messages.at(-1)?.content).toBe('echo: to delete');
  });

  it('is a 409 for a pending or running run, which stays', async () => {
    const held = gate();
    const { acme } = await start(held.options);
    const thread = await acme.threads.create();
    const running = await acme.runs.create(thread.thread_id, 'agent', { input: input('busy') });
    const queued = await acme.runs.create(thread.thread_id, 'agent', { input: input('queued'), multitaskStrategy: 'enqueue' });
    await expect(acme.runs.delete(thread.thread_id, running.run_id)).rejects.toThrow(/409/);
    await expect(acme.runs.delete(thread.thread_id, queued.run_id)).rejects.toThrow(/409/);
    held.release();
    await acme.runs.join(thread.thread_id, queued.run_id);
    expect((await acme.runs.list(thread.thread_id)).map((r) => r.status)).toEqual(['success', 'success']);
  });
});

describe('runs.cancelMany', () => {
  it('cancels the listed runs of a thread', async () => {
    const held = gate();
    const { acme } = await start(held.options);
    const thread = await acme.threads.create();
    const a = await acme.runs.create(thread.thread_id, 'agent', { input: input('a') });
    const b = await acme.runs.create(thread.thread_id, 'agent', { input: input('b'), multitaskStrategy: 'enqueue' });
    const c = await acme.runs.create(thread.thread_id, 'agent', { input: input('c'), multitaskStrategy: 'enqueue' });
    await acme.runs.cancelMany({ threadId: thread.thread_id, runIds: [a.run_id, b.run_id] });
    expect((await acme.runs.get(thread.thread_id, a.run_id)).status).toBe('interrupted');
    expect((await acme.runs.get(thread.thread_id, b.run_id)).status).toBe('interrupted');
    held.release();
    // The run left out goes on, and runs once the thread is free.
    const values = (await acme.runs.join(thread.thread_id, c.run_id)) as unknown as { messages: Msg[] };
    expect(values.messages.at(-1)?.content).toBe('echo: c');
    expect((await acme.runs.get(thread.thread_id, c.run_id)).status).toBe('success');
  });

  it('cancels every pending run of the tenant by status, and no other tenant’s', async () => {
    const { acme, globex, gw } = await start({ orchestrator: false });
    const t1 = await acme.threads.create();
    const t2 = await acme.threads.create();
    const mine = [
      await acme.runs.create(t1.thread_id, 'agent', { input: input('1') }),
      await acme.runs.create(t2.thread_id, 'agent', { input: input('2') }),
      await acme.runs.create(t2.thread_id, 'agent', { input: input('3'), multitaskStrategy: 'enqueue' }),
    ];
    const other = await globex.threads.create();
    const theirs = await globex.runs.create(other.thread_id, 'agent', { input: input('theirs') });
    await acme.runs.cancelMany({ status: 'pending' });
    for (const r of mine) expect((await acme.runs.get(r.thread_id, r.run_id)).status).toBe('interrupted');
    expect((await globex.runs.get(other.thread_id, theirs.run_id)).status).toBe('pending');
    expect(await gw.store.countActiveRuns('acme')).toBe(0);
    expect((await acme.threads.get(t2.thread_id)).status).toBe('idle');
  });

  it('is a 404 for a run of another tenant or thread, cancelling nothing; 422 without a selection', async () => {
    const { acme, globex, post } = await start({ orchestrator: false });
    const thread = await acme.threads.create();
    const mine = await acme.runs.create(thread.thread_id, 'agent', { input: input('mine') });
    const other = await globex.threads.create();
    const theirs = await globex.runs.create(other.thread_id, 'agent', { input: input('theirs') });
    await expect(acme.runs.cancelMany({ threadId: thread.thread_id, runIds: [mine.run_id, theirs.run_id] })).rejects.toThrow(/404/);
    expect((await acme.runs.get(thread.thread_id, mine.run_id)).status).toBe('pending');
    expect((await globex.runs.get(other.thread_id, theirs.run_id)).status).toBe('pending');
    const none = await post('/runs/cancel', {});
    expect(none.status).toBe(422);
    expect(((await none.json()) as { errors: Array<{ path: string }> }).errors.map((e) => e.path)).toEqual(['body.thread_id']);
    const both = await post('/runs/cancel', { status: 'all', thread_id: thread.thread_id, run_ids: [mine.run_id] });
    expect(((await both.json()) as { errors: Array<{ path: string }> }).errors.map((e) => e.path)).toEqual(['body.status']);
    expect((await post('/runs/cancel?action=explode', { status: 'all' })).status).toBe(422);
  });
});

describe('rollback without checkpoint access', () => {
  it('answers 501 and leaves the run running', async () => {
    const held = gate();
    const { acme } = await start(held.options);
    const thread = await acme.threads.create();
    const run = await acme.runs.create(thread.thread_id, 'agent', { input: input('keep me') });
    await expect(acme.runs.cancel(thread.thread_id, run.run_id, false, 'rollback')).rejects.toThrow(/501/);
    expect((await acme.runs.get(thread.thread_id, run.run_id)).status).not.toBe('interrupted');
    held.release();
    await acme.runs.join(thread.thread_id, run.run_id);
  });
});

describe('runs.joinStream without a thread', () => {
  it('replays a run by its id alone, tenant-scoped', async () => {
    const { acme, globex } = await start();
    const thread = await acme.threads.create();
    const run = await acme.runs.create(thread.thread_id, 'agent', { input: input('by id'), streamMode: ['updates'] });
    await acme.runs.join(thread.thread_id, run.run_id);
    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of acme.runs.joinStream(null, run.run_id)) parts.push({ event: part.event, data: part.data });
    expect(parts.map((p) => p.event)).toEqual(['updates', 'end']);
    expect(parts[0]!.data).toMatchObject({ agent: { messages: [{ content: 'echo: by id' }] } });
    await expect(
      (async () => {
        for await (const _ of globex.runs.joinStream(null, run.run_id)) void _;
      })(),
    ).rejects.toThrow(/404/);
  });
});

describe('on_disconnect', () => {
  it('"cancel": a streamed run is cancelled when its SDK client stops reading', async () => {
    const held = gate();
    const { acme } = await start(held.options);
    const thread = await acme.threads.create();
    const ac = new AbortController();
    let runId: string | undefined;
    const stream = acme.runs.stream(thread.thread_id, 'agent', {
      input: input('leave'),
      onDisconnect: 'cancel',
      signal: ac.signal,
      onRunCreated: (meta) => (runId = meta.run_id),
    });
    // The client reads the run's metadata, then goes away.
    for await (const part of stream) {
      if (part.event === 'metadata') {
        ac.abort();
        break;
      }
    }
    await poll(async () => (runId && (await acme.runs.get(thread.thread_id, runId)).status === 'interrupted' ? true : undefined));
    held.release();
    await acme.runs.join(thread.thread_id, runId!);
    expect((await acme.runs.get(thread.thread_id, runId!)).status).toBe('interrupted');
  });
});

describe('after_seconds', () => {
  it('enqueues the run delayed: it stays pending until its time', async () => {
    const { acme, gw } = await start({ orchestrator: false });
    const thread = await acme.threads.create();
    const run = await acme.runs.create(thread.thread_id, 'agent', { input: input('later'), afterSeconds: 3600 });
    expect(run.status).toBe('pending');
    expect(await gw.runs.getState(run.run_id)).toBe('delayed');
    const now = await acme.runs.create((await acme.threads.create()).thread_id, 'agent', { input: input('now') });
    expect(await gw.runs.getState(now.run_id)).toBe('waiting');
  });
});
