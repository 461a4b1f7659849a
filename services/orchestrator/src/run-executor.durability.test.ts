import { afterEach, describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import type { RunnableConfig } from '@langchain/core/runnables';
import { create, RunJobSchema, toBinary, type RunJob } from '@agentloop/proto';
import { MemoryBus, MemoryRunEventStream } from '@agentloop/bus';
import { MemoryQueue, ReleaseJobError, UnrecoverableJobError } from '@agentloop/queue';
import { RunLifecycle, createSqliteStore, type Store } from '@agentloop/store';
import { UnavailableError, silentLogger } from '@agentloop/core';
import { RunExecutor } from './run-executor.js';
import { runJobHandler } from './handlers/run-job.js';
import { sweepOrphanedRuns } from './sweeper.js';
import { ModelRegistry } from './models/registry.js';
import { ToolClient } from './tool-client.js';

const RUN = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
const THREAD = 'dddddddd-dddd-4ddd-8ddd-dddddddddddd';
const never = new AbortController().signal;

/** A MemorySaver whose puts fail the way mysql2 does while MariaDB restarts: put number `failAt` (1-based), or all from it. */
class FlakySaver extends MemorySaver {
  failAt = 0;
  failAll = false;
  puts = 0;
  override async put(...args: Parameters<MemorySaver['put']>): Promise<RunnableConfig> {
    this.puts++;
    if (this.puts === this.failAt || (this.failAll && this.puts >= this.failAt)) {
      throw Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST' });
    }
    return super.put(...args);
  }
}

/** Run events whose next `failEnd` publishes of `end` fail as JetStream does while NATS restarts. */
class FlakyEvents extends MemoryRunEventStream {
  failEnd = 0;
  override async publish(runId: string, threadId: string, event: string, data: unknown): Promise<number> {
    if (event === 'end' && this.failEnd > 0) {
      this.failEnd--;
      throw new UnavailableError('Could not publish the "end" event: timeout');
    }
    return super.publish(runId, threadId, event, data);
  }
}

describe('RunExecutor durability', () => {
  let store: Store;
  let webhooks: MemoryQueue;
  let events: FlakyEvents;
  let bus: MemoryBus;

  afterEach(async () => {
    await Promise.allSettled([webhooks?.close(), events?.close(), bus?.close(), store?.close()]);
  });

  async function setup(turns: unknown[], saver = new FlakySaver()) {
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    webhooks = new MemoryQueue('webhooks');
    events = new FlakyEvents();
    bus = new MemoryBus();
    const executor = () =>
      new RunExecutor({
        store,
        events,
        webhooks,
        tools: new ToolClient(bus, { callTimeoutMs: 1_000, listTimeoutMs: 100 }),
        models: new ModelRegistry({}, true),
        checkpointer: saver,
        logger: silentLogger(),
        config: { maxLoopsDefault: 10, runTimeoutMs: 60_000, webhookAttempts: 1, webhookBackoffMs: 10, durability: 'sync' },
      });
    await store.createThread({ tenantId: 't1', threadId: THREAD });
    await new RunLifecycle(store).admit({ run: { tenantId: 't1', threadId: THREAD, runId: RUN, assistantId: 'agent' }, whenBusy: 'reject' });
    const job: RunJob = create(RunJobSchema, {
      runId: RUN,
      threadId: THREAD,
      tenantId: 't1',
      assistantId: 'agent',
      inputJson: JSON.stringify({ messages: [{ role: 'user', content: 'go' }] }),
      configJson: JSON.stringify({ configurable: { model: { provider: 'scripted', turns } } }),
      webhookUrl: 'http://127.0.0.1:9/hook',
    });
    return { executor, job, saver };
  }

  const lastContent = async () => {
    const values = (await store.getThread('t1', THREAD))?.values as { messages: Array<{ content: unknown }> } | null;
    return values?.messages.at(-1)?.content;
  };

  it('rethrows a checkpoint store outage so the queue retries, and the retry resumes the run to success', async () => {
    const { executor, job, saver } = await setup([{ tool_calls: [{ name: 'todo_read', args: {} }] }, { content: 'done' }]);
    // The third put fails: after the input and the first agent step are checkpointed.
    saver.failAt = 3;
    await expect(executor().execute(job, 0, never, 3)).rejects.toThrow(/Connection lost/);
    expect((await store.getRun('t1', RUN))?.status).toBe('running');

    await executor().execute(job, 1, never, 3);
    expect((await store.getRun('t1', RUN))?.status).toBe('success');
    expect(await lastContent()).toBe('done');
    const values = (await store.getThread('t1', THREAD))?.values as { messages: Array<{ type?: string }> };
    // The input was not added twice: human, ai (todo_read call), tool, ai.
    expect(values.messages).toHaveLength(4);
  });

  it('ends the run as error when the outage outlasts the last attempt', async () => {
    const { executor, job, saver } = await setup([{ content: 'done' }]);
    saver.failAt = 1;
    saver.failAll = true;
    await executor().execute(job, 2, never, 3);
    const run = await store.getRun('t1', RUN);
    expect(run?.status).toBe('error');
    expect(run?.error).toMatch(/Connection lost/);
  });

  it('a job that fails before the run starts, on its last attempt, ends the run as error and announces it', async () => {
    const { executor, job } = await setup([{ content: 'done' }]);
    const real = store;
    let failures = 1;
    // The store is unreachable when the job starts (the run's take, its first statement, throws), then comes back.
    const flaky = new Proxy(real, {
      get(target, prop) {
        if (prop === 'writeStatement' && failures > 0) {
          return async () => {
            failures--;
            throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED' });
          };
        }
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    store = flaky;
    const exec = executor();
    store = real;
    const handler = runJobHandler(exec, silentLogger());
    const payload = toBinary(RunJobSchema, job);
    await expect(handler({ id: RUN, payload, attemptsMade: 2, attempts: 3 }, never)).rejects.toThrow(/ECONNREFUSED/);
    const run = await real.getRun('t1', RUN);
    expect(run?.status).toBe('error');
    expect(run?.error).toMatch(/could not be executed: connect ECONNREFUSED/);
    expect(await webhooks.getState(RUN)).toBe('waiting');
    const seen: string[] = [];
    for await (const e of events.subscribe(RUN, { signal: AbortSignal.timeout(1_000) })) seen.push(e.event);
    expect(seen).toEqual(['error', 'end']);
  });

  it('an earlier attempt that fails is left for the queue to retry (the run is not abandoned)', async () => {
    const { executor, job } = await setup([{ content: 'done' }]);
    const broken = new Proxy(store, {
      get(target, prop) {
        // The run's take, the job's first statement, fails.
        if (prop === 'writeStatement') return async () => Promise.reject(Object.assign(new Error('Connection is closed.'), { code: 'ECONNRESET' }));
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const real = store;
    store = broken;
    const exec2 = executor();
    store = real;
    await expect(
      runJobHandler(exec2, silentLogger())({ id: RUN, payload: toBinary(RunJobSchema, job), attemptsMade: 0, attempts: 3 }, never),
    ).rejects.toThrow();
    expect((await real.getRun('t1', RUN))?.status).toBe('pending');
  });

  it('the sweeper ends a running run whose queue job failed outside the handler (and leaves live ones alone)', async () => {
    const { executor, job } = await setup([{ content: 'done' }]);
    await new RunLifecycle(store).start((await store.getRun('t1', RUN))!);
    const runsQueue = new MemoryQueue('runs');
    try {
      await runsQueue.enqueue(toBinary(RunJobSchema, job), { jobId: RUN, attempts: 1 });
      // The queue gives up on the job without our handler recording anything (as BullMQ does past maxStalledCount).
      const worker = await runsQueue.process(
        async () => {
          throw new UnrecoverableJobError('stalled too many times');
        },
        { concurrency: 1 },
      );
      for (let i = 0; i < 200 && (await runsQueue.getState(RUN)) !== 'failed'; i++) await new Promise((r) => setTimeout(r, 5));
      await worker.close();
      await new Promise((r) => setTimeout(r, 5));
      const ended = await sweepOrphanedRuns({ store, runs: runsQueue, executor: executor(), logger: silentLogger(), olderThanMs: 0 });
      expect(ended).toEqual([RUN]);
      expect(await store.getRun('t1', RUN)).toMatchObject({
        status: 'error',
        error: expect.stringContaining('dead-lettered'),
        deadLetter: { reason: expect.stringContaining('RUN_MAX_STALLED') },
      });
      expect(await webhooks.getState(RUN)).toBe('waiting');
      // A second sweep finds nothing left to do.
      expect(await sweepOrphanedRuns({ store, runs: runsQueue, executor: executor(), logger: silentLogger(), olderThanMs: 0 })).toEqual([]);
    } finally {
      await runsQueue.close();
    }
  });

  it('announces the end and enqueues the webhook on a retry when an earlier attempt recorded the outcome but could not announce it', async () => {
    const { executor, job } = await setup([{ content: 'done' }]);
    events.failEnd = 1;
    await expect(executor().execute(job, 0, never, 3)).rejects.toThrow(/end/);
    expect((await store.getRun('t1', RUN))?.status).toBe('success');
    expect(await webhooks.getState(RUN)).toBe('unknown');

    await executor().execute(job, 1, never, 3);
    expect(await webhooks.getState(RUN)).toBe('waiting');
    const seen: string[] = [];
    for await (const e of events.subscribe(RUN, { signal: AbortSignal.timeout(1_000) })) seen.push(e.event);
    expect(seen.at(-1)).toBe('end');
  });

  it('drain() lets the step in flight finish, then hands the run back; another executor resumes it without repeating that step', async () => {
    const { executor, job, saver } = await setup([{ delay_ms: 300, tool_calls: [{ name: 'todo_read', args: {} }] }, { content: 'done' }]);
    const first = executor();
    const running = first.execute(job, 0, never, 3);
    await new Promise((r) => setTimeout(r, 100)); // inside the 300 ms model turn
    first.drain();
    await expect(running).rejects.toBeInstanceOf(ReleaseJobError);
    expect((await store.getRun('t1', RUN))?.status).toBe('running');
    // The model turn in flight was checkpointed (its tool call is the last message), the tools step not started.
    const tuple = await saver.getTuple({ configurable: { thread_id: `t1:${THREAD}` } });
    const messages = (tuple?.checkpoint.channel_values as { messages: Array<{ tool_calls?: unknown[] }> }).messages;
    expect(messages.at(-1)?.tool_calls).toHaveLength(1);

    await executor().execute(job, 0, never, 3);
    expect((await store.getRun('t1', RUN))?.status).toBe('success');
    const values = (await store.getThread('t1', THREAD))?.values as { messages: Array<{ content: unknown }> };
    expect(values.messages.map((m) => m.content).at(-1)).toBe('done');
    expect(values.messages).toHaveLength(4);
  });
});
