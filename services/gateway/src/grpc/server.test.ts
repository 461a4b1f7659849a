import { afterEach, describe, expect, it, vi } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { MemoryRunEventStream, type RunEventStream, type RunEventSubscribeOptions, type StoredRunEvent } from '@agentloop/bus';
import type { RunStreamEvent } from '@agentloop/proto';
import { RunLifecycle } from '@agentloop/store';
import { latch, startTestGateway, type TestGateway, type TestGatewayOptions } from '../testing/index.js';
import { AgentLoopGrpcClient, createAgentLoopGrpcClient, startGrpcServer, type AgentLoopClient, type GrpcServer } from './index.js';

let gw: TestGateway | undefined;
let server: GrpcServer | undefined;
let client: AgentLoopClient | undefined;
afterEach(async () => {
  client?.close();
  await server?.close();
  await gw?.close();
  gw = undefined;
  server = undefined;
  client = undefined;
});

/** The test gateway (fake echo orchestrator) plus the gRPC server on a free port and a client of it. */
async function setup(opts: TestGatewayOptions & { apiKey?: string } = {}): Promise<AgentLoopClient> {
  gw = await startTestGateway(opts);
  server = await startGrpcServer({ context: gw.app.agentloop, host: '127.0.0.1', port: 0 });
  client = createAgentLoopGrpcClient(`127.0.0.1:${server.port}`, opts.apiKey === undefined ? {} : { apiKey: opts.apiKey });
  return client;
}

const say = (text: string) => JSON.stringify({ messages: [{ role: 'user', content: text }] });
const lastMessage = (valuesJson: string) => (JSON.parse(valuesJson) as { messages: Array<{ type: string; content: string }> }).messages.at(-1);

/** The rejection of a call, as a grpc-js ServiceError. */
async function failure(p: Promise<unknown>): Promise<grpc.ServiceError> {
  return p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (err: grpc.ServiceError) => err,
  );
}

async function collect(stream: AsyncIterable<RunStreamEvent>): Promise<RunStreamEvent[]> {
  const out: RunStreamEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

describe('threads', () => {
  it('creates a thread and gets it back by id, idle with its metadata', async () => {
    const c = await setup();
    const created = await c.createThread({ metadataJson: JSON.stringify({ project: 'x' }) });
    expect(created.status).toBe('idle');
    const got = await c.getThread({ threadId: created.threadId });
    expect(got.threadId).toBe(created.threadId);
    expect(JSON.parse(got.metadataJson)).toEqual({ project: 'x' });
    expect(got.createdAtMs).toBe(created.createdAtMs);
  });

  it('answers ALREADY_EXISTS for a taken thread id, and the existing thread with if_exists_do_nothing', async () => {
    const c = await setup();
    const t = await c.createThread({});
    const dup = await failure(c.createThread({ threadId: t.threadId }));
    expect(dup.code).toBe(grpc.status.ALREADY_EXISTS);
    expect(dup.details).toContain('if_exists_do_nothing');
    expect((await c.createThread({ threadId: t.threadId, ifExistsDoNothing: true })).threadId).toBe(t.threadId);
  });

  it('rejects metadata that is not a JSON object, naming metadata_json', async () => {
    const c = await setup();
    const err = await failure(c.createThread({ metadataJson: '[1,2]' }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain('metadata_json');
  });

  it('deletes a thread: afterwards it is NOT_FOUND', async () => {
    const c = await setup();
    const t = await c.createThread({});
    await c.deleteThread({ threadId: t.threadId });
    expect((await failure(c.getThread({ threadId: t.threadId }))).code).toBe(grpc.status.NOT_FOUND);
  });

  it('reports the thread state after a run as HTTP /state does', async () => {
    const c = await setup();
    const t = await c.createThread({});
    await c.waitRun({ threadId: t.threadId, inputJson: say('state please') });
    const state = await c.getThreadState({ threadId: t.threadId });
    expect(lastMessage(state.valuesJson)).toMatchObject({ type: 'ai', content: 'echo: state please' });
    expect(state.next).toEqual([]);
    const http = (await gw!.app.inject({ method: 'GET', url: `/threads/${t.threadId}/state` })).json() as { values: unknown; interrupts: unknown };
    expect(JSON.parse(state.valuesJson)).toEqual(http.values);
    expect(JSON.parse(state.interruptsJson)).toEqual(http.interrupts);
  });

  it('answers INVALID_ARGUMENT naming thread_id when it is not a UUID', async () => {
    const c = await setup();
    const err = await failure(c.getThread({ threadId: 'not-a-uuid' }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain('thread_id');
  });
});

describe('runs', () => {
  it('WaitRun returns the echo reply as the final values, with status success and no error', async () => {
    const c = await setup();
    const t = await c.createThread({});
    const reads = vi.spyOn(gw!.store, 'getRunWithThreadValues');
    const result = await c.waitRun({ threadId: t.threadId, inputJson: say('hello there') });
    expect(result.run?.status).toBe('success');
    // The run's end was watched from before its admission: its record is read once, at the end.
    expect(reads).toHaveBeenCalledTimes(1);
    expect(lastMessage(result.valuesJson)).toMatchObject({ type: 'ai', content: 'echo: hello there' });
    expect(result.errorJson).toBe('');
    // The same run over HTTP: one run service.
    const http = await gw!.app.inject({ method: 'GET', url: `/threads/${t.threadId}/runs/${result.run!.runId}` });
    expect(http.json()).toMatchObject({ status: 'success' });
  });

  it('WaitRun of a failed run returns status error and the error, without values', async () => {
    const c = await setup({
      orchestrator: {
        reply: () => {
          throw new TypeError('model exploded');
        },
      },
    });
    const result = await c.waitRun({ inputJson: say('x') });
    expect(result.run?.status).toBe('error');
    expect(JSON.parse(result.errorJson)).toEqual({ error: 'TypeError', message: 'model exploded' });
    expect(result.valuesJson).toBe('');
  });

  it('WaitRun without a thread runs stateless and removes the temporary thread', async () => {
    const c = await setup();
    const result = await c.waitRun({ inputJson: say('once') });
    expect(lastMessage(result.valuesJson)?.content).toBe('echo: once');
    expect((await failure(c.getThread({ threadId: result.run!.threadId }))).code).toBe(grpc.status.NOT_FOUND);
  });

  it('CreateRun with a webhook stores it with the run and hands it to the orchestrator', async () => {
    const c = await setup();
    const t = await c.createThread({});
    const run = await c.createRun({ threadId: t.threadId, inputJson: say('bg'), webhook: 'https://hooks.example.com/agentloop' });
    expect(run.status).toBe('pending');
    expect(JSON.parse(run.kwargsJson)).toMatchObject({ webhook: 'https://hooks.example.com/agentloop' });
    expect((await gw!.store.getRun('default', run.runId))?.kwargs.webhook).toBe('https://hooks.example.com/agentloop');
    const joined = await collect(c.joinRunStream({ threadId: t.threadId, runId: run.runId }));
    expect(joined.at(-1)?.event).toBe('end');
    expect(gw!.orchestrator!.jobs.find((j) => j.runId === run.runId)?.webhookUrl).toBe('https://hooks.example.com/agentloop');
  });

  it('refuses a webhook to an internal address with INVALID_ARGUMENT naming webhook', async () => {
    const c = await setup();
    const err = await failure(c.createRun({ inputJson: say('x'), webhook: 'http://169.254.169.254/latest' }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toMatch(/\bwebhook\b/);
    expect(err.details).not.toContain('body.');
  });

  it('answers INVALID_ARGUMENT naming input_json for input that is not JSON, or not a JSON object', async () => {
    const c = await setup();
    const notJson = await failure(c.waitRun({ inputJson: '{nope' }));
    expect(notJson.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(notJson.details).toContain('input_json');
    const notObject = await failure(c.waitRun({ inputJson: '[1]' }));
    expect(notObject.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(notObject.details).toContain('input_json');
    const badMode = await failure(c.createRun({ inputJson: say('x'), streamMode: ['telepathy'] }));
    expect(badMode.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(badMode.details).toContain('stream_mode');
  });

  it('answers NOT_FOUND for a run on an unknown thread, unless if_not_exists_create', async () => {
    const c = await setup();
    const threadId = '6d1f3c0e-1111-4222-8333-444455556666';
    expect((await failure(c.createRun({ threadId, inputJson: say('x') }))).code).toBe(grpc.status.NOT_FOUND);
    const result = await c.waitRun({ threadId, inputJson: say('made it'), ifNotExistsCreate: true });
    expect(result.run?.threadId).toBe(threadId);
    expect(lastMessage(result.valuesJson)?.content).toBe('echo: made it');
  });

  it('applies the multitask strategy: a busy thread rejects with FAILED_PRECONDITION, enqueue queues behind', async () => {
    const gate = latch();
    const c = await setup({ orchestrator: { gate: () => gate.wait() } });
    const t = await c.createThread({});
    const first = await c.createRun({ threadId: t.threadId, inputJson: say('one') });
    const busy = await failure(c.createRun({ threadId: t.threadId, inputJson: say('two') }));
    expect(busy.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(busy.details).toContain(first.runId);
    const queued = c.waitRun({ threadId: t.threadId, inputJson: say('three'), multitaskStrategy: 'enqueue' });
    gate.open();
    expect(lastMessage((await queued).valuesJson)?.content).toBe('echo: three');
  });

  it('gets a run, lists a thread’s runs newest first with a status filter, and cancels a running run', async () => {
    const gate = latch();
    const c = await setup({ orchestrator: { gate: () => gate.wait() } });
    const t = await c.createThread({});
    const held = await c.createRun({ threadId: t.threadId, inputJson: say('held') });
    expect((await c.getRun({ threadId: t.threadId, runId: held.runId })).runId).toBe(held.runId);
    const cancelled = await c.cancelRun({ threadId: t.threadId, runId: held.runId });
    expect(cancelled.status).toBe('interrupted');
    gate.open();
    const done = await c.waitRun({ threadId: t.threadId, inputJson: say('next') });
    const all = await c.listRuns({ threadId: t.threadId });
    expect(all.runs.map((r) => r.runId)).toEqual([done.run!.runId, held.runId]);
    const interrupted = await c.listRuns({ threadId: t.threadId, status: 'interrupted' });
    expect(interrupted.runs.map((r) => r.runId)).toEqual([held.runId]);
    const again = await failure(c.cancelRun({ threadId: t.threadId, runId: done.run!.runId }));
    expect(again.code).toBe(grpc.status.FAILED_PRECONDITION);
  });

  it('lists dead-lettered runs with their reason and re-drives one (FAILED_PRECONDITION otherwise), as HTTP does', async () => {
    const c = await setup({ orchestrator: false });
    const t = await c.createThread({});
    const run = await c.createRun({ threadId: t.threadId, inputJson: say('poison') });
    expect((await failure(c.redriveRun({ threadId: t.threadId, runId: run.runId }))).code).toBe(grpc.status.FAILED_PRECONDITION);
    expect((await c.listDeadLetterRuns({})).runs).toEqual([]);
    // The sweeper's transition (the queue failed the run's job: its worker kept dying).
    await new RunLifecycle(gw!.store).deadLetter({ tenantId: 'default', runId: run.runId, reason: 'its worker died 2 times' });
    const [listed] = (await c.listDeadLetterRuns({ limit: 5 })).runs;
    expect(listed).toMatchObject({ runId: run.runId, status: 'error', deadLetter: { reason: 'its worker died 2 times' } });
    expect(Number(listed!.deadLetter!.deadLetteredAtMs)).toBeGreaterThan(0);
    const redriven = await c.redriveRun({ threadId: t.threadId, runId: run.runId });
    expect(redriven).toMatchObject({ runId: run.runId, status: 'pending' });
    expect(redriven.deadLetter).toBeUndefined();
    expect((await c.listDeadLetterRuns({})).runs).toEqual([]);
    expect((await failure(c.listDeadLetterRuns({ limit: 5000 }))).details).toContain('limit');
  });

  it('rejects a ListRuns limit out of range, naming limit', async () => {
    const c = await setup();
    const t = await c.createThread({});
    const err = await failure(c.listRuns({ threadId: t.threadId, limit: 5000 }));
    expect(err.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(err.details).toContain('limit');
  });

  it('WaitRun past the call deadline answers DEADLINE_EXCEEDED and the run goes on', async () => {
    const gate = latch();
    const c = await setup({ orchestrator: { gate: () => gate.wait() } });
    const t = await c.createThread({});
    const err = await failure(c.waitRun({ threadId: t.threadId, inputJson: say('slow') }, { timeoutMs: 300 }));
    expect(err.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    const [run] = (await c.listRuns({ threadId: t.threadId })).runs;
    expect(['pending', 'running']).toContain(run?.status);
    gate.open();
    const joined = await collect(c.joinRunStream({ threadId: t.threadId, runId: run!.runId }));
    expect(joined.at(-1)?.event).toBe('end');
    expect((await c.getRun({ threadId: t.threadId, runId: run!.runId })).status).toBe('success');
  });
});

describe('streams', () => {
  it('StreamRun yields metadata, the values events with increasing ids, then end (as the SSE stream)', async () => {
    const c = await setup();
    const t = await c.createThread({});
    const events = await collect(c.streamRun({ threadId: t.threadId, inputJson: say('s') }));
    expect(events.map((e) => e.event)).toEqual(['metadata', 'values', 'values', 'end']);
    const meta = JSON.parse(events[0]!.dataJson) as { run_id: string; thread_id: string; attempt: number };
    expect(meta).toMatchObject({ thread_id: t.threadId, attempt: 1 });
    expect(events[0]!.id).toBe(0n);
    const ids = events.slice(1).map((e) => e.id);
    expect(ids.every((id, i) => id > 0n && (i === 0 || id > ids[i - 1]!))).toBe(true);
    expect(lastMessage(events[2]!.dataJson)?.content).toBe('echo: s');
    expect(events.at(-1)!.dataJson).toBe('null');
  });

  it('StreamRun sends only the requested modes (plus error and end)', async () => {
    const c = await setup();
    const events = await collect(c.streamRun({ inputJson: say('u'), streamMode: ['updates'] }));
    expect(events.map((e) => e.event)).toEqual(['metadata', 'updates', 'end']);
  });

  it('JoinRunStream after an event id replays exactly the events after it, ending with end', async () => {
    const c = await setup();
    const t = await c.createThread({});
    const all = await collect(c.streamRun({ threadId: t.threadId, inputJson: say('j'), streamMode: ['values', 'updates'] }));
    const runId = (JSON.parse(all[0]!.dataJson) as { run_id: string }).run_id;
    const firstValues = all.find((e) => e.event === 'values')!;
    const rest = await collect(c.joinRunStream({ threadId: t.threadId, runId, afterEventId: firstValues.id }));
    // Without stream_mode the join uses the modes the run was created with, like HTTP.
    expect(rest.map((e) => [e.id, e.event])).toEqual(all.filter((e) => e.id > firstValues.id).map((e) => [e.id, e.event]));
    expect(rest.at(-1)?.event).toBe('end');
  });

  it('JoinRunStream of an unknown run is NOT_FOUND', async () => {
    const c = await setup();
    const t = await c.createThread({});
    const err = await failure(collect(c.joinRunStream({ threadId: t.threadId, runId: '6d1f3c0e-1111-4222-8333-444455556666' })));
    expect(err.code).toBe(grpc.status.NOT_FOUND);
  });

  it('a client that cancels a stream mid-way stops the server reading events, and the server goes on serving', async () => {
    const counting = new CountingEvents(new MemoryRunEventStream());
    const gate = latch();
    const c = await setup({ events: counting, orchestrator: { gate: () => gate.wait() } });
    const t = await c.createThread({});
    const call = c.streamRun({ threadId: t.threadId, inputJson: say('cancel me') });
    const ended = new Promise<grpc.ServiceError>((resolve) => call.on('error', resolve));
    const first = await new Promise<RunStreamEvent>((resolve) => call.once('data', resolve));
    expect(first.event).toBe('metadata');
    await counting.opened;
    call.cancel();
    expect((await ended).code).toBe(grpc.status.CANCELLED);
    await counting.allClosed();
    gate.open();
    const other = await c.createThread({});
    const result = await c.waitRun({ threadId: other.threadId, inputJson: say('still here') });
    expect(lastMessage(result.valuesJson)?.content).toBe('echo: still here');
  });

  it('closing the server ends open streams with UNAVAILABLE so clients re-join elsewhere', async () => {
    const gate = latch();
    const c = await setup({ orchestrator: { gate: () => gate.wait() } });
    const call = c.streamRun({ inputJson: say('held') });
    const ended = new Promise<grpc.ServiceError>((resolve) => call.on('error', resolve));
    await new Promise<void>((resolve) => call.once('data', () => resolve()));
    call.on('data', () => undefined);
    await server!.close();
    const err = await ended;
    gate.open();
    expect(err.code).toBe(grpc.status.UNAVAILABLE);
    expect(err.details).toContain('re-join');
  });
});

describe('authentication and tenants', () => {
  const keys = { AGENTLOOP_API_KEYS: 'key-a:acme,key-b:globex' };

  it('answers UNAUTHENTICATED without a key and with an unknown key', async () => {
    await setup({ env: keys });
    const anonymous = createAgentLoopGrpcClient(`127.0.0.1:${server!.port}`);
    try {
      const none = await failure(anonymous.createThread({}));
      expect(none.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(none.details).toContain('x-api-key');
      const wrong = await failure(anonymous.createThread({}, { apiKey: 'nope' }));
      expect(wrong.code).toBe(grpc.status.UNAUTHENTICATED);
      const stream = await failure(collect(anonymous.streamRun({ inputJson: say('x') })));
      expect(stream.code).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      anonymous.close();
    }
  });

  it('accepts the key as x-api-key or as authorization: Bearer', async () => {
    const c = await setup({ env: keys, apiKey: 'key-a' });
    const t = await c.createThread({});
    const bearer = await c.getThread({ threadId: t.threadId }, { apiKey: '', metadata: { authorization: 'Bearer key-a' } });
    expect(bearer.threadId).toBe(t.threadId);
  });

  it('keeps tenants apart: tenant B gets NOT_FOUND for tenant A’s thread, runs and streams', async () => {
    const a = await setup({ env: keys, apiKey: 'key-a' });
    const t = await a.createThread({});
    const done = await a.waitRun({ threadId: t.threadId, inputJson: say('private') });
    const b = createAgentLoopGrpcClient(`127.0.0.1:${server!.port}`, { apiKey: 'key-b' });
    try {
      expect((await failure(b.getThread({ threadId: t.threadId }))).code).toBe(grpc.status.NOT_FOUND);
      expect((await failure(b.getThreadState({ threadId: t.threadId }))).code).toBe(grpc.status.NOT_FOUND);
      expect((await failure(b.getRun({ threadId: t.threadId, runId: done.run!.runId }))).code).toBe(grpc.status.NOT_FOUND);
      expect((await failure(b.listRuns({ threadId: t.threadId }))).code).toBe(grpc.status.NOT_FOUND);
      expect((await failure(b.createRun({ threadId: t.threadId, inputJson: say('intrude') }))).code).toBe(grpc.status.NOT_FOUND);
      expect((await failure(collect(b.joinRunStream({ threadId: t.threadId, runId: done.run!.runId })))).code).toBe(grpc.status.NOT_FOUND);
      expect((await failure(b.deleteThread({ threadId: t.threadId }))).code).toBe(grpc.status.NOT_FOUND);
    } finally {
      b.close();
    }
    expect((await a.getThread({ threadId: t.threadId })).threadId).toBe(t.threadId);
  });
});

describe('raw grpc-js client', () => {
  it('the untyped generic client constructor calls the same service by method name', async () => {
    await setup();
    const raw = new AgentLoopGrpcClient(`127.0.0.1:${server!.port}`, grpc.credentials.createInsecure()) as unknown as grpc.Client & {
      createThread(req: object, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res: { threadId: string }) => void): void;
    };
    try {
      const t = await new Promise<{ threadId: string }>((resolve, reject) =>
        raw.createThread({}, new grpc.Metadata(), (err, res) => (err ? reject(err) : resolve(res))),
      );
      expect((await client!.getThread({ threadId: t.threadId })).threadId).toBe(t.threadId);
    } finally {
      raw.close();
    }
  });
});

/** A RunEventStream decorator that tracks open subscriptions (to see the server stop reading). */
class CountingEvents implements RunEventStream {
  private active = 0;
  private readonly waiters = new Set<() => void>();
  private openedOnce!: () => void;
  /** Resolves once a subscription has opened. */
  readonly opened = new Promise<void>((resolve) => (this.openedOnce = resolve));
  constructor(private readonly inner: RunEventStream) {}

  /** Resolves once no subscription is open. */
  allClosed(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.add(resolve));
  }

  publish(runId: string, threadId: string, event: string, data: unknown): Promise<number> {
    return this.inner.publish(runId, threadId, event, data);
  }
  async *subscribe(runId: string, opts?: RunEventSubscribeOptions): AsyncGenerator<StoredRunEvent> {
    this.active += 1;
    this.openedOnce();
    try {
      yield* this.inner.subscribe(runId, opts);
    } finally {
      this.active -= 1;
      if (this.active === 0) for (const w of this.waiters) w();
      if (this.active === 0) this.waiters.clear();
    }
  }
  purge(runId: string): Promise<void> {
    return this.inner.purge(runId);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
