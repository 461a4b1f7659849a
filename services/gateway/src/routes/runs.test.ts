import { afterEach, describe, expect, it, vi } from 'vitest';
import { latch, startTestGateway, type TestGateway } from '../testing/index.js';
import { DEFAULT_ASSISTANT_ID } from '../serialize.js';
import { RunLifecycle } from '@agentloop/store';

let gw: TestGateway;
afterEach(async () => gw.close());

const UNKNOWN = '00000000-0000-4000-8000-000000000000';
const hi = (text = 'hi') => ({ messages: [{ role: 'user', content: text }] });

async function newThread(): Promise<string> {
  const res = await gw.app.inject({ method: 'POST', url: '/threads', payload: {} });
  return res.json().thread_id as string;
}

describe('POST /threads/{id}/runs', () => {
  it('gives runs, and the temporary thread of a stateless run, UUIDv7 ids in creation order, as the LangGraph server does', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const tid = await newThread();
    const runs: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await gw.app.inject({
        method: 'POST',
        url: `/threads/${tid}/runs`,
        payload: { assistant_id: 'agent', input: hi(), multitask_strategy: 'enqueue' },
      });
      expect(res.statusCode).toBe(200);
      runs.push(res.json().run_id as string);
    }
    const stateless = (await gw.app.inject({ method: 'POST', url: '/runs', payload: { assistant_id: 'agent', input: hi() } })).json();
    expect([tid, ...runs, stateless.run_id, stateless.thread_id].every((id) => v7.test(id))).toBe(true);
    expect([...runs].sort()).toEqual(runs);
    expect(stateless.run_id > runs[4]!).toBe(true);
  });

  it('stamps graph_id and assistant_id into the metadata of a thread made with POST /threads, as LangGraph does', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const res0 = await gw.app.inject({ method: 'POST', url: '/threads', payload: { metadata: { owner: 'ann', graph_id: 'other' } } });
    const tid = res0.json().thread_id as string;
    const search = async () =>
      (await gw.app.inject({ method: 'POST', url: '/threads/search', payload: { metadata: { graph_id: 'agent' } } }))
        .json()
        .map((t: { thread_id: string }) => t.thread_id);
    expect(await search()).not.toContain(tid);
    expect((await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi() } })).statusCode).toBe(200);
    const thread = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}` })).json();
    expect(thread.metadata).toEqual({ owner: 'ann', graph_id: 'agent', assistant_id: DEFAULT_ASSISTANT_ID });
    expect(await search()).toEqual([tid]);
  });

  it('stores a pending run, enqueues its RunJob and answers the Run with Content-Location', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const res = await gw.app.inject({
      method: 'POST',
      url: `/threads/${tid}/runs`,
      payload: {
        assistant_id: 'agent',
        input: hi(),
        config: { configurable: { model: 'reasoning', other: [1] } },
        metadata: { source: 'test' },
        stream_mode: 'updates',
        webhook: 'https://hooks.example.com/hook',
        interrupt_before: ['tools'],
      },
    });
    expect(res.statusCode).toBe(200);
    const run = res.json();
    expect(run).toMatchObject({
      thread_id: tid,
      assistant_id: DEFAULT_ASSISTANT_ID,
      status: 'pending',
      metadata: { source: 'test' },
      multitask_strategy: 'reject',
      kwargs: { input: hi(), interrupt_before: ['tools'], stream_mode: ['updates'] },
    });
    expect(res.headers['content-location']).toBe(`/threads/${tid}/runs/${run.run_id}`);
    expect(await gw.runs.getState(run.run_id)).toBe('waiting');
  });

  it('hands the orchestrator a RunJob with config.configurable unchanged, the webhook and the stream modes', async () => {
    const done = latch();
    gw = await startTestGateway({ orchestrator: { gate: async () => done.open() } });
    const tid = await newThread();
    const config = { configurable: { model: 'reasoning', nested: { a: 1 } }, recursion_limit: 50 };
    await gw.app.inject({
      method: 'POST',
      url: `/threads/${tid}/runs`,
      payload: { assistant_id: 'agent', input: hi(), config, stream_mode: ['values', 'updates'], webhook: 'https://example.com/h' },
    });
    await done.wait();
    const job = gw.orchestrator!.jobs[0]!;
    expect(JSON.parse(job.configJson)).toEqual(config);
    expect(JSON.parse(job.inputJson)).toEqual(hi());
    expect(job.webhookUrl).toBe('https://example.com/h');
    expect(job.streamMode).toEqual(['values', 'updates']);
    expect(job.tenantId).toBe('default');
    expect(job.ephemeral).toBe(false);
  });

  it('is a 404 for an unknown thread', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${UNKNOWN}/runs`, payload: { assistant_id: 'agent', input: hi() } });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain(UNKNOWN);
  });

  it('creates the thread when if_not_exists is "create"', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const res = await gw.app.inject({
      method: 'POST',
      url: `/threads/${UNKNOWN}/runs`,
      payload: { assistant_id: 'agent', input: hi(), if_not_exists: 'create' },
    });
    expect(res.statusCode).toBe(200);
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${UNKNOWN}` })).statusCode).toBe(200);
  });

  it('is a 422 naming body.assistant_id when it is missing', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { input: hi() } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.map((e: { path: string }) => e.path)).toEqual(['body.assistant_id']);
  });

  it('is a 422 naming body.stream_mode for an unknown mode and body.webhook for a bad URL', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const res = await gw.app.inject({
      method: 'POST',
      url: `/threads/${tid}/runs`,
      payload: { assistant_id: 'agent', stream_mode: 'everything', webhook: 'not a url' },
    });
    expect(res.statusCode).toBe(422);
    expect(
      res
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['body.stream_mode', 'body.webhook']);
  });

  it('is a 422 for an unknown multitask strategy', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', multitask_strategy: 'replace' } });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].path).toBe('body.multitask_strategy');
  });

  it('is a 404 for an unknown assistant', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'ghost', input: hi() } });
    expect(res.statusCode).toBe(404);
    expect(res.json().detail).toContain('ghost');
  });

  it('rejects a second run on a busy thread with 409 (multitask_strategy reject)', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const first = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi() } });
    const second = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi() } });
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(409);
    expect(second.json().detail).toContain(first.json().run_id);
  });

  it('starts an enqueued run only after the earlier run on the thread finished', async () => {
    const gate = latch();
    gw = await startTestGateway({ orchestrator: { gate: () => gate.wait() } });
    const tid = await newThread();
    const first = (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi('one') } })).json();
    const second = await gw.app.inject({
      method: 'POST',
      url: `/threads/${tid}/runs`,
      payload: { assistant_id: 'agent', input: hi('two'), multitask_strategy: 'enqueue' },
    });
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ status: 'pending', multitask_strategy: 'enqueue' });
    expect(await gw.runs.getState(second.json().run_id)).toBe('unknown');
    gate.open();
    const joined = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${second.json().run_id}/join` });
    expect(gw.orchestrator!.jobs.map((j) => j.runId)).toEqual([first.run_id, second.json().run_id]);
    expect(joined.json().messages.map((m: { content: string }) => m.content)).toEqual(['one', 'echo: one', 'two', 'echo: two']);
  });
  it('two gateway replicas over one store racing on one thread: the store admits one; enqueued runs all run, one at a time, once', async () => {
    const gate = latch();
    gw = await startTestGateway({ orchestrator: { gate: () => gate.wait() } });
    // A second gateway (its own RunService: no lock in memory shared with the first) over the same store and queue.
    const replica = await startTestGateway({ orchestrator: false, events: gw.events, shared: { store: gw.store, runs: gw.runs, webhooks: gw.webhooks } });
    try {
      const tid = await newThread();
      const post = (app: TestGateway['app'], text: string, strategy: string) =>
        app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi(text), multitask_strategy: strategy } });
      const rejects = await Promise.all(Array.from({ length: 8 }, (_, i) => post(i % 2 ? replica.app : gw!.app, `r${i}`, 'reject')));
      expect(rejects.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
      const enqueued = await Promise.all(Array.from({ length: 6 }, (_, i) => post(i % 2 ? replica.app : gw!.app, `e${i}`, 'enqueue')));
      expect(enqueued.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(enqueued.every((r) => r.json().status === 'pending')).toBe(true);
      gate.open();
      const last = enqueued.map((r) => r.json().run_id as string);
      for (const id of last) await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${id}/join` });
      const runs = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs?limit=100` })).json() as Array<{ status: string }>;
      expect(runs.map((r) => r.status)).toEqual(Array(7).fill('success'));
      // Each run's job taken once; each answered on the thread once.
      expect(new Set(gw.orchestrator!.jobs.map((j) => j.runId)).size).toBe(7);
      expect(gw.orchestrator!.jobs).toHaveLength(7);
      const thread = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}` })).json();
      expect(thread.status).toBe('idle');
      expect((thread.values.messages as Array<{ content: string }>).filter((m) => m.content.startsWith('echo: '))).toHaveLength(7);
    } finally {
      await replica.close();
    }
  });
});

describe('runs: wait, join, get, list', () => {
  it('POST /threads/{id}/runs/wait returns the final thread values', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/wait`, payload: { assistant_id: 'agent', input: hi('hello') } });
    expect(res.statusCode).toBe(200);
    expect(res.json().messages.map((m: { type: string; content: string }) => [m.type, m.content])).toEqual([
      ['human', 'hello'],
      ['ai', 'echo: hello'],
    ]);
    expect(res.headers['content-location']).toMatch(new RegExp(`^/threads/${tid}/runs/[0-9a-f-]{36}$`));
  });

  it('POST /threads/{id}/runs/wait and /runs/wait read the run record once, at its end (the end watch is live since admission)', async () => {
    gw = await startTestGateway();
    const reads = vi.spyOn(gw.store, 'getRunWithThreadValues');
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/wait`, payload: { assistant_id: 'agent', input: hi('one') } });
    expect(res.json().messages.at(-1).content).toBe('echo: one');
    expect(reads).toHaveBeenCalledTimes(1);
    const stateless = await gw.app.inject({ method: 'POST', url: '/runs/wait', payload: { assistant_id: 'agent', input: hi('two') } });
    expect(stateless.json().messages.at(-1).content).toBe('echo: two');
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('POST /threads/{id}/runs/wait answers {__error__} when the run fails', async () => {
    gw = await startTestGateway({
      orchestrator: {
        reply: () => {
          const e = new Error('model exploded');
          e.name = 'ModelError';
          throw e;
        },
      },
    });
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/wait`, payload: { assistant_id: 'agent', input: hi() } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ __error__: { error: 'ModelError', message: 'model exploded' } });
  });

  it('GET .../join waits for a running run and returns the thread values', async () => {
    const gate = latch();
    gw = await startTestGateway({ orchestrator: { gate: () => gate.wait() } });
    const tid = await newThread();
    const run = (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi('x') } })).json();
    const joining = gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${run.run_id}/join` });
    gate.open();
    const res = await joining;
    expect(res.json().messages.at(-1)).toMatchObject({ type: 'ai', content: 'echo: x' });
  });

  it('GET .../join of a finished run returns at once', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/wait`, payload: { assistant_id: 'agent', input: hi('y') } });
    const [run] = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs` })).json();
    await gw.events.purge(run.run_id); // no event left to wait for: the Store says it is done
    const res = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${run.run_id}/join` });
    expect(res.json().messages.at(-1).content).toBe('echo: y');
  });

  it('GET .../join answers 408 when the run outlives RUN_WAIT_MAX_MS', async () => {
    gw = await startTestGateway({ orchestrator: false, env: { RUN_WAIT_MAX_MS: '50' } });
    const tid = await newThread();
    const run = (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi() } })).json();
    const res = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${run.run_id}/join` });
    expect(res.statusCode).toBe(408);
    expect(res.json().detail).toContain(`/threads/${tid}/runs/${run.run_id}/join`);
  });

  it('GET /threads/{id}/runs/{run_id} returns the run with its final status', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    const created = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/wait`, payload: { assistant_id: 'agent', input: hi() } });
    const runPath = created.headers['content-location'] as string;
    const res = await gw.app.inject({ method: 'GET', url: runPath });
    expect(res.json()).toMatchObject({ thread_id: tid, status: 'success' });
  });

  it('GET a run through another thread, or an unknown run, is a 404', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const other = await newThread();
    const run = (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent' } })).json();
    const wrongThread = await gw.app.inject({ method: 'GET', url: `/threads/${other}/runs/${run.run_id}` });
    const unknown = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${UNKNOWN}` });
    const unknownJoin = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${UNKNOWN}/join` });
    expect([wrongThread.statusCode, unknown.statusCode, unknownJoin.statusCode]).toEqual([404, 404, 404]);
  });

  it('GET /threads/{id}/runs lists the thread runs, filtered by status', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/wait`, payload: { assistant_id: 'agent', input: hi() } });
    await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/wait`, payload: { assistant_id: 'agent', input: hi() } });
    const all = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs?limit=10&offset=0` });
    const pending = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs?status=pending` });
    expect(all.json()).toHaveLength(2);
    expect(pending.json()).toEqual([]);
  });

  it('GET /threads/{id}/runs is a 404 for an unknown thread and a 422 for a bad limit', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${UNKNOWN}/runs` })).statusCode).toBe(404);
    const bad = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs?limit=0` });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('query.limit');
  });

  it('GET /threads/{id}/state returns the values written by the last run', async () => {
    gw = await startTestGateway();
    const tid = await newThread();
    await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/wait`, payload: { assistant_id: 'agent', input: hi('s') } });
    const state = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}/state` })).json();
    const thread = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}` })).json();
    expect(state.values.messages.at(-1).content).toBe('echo: s');
    expect(thread).toMatchObject({ status: 'idle', values: state.values });
  });
});

describe('stateless runs', () => {
  it('POST /runs/wait returns the values, runs with ephemeral=true and deletes the temporary thread', async () => {
    gw = await startTestGateway();
    const res = await gw.app.inject({ method: 'POST', url: '/runs/wait', payload: { assistant_id: 'agent', input: hi('tmp') } });
    expect(res.json().messages.at(-1).content).toBe('echo: tmp');
    const job = gw.orchestrator!.jobs[0]!;
    expect(job.ephemeral).toBe(true);
    expect(await gw.store.getThread('default', job.threadId)).toBeUndefined();
  });

  it('POST /runs/wait is a 422 without assistant_id', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const res = await gw.app.inject({ method: 'POST', url: '/runs/wait', payload: {} });
    expect(res.statusCode).toBe(422);
  });

  it('POST /runs starts a background stateless run', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const res = await gw.app.inject({ method: 'POST', url: '/runs', payload: { assistant_id: 'agent', input: hi() } });
    expect(res.json()).toMatchObject({ status: 'pending', assistant_id: DEFAULT_ASSISTANT_ID });
    expect(await gw.runs.getState(res.json().run_id)).toBe('waiting');
  });
});

describe('issue 18: resume, disconnect, caller identity', () => {
  it('answers 409 to a resume when the thread has nothing to resume, and starts no run', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', command: { resume: 'approve' } } });
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toMatch(/no pending interrupt to resume/);
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs` })).json()).toEqual([]);
  });

  it('accepts a resume on an interrupted thread', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    // A run that stopped for a human leaves its thread interrupted.
    const lifecycle = new RunLifecycle(gw.store);
    await lifecycle.admit({ run: { runId: 'run-that-asked', threadId: tid, tenantId: 'default', assistantId: 'agent' }, whenBusy: 'reject' });
    await lifecycle.end({ tenantId: 'default', runId: 'run-that-asked', status: 'success', waitsForHuman: true, cause: 'finished' });
    const res = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', command: { resume: 'approve' } } });
    expect(res.statusCode).toBe(200);
  });

  it('cancels a streamed run whose client disconnects when it asked on_disconnect: cancel', async () => {
    const gate = latch();
    gw = await startTestGateway({ orchestrator: { gate: () => gate.wait() } });
    const tid = await newThread();
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = gw.app.server.address() as { port: number };
    const ac = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/threads/${tid}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', input: hi(), on_disconnect: 'cancel' }),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await reader.read(); // the metadata event: the run exists
    ac.abort();
    let runs: Array<{ status: string }> = [];
    for (let i = 0; i < 100; i++) {
      runs = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs` })).json();
      if (runs[0]?.status === 'interrupted') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    gate.open();
    expect(runs[0]?.status).toBe('interrupted');
  });

  it('does not cancel an on_disconnect: cancel run when the server ends the stream (wait limit), only when the client leaves', async () => {
    const gate = latch();
    gw = await startTestGateway({ env: { RUN_WAIT_MAX_MS: '300' }, orchestrator: { gate: () => gate.wait() } });
    const tid = await newThread();
    const res = await gw.app.inject({
      method: 'POST',
      url: `/threads/${tid}/runs/stream`,
      payload: { assistant_id: 'agent', input: hi(), on_disconnect: 'cancel' },
    });
    expect(res.statusCode).toBe(200);
    const run = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs` })).json()[0];
    expect(run.status).toBe('running');
    gate.open();
  });

  it('lets a streamed run go on when its client disconnects by default (on_disconnect: continue)', async () => {
    const gate = latch();
    gw = await startTestGateway({ orchestrator: { gate: () => gate.wait() } });
    const tid = await newThread();
    await gw.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = gw.app.server.address() as { port: number };
    const ac = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/threads/${tid}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'agent', input: hi() }),
      signal: ac.signal,
    });
    await res.body!.getReader().read();
    ac.abort();
    await new Promise((r) => setTimeout(r, 300));
    gate.open();
    const run = (await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs` })).json()[0];
    const joined = await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${run.run_id}/join` });
    expect(joined.statusCode).toBe(200);
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${run.run_id}` })).json().status).toBe('success');
  });

  it('puts the id of the API key that submitted a run on its RunJob, never the key', async () => {
    const done = latch();
    gw = await startTestGateway({ env: { AGENTLOOP_API_KEYS: 'secret-key-a:tenantA' }, orchestrator: { gate: async () => done.open() } });
    const headers = { 'x-api-key': 'secret-key-a' };
    const tid = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {}, headers })).json().thread_id as string;
    await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi() }, headers });
    await done.wait();
    const job = gw.orchestrator!.jobs[0]!;
    expect(job.apiKeyId).toMatch(/^key_[0-9a-f]{12}$/);
    expect(JSON.stringify(job, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain('secret-key-a');
  });
});

describe('dead letter: GET /runs/dead-letter, POST /threads/{id}/runs/{run_id}/redrive', () => {
  it('lists a dead-lettered run with its reason, re-drives it once (a new job, pending again), 409 otherwise', async () => {
    gw = await startTestGateway({ orchestrator: false });
    const tid = await newThread();
    const run = (await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs`, payload: { assistant_id: 'agent', input: hi() } })).json();
    // Not dead-lettered (pending): 409.
    expect((await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/${run.run_id}/redrive` })).statusCode).toBe(409);
    expect((await gw.app.inject({ method: 'GET', url: '/runs/dead-letter' })).json()).toEqual([]);
    // The sweeper's transition (the queue failed its job: its worker kept dying).
    await new RunLifecycle(gw.store).deadLetter({ tenantId: 'default', runId: run.run_id, reason: 'its worker died 2 times' });
    const listed = await gw.app.inject({ method: 'GET', url: '/runs/dead-letter?limit=5&offset=0' });
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toMatchObject([
      { run_id: run.run_id, status: 'error', dead_letter: { reason: 'its worker died 2 times', dead_lettered_at: expect.any(String) } },
    ]);
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${tid}/runs/${run.run_id}` })).json()).toMatchObject({
      status: 'error',
      dead_letter: { reason: 'its worker died 2 times' },
    });
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${tid}` })).json()).toMatchObject({ status: 'error' });

    const redriven = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/${run.run_id}/redrive` });
    expect(redriven.statusCode).toBe(202);
    expect(redriven.json()).toMatchObject({ run_id: run.run_id, status: 'pending' });
    expect(redriven.json().dead_letter).toBeUndefined();
    expect(await gw.runs.getState(`${run.run_id}-redrive-1`)).toBe('waiting');
    expect((await gw.app.inject({ method: 'GET', url: `/threads/${tid}` })).json()).toMatchObject({ status: 'busy' });
    expect((await gw.app.inject({ method: 'GET', url: '/runs/dead-letter' })).json()).toEqual([]);
    const again = await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/${run.run_id}/redrive` });
    expect(again.statusCode).toBe(409);
    expect(JSON.stringify(again.json())).toMatch(/not dead-lettered/);
    expect((await gw.app.inject({ method: 'POST', url: `/threads/${tid}/runs/${UNKNOWN}/redrive` })).statusCode).toBe(404);
  });
});
