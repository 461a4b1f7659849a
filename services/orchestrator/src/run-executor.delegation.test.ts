import { afterEach, describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { create, RunJobSchema, toBinary } from '@agentloop/proto';
import { MemoryBus, MemoryRunEventStream, type StoredRunEvent } from '@agentloop/bus';
import { MemoryQueue, UnrecoverableJobError, type QueueWorker } from '@agentloop/queue';
import { RunLifecycle, createSqliteStore, type Store } from '@agentloop/store';
import { silentLogger } from '@agentloop/core';
import { RunExecutor } from './run-executor.js';
import { ModelRegistry } from './models/registry.js';
import { ToolClient } from './tool-client.js';
import { runJobHandler } from './handlers/run-job.js';
import { childRunId, delegationId, resumeJobId } from './delegation.js';
import { sweepOrphanedRuns } from './sweeper.js';

const PARENT = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const THREAD = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

describe('RunExecutor with delegated agents', () => {
  let store: Store;
  let runs: MemoryQueue;
  let webhooks: MemoryQueue;
  let events: MemoryRunEventStream;
  let bus: MemoryBus;
  let worker: QueueWorker | undefined;

  afterEach(async () => {
    await worker?.close(1_000);
    worker = undefined;
    await Promise.allSettled([runs.close(), webhooks.close(), events.close()]);
    await store.close();
    await bus.close();
  });

  async function setup() {
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    runs = new MemoryQueue('runs');
    webhooks = new MemoryQueue('webhooks');
    events = new MemoryRunEventStream();
    bus = new MemoryBus(); // no tool-runner: the model gets the orchestrator's tools only
    const executor = new RunExecutor({
      store,
      events,
      webhooks,
      runs,
      tools: new ToolClient(bus, { callTimeoutMs: 1_000, listTimeoutMs: 200 }),
      models: new ModelRegistry({}, true),
      checkpointer: new MemorySaver(),
      logger: silentLogger(),
      config: { maxLoopsDefault: 100, runTimeoutMs: 60_000, webhookAttempts: 1, webhookBackoffMs: 10, durability: 'sync', delegation: { attempts: 1 } },
    });
    await store.createThread({ tenantId: 't1', threadId: THREAD });
    await new RunLifecycle(store).admit({ run: { tenantId: 't1', threadId: THREAD, runId: PARENT, assistantId: 'agent' }, whenBusy: 'reject' });
    const job = create(RunJobSchema, {
      runId: PARENT,
      threadId: THREAD,
      tenantId: 't1',
      assistantId: 'agent',
      inputJson: JSON.stringify({ messages: [{ role: 'user', content: '@general go' }] }),
      configJson: JSON.stringify({
        configurable: {
          model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'delegate_task', args: { task: 'sub' } }] }, { content: 'parent: got it' }] },
          delegates: { sub: [{ content: 'child: done' }] },
        },
      }),
      webhookUrl: 'http://127.0.0.1:9/hook',
    });
    return { executor, job };
  }

  async function eventsOf(runId: string): Promise<StoredRunEvent[]> {
    const out: StoredRunEvent[] = [];
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), 200);
    try {
      for await (const e of events.subscribe(runId, { signal: ac.signal })) out.push(e);
    } catch {
      /* aborted: the log so far */
    } finally {
      clearTimeout(timer);
    }
    return out;
  }

  it('ends the parent job suspended: run running, thread busy, no end event, no webhook, the child queued', async () => {
    const { executor, job } = await setup();
    await executor.execute(job, 0, new AbortController().signal);
    expect((await store.getRun('t1', PARENT))?.status).toBe('running');
    expect((await store.getThread('t1', THREAD))?.status).toBe('busy');
    expect(await webhooks.getState(PARENT)).toBe('unknown');
    const child = childRunId(PARENT, 'call_s1_1');
    expect(await runs.getState(child)).toBe('waiting');
    const evs = await eventsOf(PARENT);
    expect(evs.some((e) => e.event === 'end')).toBe(false);
    expect(evs.some((e) => e.dataJson.includes('__interrupt__'))).toBe(false);
    const waiting = evs.find((e) => e.event === 'updates' && e.dataJson.includes('waiting_children'));
    expect(JSON.parse(waiting!.dataJson)).toMatchObject({
      delegate: { status: 'waiting_children', children: [{ run_id: child, tool_call_id: 'call_s1_1', task: 'sub' }] },
    });
  });

  it('drops a resume job for a delegation step the run does not wait on', async () => {
    const { executor, job } = await setup();
    await executor.execute(job, 0, new AbortController().signal);
    const stale = create(RunJobSchema, {
      ...job,
      inputJson: '',
      commandJson: JSON.stringify({ resume: { delegation_id: 'other', results: {} } }),
      resumeDelegationId: 'other',
    });
    await executor.execute(stale, 0, new AbortController().signal);
    expect((await store.getRun('t1', PARENT))?.status).toBe('running');
    expect((await store.getThread('t1', THREAD))?.values).toBeNull();
  });

  it('finishes the parent with the child answer after the child job and the resume job ran, and fires the webhook then', async () => {
    const { executor, job } = await setup();
    await executor.execute(job, 0, new AbortController().signal);
    worker = await runs.process(runJobHandler(executor), { concurrency: 1 });
    await expect.poll(async () => (await store.getRun('t1', PARENT))?.status, { timeout: 10_000 }).toBe('success');
    const values = (await store.getThread('t1', THREAD))?.values as { messages: Array<{ type: string; content: string; name?: string }> };
    expect(values.messages.find((m) => m.name === 'delegate_task')?.content).toBe('child: done');
    expect(values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'parent: got it' });
    expect(await webhooks.getState(PARENT)).toBe('waiting');
    expect(await runs.getState(resumeJobId(PARENT, delegationId(PARENT, ['call_s1_1'])))).toBe('completed');
    expect((await store.getRun('t1', childRunId(PARENT, 'call_s1_1')))?.metadata).toMatchObject({ parent_run_id: PARENT });
  });

  it("counts the delegated agent's model calls in its tenant's usage ledger, as a run of its own (issue 17)", async () => {
    const { executor, job } = await setup();
    await executor.execute(job, 0, new AbortController().signal);
    worker = await runs.process(runJobHandler(executor), { concurrency: 1 });
    await expect.poll(async () => (await store.getRun('t1', PARENT))?.status, { timeout: 10_000 }).toBe('success');
    const today = new Date().toISOString().slice(0, 10);
    const rows = await store.tokenUsageRows('t1', today, today);
    // Parent: delegate_task, then its answer after the resume; child: one answer.
    expect(rows.map((r) => [r.model, r.modelCalls, r.runs])).toEqual([['scripted', 3, 2]]);
    expect(rows[0]!.totalTokens).toBeGreaterThan(0);
  });

  it('a child whose job fails for good at queue level is dead-lettered by the sweeper; the suspended parent is told (an error result) and its model answers', async () => {
    const { executor, job } = await setup();
    await executor.execute(job, 0, new AbortController().signal);
    const child = childRunId(PARENT, 'call_s1_1');
    // The queue fails the child's job without our handler running (as BullMQ does past RUN_MAX_STALLED).
    const poison = await runs.process(
      async () => {
        throw new UnrecoverableJobError('job stalled more than allowable limit');
      },
      { concurrency: 1 },
    );
    await expect.poll(() => runs.getState(child), { timeout: 5_000 }).toBe('failed');
    await poison.close();
    expect((await store.getRun('t1', child))?.status).toBe('pending');
    // The parent, suspended on its child, is left alone; the child is dead-lettered.
    const swept = await sweepOrphanedRuns({ store, runs, executor, logger: silentLogger(), olderThanMs: 0 });
    expect(swept).toEqual([child]);
    expect(await store.getRun('t1', child)).toMatchObject({ status: 'error', deadLetter: { reason: expect.stringContaining('RUN_MAX_STALLED') } });
    // The run.ended subscriber notified the parent: its resume job is queued; it runs to its end.
    expect(await runs.getState(resumeJobId(PARENT, delegationId(PARENT, ['call_s1_1'])))).toBe('waiting');
    worker = await runs.process(runJobHandler(executor), { concurrency: 1 });
    await expect.poll(async () => (await store.getRun('t1', PARENT))?.status, { timeout: 10_000 }).toBe('success');
    const values = (await store.getThread('t1', THREAD))?.values as { messages: Array<{ type: string; content: string; name?: string }> };
    expect(values.messages.find((m) => m.name === 'delegate_task')?.content).toMatch(/dead-lettered/);
    expect(values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'parent: got it' });
    expect(await sweepOrphanedRuns({ store, runs, executor, logger: silentLogger(), olderThanMs: 0 })).toEqual([]);
  });

  it('the sweeper dead-letters a running run whose job is gone, from its record (the stored job: webhook sent), and leaves a suspended parent alone', async () => {
    const { executor, job } = await setup();
    await executor.execute(job, 0, new AbortController().signal); // PARENT suspended, its job never in this queue
    const lonely = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
    const thread = 'dddddddd-dddd-4ddd-8ddd-dddddddddddd';
    await store.createThread({ tenantId: 't1', threadId: thread });
    const lonelyJob = create(RunJobSchema, { ...job, runId: lonely, threadId: thread, webhookUrl: 'http://127.0.0.1:9/hook' });
    const lc = new RunLifecycle(store);
    await lc.admit({
      run: { tenantId: 't1', threadId: thread, runId: lonely, assistantId: 'agent' },
      whenBusy: 'reject',
      job: () => ({ payload: toBinary(RunJobSchema, lonelyJob) }),
    });
    await lc.start((await store.getRun('t1', lonely))!);
    expect(await runs.getState(lonely)).toBe('unknown');
    const swept = await sweepOrphanedRuns({ store, runs, executor, logger: silentLogger(), olderThanMs: 0 });
    expect(swept).toEqual([lonely]);
    expect(await store.getRun('t1', lonely)).toMatchObject({ status: 'error', deadLetter: { reason: expect.stringContaining('is gone') } });
    expect(await store.getThread('t1', thread)).toMatchObject({ status: 'error', activeRunId: null });
    expect(await webhooks.getState(lonely)).toBe('waiting');
    expect((await eventsOf(lonely)).map((e) => e.event)).toEqual(['error', 'end']);
    expect((await store.getRun('t1', PARENT))?.status).toBe('running');
  });
});
