import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { create, RunJobSchema, type RunJob } from '@agentloop/proto';
import { MemoryBus, MemoryRunEventStream } from '@agentloop/bus';
import { MemoryQueue } from '@agentloop/queue';
import { RunLifecycle, createSqliteStore, type Store } from '@agentloop/store';
import { silentLogger } from '@agentloop/core';
import { RunExecutor } from './run-executor.js';
import { ModelRegistry } from './models/registry.js';
import { ScriptedChatModel } from './models/scripted.js';
import { ToolClient } from './tool-client.js';
import { StepGate } from './step-gate.js';

const RUN = 'eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee';
const THREAD = 'ffffffff-ffff-4fff-8fff-ffffffffffff';

/** Polls (no wall-clock threshold: it waits as long as the test's own timeout) until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 5));
}

describe('RunExecutor: a run suspends while its model thinks', () => {
  let store: Store;
  let webhooks: MemoryQueue;
  let events: MemoryRunEventStream;
  let bus: MemoryBus;

  afterEach(async () => {
    vi.restoreAllMocks();
    await Promise.allSettled([webhooks?.close(), events?.close(), bus?.close(), store?.close()]);
  });

  /** A fresh store, thread and run; `executor(graceMs)` builds an executor (a process) on the same store and checkpoints. */
  async function setup(turns: unknown[], opts: { streamMode?: string[]; runId?: string } = {}) {
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    webhooks = new MemoryQueue('webhooks');
    events = new MemoryRunEventStream();
    bus = new MemoryBus();
    const saver = new MemorySaver();
    const executor = (modelSuspendAfterMs: number, modelWaitsInGraph = 0) =>
      new RunExecutor({
        store,
        events,
        webhooks,
        tools: new ToolClient(bus, { callTimeoutMs: 1_000, listTimeoutMs: 100 }),
        models: new ModelRegistry({}, true),
        checkpointer: saver,
        logger: silentLogger(),
        config: {
          maxLoopsDefault: 10,
          runTimeoutMs: 600_000,
          webhookAttempts: 1,
          webhookBackoffMs: 10,
          durability: 'sync',
          modelSuspendAfterMs,
          modelWaitsInGraph,
        },
      });
    const runId = opts.runId ?? RUN;
    await store.createThread({ tenantId: 't1', threadId: THREAD });
    await new RunLifecycle(store).admit({ run: { tenantId: 't1', threadId: THREAD, runId, assistantId: 'agent' }, whenBusy: 'reject' });
    const job: RunJob = create(RunJobSchema, {
      runId,
      threadId: THREAD,
      tenantId: 't1',
      assistantId: 'agent',
      inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'go' }] }),
      configJson: JSON.stringify({ configurable: { model: { provider: 'scripted', turns } } }),
      streamMode: opts.streamMode ?? ['values', 'updates'],
    });
    return { executor, job, saver };
  }

  /** The run's events as a subscriber sees them, ids and ephemeral message ids left out. */
  async function publishedEvents(runId = RUN): Promise<Array<{ event: string; data: unknown }>> {
    const out: Array<{ event: string; data: unknown }> = [];
    for await (const e of events.subscribe(runId)) {
      out.push({ event: e.event, data: JSON.parse(e.dataJson.replace(/"id":"[^"]*"/g, '"id":"-"').replace(/"(tool_call_id|run_id)":"[^"]*"/g, '"$1":"-"')) });
      if (e.event === 'end') break;
    }
    return out;
  }

  const TURNS = (delay: number) => [
    { tool_calls: [{ name: 'todo_read', args: {} }], delay_ms: delay },
    { content: 'done', delay_ms: delay },
  ];

  it('releases its graph and CPU slot while the model thinks, calls the model once per step, and ends with the same events', async () => {
    const { executor, job, saver } = await setup(TURNS(0));
    const firstReads = vi.spyOn(saver, 'getTuple');
    await executor(0).execute(job, 0, new AbortController().signal);
    const unsuspended = await publishedEvents();
    expect(unsuspended.at(-1)).toMatchObject({ event: 'end' });

    const second = await setup(TURNS(150), { runId: '11111111-1111-4111-8111-111111111111' });
    const secondReads = vi.spyOn(second.saver, 'getTuple');
    const generate = vi.spyOn(ScriptedChatModel.prototype, '_generate');
    const ex = second.executor(10);
    const gate = new StepGate(1);
    const lease = await gate.enter('t1');
    const done = ex.execute(second.job, 0, new AbortController().signal, Infinity, lease);
    let sawSuspended = false;
    const watch = setInterval(() => {
      if (ex.suspendedOnModel.count === 1) {
        sawSuspended = true;
        // Suspended: the run holds no slot of the CPU gate.
        expect(gate.busy).toBe(0);
      }
    }, 2);
    await done;
    clearInterval(watch);
    expect(sawSuspended).toBe(true);
    expect(ex.suspendedOnModel.count).toBe(0);
    expect(generate).toHaveBeenCalledTimes(2);
    expect((await store.getRun('t1', second.job.runId))?.status).toBe('success');
    expect(await publishedEvents(second.job.runId)).toEqual(unsuspended);
    // Each resumed stream started from the checkpoint its suspended stream saved last, kept in
    // memory: the suspended run read the saver as often as the unsuspended one.
    expect(secondReads.mock.calls.length).toBe(firstReads.mock.calls.length);
    // The suspensions left nothing in the checkpoints: no error write for the agent tasks they ended.
    const channels: string[] = [];
    for await (const t of second.saver.list({ configurable: { thread_id: `t1:${THREAD}` } })) channels.push(...(t.pendingWrites ?? []).map(([, c]) => c));
    expect(channels).not.toContain('__error__');
  });

  it('with an in-graph wait free, a call past the grace period keeps its graph (no restart) but not its CPU slot', async () => {
    const { executor, job, saver } = await setup(TURNS(100));
    const reads = vi.spyOn(saver, 'getTuple');
    const generate = vi.spyOn(ScriptedChatModel.prototype, '_generate');
    const ex = executor(10, 1);
    const gate = new StepGate(1);
    const lease = await gate.enter('t1');
    let maxSuspended = 0;
    let idleWhileWaiting = false;
    const watch = setInterval(() => {
      maxSuspended = Math.max(maxSuspended, ex.suspendedOnModel.count);
      if (gate.busy === 0) idleWhileWaiting = true;
    }, 2);
    await ex.execute(job, 0, new AbortController().signal, Infinity, lease);
    clearInterval(watch);
    expect(maxSuspended).toBe(0);
    expect(idleWhileWaiting).toBe(true);
    expect(generate).toHaveBeenCalledTimes(2);
    // One stream: its first read and the run's final one, no restart reading the thread again.
    expect(reads.mock.calls.length).toBeLessThanOrEqual(2);
    expect((await store.getRun('t1', RUN))?.status).toBe('success');
  });

  it('does not suspend a call answered within the grace period', async () => {
    const { executor, job } = await setup(TURNS(0));
    const ex = executor(60_000);
    const generate = vi.spyOn(ScriptedChatModel.prototype, '_generate');
    let maxSuspended = 0;
    const watch = setInterval(() => (maxSuspended = Math.max(maxSuspended, ex.suspendedOnModel.count)), 1);
    await ex.execute(job, 0, new AbortController().signal);
    clearInterval(watch);
    expect(maxSuspended).toBe(0);
    expect(generate).toHaveBeenCalledTimes(2);
    expect((await store.getRun('t1', RUN))?.status).toBe('success');
  });

  it('does not suspend a run that streams tokens (its token events come from the graph invocation)', async () => {
    const { executor, job } = await setup(TURNS(100), { streamMode: ['messages-tuple'] });
    const ex = executor(5);
    let maxSuspended = 0;
    const watch = setInterval(() => (maxSuspended = Math.max(maxSuspended, ex.suspendedOnModel.count)), 1);
    await ex.execute(job, 0, new AbortController().signal);
    clearInterval(watch);
    expect(maxSuspended).toBe(0);
    expect((await publishedEvents()).some((e) => e.event === 'messages')).toBe(true);
  });

  it('a cancel while suspended cancels the model call and ends the run', async () => {
    const { executor, job } = await setup(TURNS(600_000));
    const generate = vi.spyOn(ScriptedChatModel.prototype, '_generate');
    const ex = executor(10);
    const done = ex.execute(job, 0, new AbortController().signal);
    await until(() => ex.suspendedOnModel.count === 1);
    expect(ex.cancel(RUN, 'cancelled by the client')).toBe(true);
    await done;
    expect(ex.suspendedOnModel.count).toBe(0);
    expect(generate).toHaveBeenCalledTimes(1);
    // The scripted model's wait was aborted by the run's signal, not left to run out.
    await expect(generate.mock.results[0]?.value).rejects.toThrow(/cancelled by the client/);
    expect((await store.getRun('t1', RUN))?.status).not.toBe('running');
  });

  it('a process that dies while a run is suspended leaves it resumable: the next attempt calls the model again and succeeds', async () => {
    const { executor, job } = await setup(TURNS(0));
    const real = ScriptedChatModel.prototype._generate;
    let calls = 0;
    // The first process's second model call never answers: that process "dies" while suspended on it.
    vi.spyOn(ScriptedChatModel.prototype, '_generate').mockImplementation(function (this: ScriptedChatModel, ...args) {
      return ++calls === 2 ? new Promise(() => undefined) : real.apply(this, args);
    });
    const dying = new AbortController();
    const first = executor(10);
    const firstRun = first.execute(job, 0, dying.signal).catch(() => undefined);
    await until(() => first.suspendedOnModel.count === 1);

    // Another process takes the stalled job over (attempt 1) from the checkpoint the suspension left.
    const second = executor(10);
    await second.execute(job, 1, new AbortController().signal);
    expect(calls).toBe(3);
    expect((await store.getRun('t1', RUN))?.status).toBe('success');
    const values = (await store.getThread('t1', THREAD))?.values as { messages: Array<{ content: unknown }> };
    // human, ai (todo_read), tool, ai: the interrupted step left no write behind.
    expect(values.messages.map((m) => m.content).at(-1)).toBe('done');
    expect(values.messages).toHaveLength(4);
    dying.abort(new Error('process gone'));
    await firstRun;
  });
});
