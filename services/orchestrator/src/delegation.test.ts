import { afterEach, describe, expect, it } from 'vitest';
import { Command, MemorySaver } from '@langchain/langgraph';
import { HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { create, fromBinary, RunJobSchema } from '@agentloop/proto';
import { MemoryQueue } from '@agentloop/queue';
import { RunLifecycle, createSqliteStore, type Store } from '@agentloop/store';
import { silentLogger } from '@agentloop/core';
import {
  childConfig,
  childResult,
  childRunId,
  childThreadId,
  DELEGATE_MAX_LOOPS_DEFAULT,
  DELEGATE_TASK_MAX_CHARS,
  DelegationCoordinator,
  delegationId,
  parseDelegateArgs,
  pendingDelegation,
  resumeJobId,
  type DelegationRequest,
  type DelegationResume,
} from './delegation.js';
import { buildAgentGraph, type RunContext } from './graph.js';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted.js';
import type { ToolVisibility } from './tool-client.js';
import { DELEGATED_AGENT_SYSTEM_PROMPT, DELEGATED_AGENT_SYSTEM_PROMPT_ZH } from './prompts.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('delegate_task arguments', () => {
  it('defaults max_loops to 15', () => {
    expect(parseDelegateArgs({ task: 'summarize uploads/README.md' })).toEqual({
      ok: true,
      task: 'summarize uploads/README.md',
      maxLoops: DELEGATE_MAX_LOOPS_DEFAULT,
    });
    expect(DELEGATE_MAX_LOOPS_DEFAULT).toBe(15);
  });

  it('accepts max_loops from 1 to 500, numeric strings included', () => {
    expect(parseDelegateArgs({ task: 't', max_loops: 1 })).toMatchObject({ ok: true, maxLoops: 1 });
    expect(parseDelegateArgs({ task: 't', max_loops: 500 })).toMatchObject({ ok: true, maxLoops: 500 });
    expect(parseDelegateArgs({ task: 't', max_loops: '20' })).toMatchObject({ ok: true, maxLoops: 20 });
  });

  it.each([0, 501, 2.5, -1, 'many', true])('rejects max_loops %j', (v) => {
    const r = parseDelegateArgs({ task: 't', max_loops: v });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain('"max_loops" must be an integer between 1 and 500');
  });

  it('requires a non-empty task of at most 20000 characters', () => {
    expect(parseDelegateArgs({})).toEqual({ ok: false, error: '"task" must be a non-empty string describing the subtask' });
    expect(parseDelegateArgs({ task: '   ' }).ok).toBe(false);
    expect(parseDelegateArgs({ task: 42 }).ok).toBe(false);
    expect(parseDelegateArgs(null).ok).toBe(false);
    expect(parseDelegateArgs({ task: 'x'.repeat(DELEGATE_TASK_MAX_CHARS) }).ok).toBe(true);
    expect(parseDelegateArgs({ task: 'x'.repeat(DELEGATE_TASK_MAX_CHARS + 1) })).toEqual({
      ok: false,
      error: `"task" is longer than ${DELEGATE_TASK_MAX_CHARS} characters`,
    });
  });

  it('explains the errors in Chinese when PROMPT_LANGUAGE is zh', () => {
    expect(parseDelegateArgs({ task: 't', max_loops: 0 }, 'zh')).toMatchObject({ ok: false, error: expect.stringContaining('必须是 1 到 500 之间的整数') });
  });
});

describe('delegation ids', () => {
  it('derives the same child run and thread ids (UUIDs) from the same parent run and tool call, different ones otherwise', () => {
    const a = childRunId('run-1', 'call_1');
    expect(a).toMatch(UUID);
    expect(childRunId('run-1', 'call_1')).toBe(a);
    expect(childRunId('run-1', 'call_2')).not.toBe(a);
    expect(childRunId('run-2', 'call_1')).not.toBe(a);
    expect(childThreadId(a)).toMatch(UUID);
    expect(childThreadId(a)).not.toBe(a);
  });

  it('identifies a delegation step by its calls in any order, and names its resume job without ":"', () => {
    expect(delegationId('r', ['b', 'a'])).toBe(delegationId('r', ['a', 'b']));
    expect(delegationId('r', ['a'])).not.toBe(delegationId('r', ['a', 'b']));
    expect(resumeJobId('r', delegationId('r', ['a']))).not.toContain(':');
  });
});

describe('child config', () => {
  const scriptedParent = {
    configurable: { model: { provider: 'scripted', turns: [{ content: 'parent' }] }, model_pref: 'code', max_loops: 50 },
    recursion_limit: 99,
  };

  it('takes the child script by task text, then by index, then "*"', () => {
    const delegates = { 'task A': [{ content: 'A' }], '1': [{ content: 'second' }], '*': [{ content: 'any' }] };
    const cfg = (task: string, index: number) => childConfig({ configurable: { ...scriptedParent.configurable, delegates } }, { task, index, maxLoops: 15 });
    expect(cfg('task A', 0)).toMatchObject({ ok: true, config: { configurable: { model: { provider: 'scripted', turns: [{ content: 'A' }] } } } });
    expect(cfg('other', 1)).toMatchObject({ ok: true, config: { configurable: { model: { turns: [{ content: 'second' }] } } } });
    expect(cfg('other', 2)).toMatchObject({ ok: true, config: { configurable: { model: { turns: [{ content: 'any' }] } } } });
  });

  it("inherits the parent's other settings, sets the call's max_loops and drops the parent's delegates", () => {
    const r = childConfig(
      { ...scriptedParent, configurable: { ...scriptedParent.configurable, delegates: { '*': [{ content: 'x' }] } } },
      { task: 't', index: 0, maxLoops: 7 },
    );
    expect(r).toEqual({
      ok: true,
      config: { recursion_limit: 99, configurable: { model_pref: 'code', model: { provider: 'scripted', turns: [{ content: 'x' }] }, max_loops: 7 } },
    });
  });

  it('passes {model, delegates} entries on, so a child can have scripted children of its own', () => {
    const entry = { model: { provider: 'scripted', turns: [{ content: 'c' }] }, delegates: { '*': [{ content: 'gc' }] } };
    const r = childConfig({ configurable: { ...scriptedParent.configurable, delegates: { t: entry } } }, { task: 't', index: 0, maxLoops: 15 });
    expect(r).toMatchObject({ ok: true, config: { configurable: { model: entry.model, delegates: entry.delegates } } });
  });

  it("refuses to reuse a scripted parent's turns when no script is given for the child", () => {
    const r = childConfig(scriptedParent, { task: 't', index: 0, maxLoops: 15 });
    expect(r).toMatchObject({ ok: false, error: expect.stringContaining('configurable.delegates has no script for this task') });
  });

  it("uses the parent's model slot when the parent runs on a real model", () => {
    expect(childConfig({ configurable: { model: 'reasoning' } }, { task: 't', index: 0, maxLoops: 15 })).toEqual({
      ok: true,
      config: { configurable: { model: 'reasoning', max_loops: 15 } },
    });
    expect(childConfig({}, { task: 't', index: 0, maxLoops: 3 })).toEqual({ ok: true, config: { configurable: { max_loops: 3 } } });
  });
});

describe('child result', () => {
  const values = {
    messages: [
      { type: 'human', content: 'task' },
      { type: 'ai', content: 'the answer' },
    ],
  };

  it("is the child's final answer when its run succeeded", () => {
    expect(childResult({ runId: 'c', status: 'success', error: null }, values)).toEqual({
      content: 'the answer',
      is_error: false,
      run_id: 'c',
      status: 'success',
    });
  });

  it('says so when a successful child gave no final answer', () => {
    expect(childResult({ runId: 'c', status: 'success', error: null }, { messages: [] }).content).toBe('(the delegated agent finished without a final answer)');
  });

  it('starts with "Error: delegated task failed:" when the child failed or timed out', () => {
    expect(childResult({ runId: 'c', status: 'error', error: 'boom' }, values)).toEqual({
      content: 'Error: delegated task failed: boom',
      is_error: true,
      run_id: 'c',
      status: 'error',
    });
    expect(childResult({ runId: 'c', status: 'timeout', error: null }, null).content).toBe(
      "Error: delegated task failed: the delegated agent's run ended with status timeout",
    );
  });
});

describe('delegate node', () => {
  function harness(opts: { depth?: number; maxDepth?: number; maxParallel?: number; turns: ScriptedTurn[]; parentContext?: string; language?: 'en' | 'zh' }) {
    const model = new ScriptedChatModel(opts.turns);
    const systems: string[] = [];
    const orig = model._generate.bind(model);
    model._generate = async (msgs: BaseMessage[], o) => {
      systems.push(String(msgs[0]!.content));
      return orig(msgs, o);
    };
    const listed: ToolVisibility[] = [];
    const ctx: RunContext = {
      runId: 'parent-run',
      tenantId: 't1',
      threadId: 'th1',
      model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
      logger: silentLogger(),
      signal: new AbortController().signal,
      depth: opts.depth ?? 0,
      runConfig: { configurable: { model: { provider: 'scripted', turns: opts.turns }, delegates: { '*': [{ content: 'child answer' }] } } },
    };
    const graph = buildAgentGraph({
      tools: {
        listTools: async (_t: string, v?: ToolVisibility) => {
          listed.push(v ?? {});
          return [];
        },
        execute: async () => ({ content: 'ok', isError: false }),
      },
      checkpointer: new MemorySaver(),
      runContext: () => ctx,
      delegation: { maxDepth: opts.maxDepth ?? 1, maxParallel: opts.maxParallel ?? 8 },
      ...(opts.language ? { language: opts.language } : {}),
    });
    const config = { configurable: { thread_id: 't1:th1', run_id: 'parent-run' } };
    const input = {
      messages: [new HumanMessage('@general do it')],
      loops: 0,
      max_loops: 10,
      ...(opts.parentContext ? { parent_context: opts.parentContext } : {}),
    };
    return { graph, config, input, systems, listed };
  }

  const twoCalls: ScriptedTurn[] = [
    {
      tool_calls: [
        { name: 'delegate_task', args: { task: 'one' } },
        { name: 'delegate_task', args: { task: 'two', max_loops: 3 } },
      ],
    },
    { content: 'parent done' },
  ];

  it('suspends the graph with one request for every delegate_task call of the step', async () => {
    const { graph, config, input } = harness({ turns: twoCalls });
    await graph.invoke(input, config);
    const request = pendingDelegation(await graph.getState(config));
    expect(request?.children.map((c) => [c.tool_call_id, c.task, c.max_loops, c.run_id])).toEqual([
      ['call_s1_1', 'one', 15, childRunId('parent-run', 'call_s1_1')],
      ['call_s1_2', 'two', 3, childRunId('parent-run', 'call_s1_2')],
    ]);
    expect(request?.delegation_id).toBe(delegationId('parent-run', ['call_s1_1', 'call_s1_2']));
    expect(request?.children[0]?.config).toMatchObject({
      configurable: { model: { provider: 'scripted', turns: [{ content: 'child answer' }] }, max_loops: 15 },
    });
  });

  it('raises the same request again when the suspended graph is continued without a resume (a retried parent job)', async () => {
    const { graph, config, input } = harness({ turns: twoCalls });
    await graph.invoke(input, config);
    const first = pendingDelegation(await graph.getState(config));
    await graph.invoke(null, config);
    expect(pendingDelegation(await graph.getState(config))).toEqual(first);
  });

  it("turns the children's results into the delegate_task ToolMessages and continues the loop", async () => {
    const { graph, config, input } = harness({ turns: twoCalls });
    await graph.invoke(input, config);
    const request = pendingDelegation(await graph.getState(config)) as DelegationRequest;
    const resume: DelegationResume = {
      delegation_id: request.delegation_id,
      results: {
        call_s1_1: { content: 'answer one', is_error: false, run_id: request.children[0]!.run_id, status: 'success' },
        call_s1_2: { content: 'Error: delegated task failed: boom', is_error: true, run_id: request.children[1]!.run_id, status: 'error' },
      },
    };
    const out = await graph.invoke(new Command({ resume }), config);
    const tools = out.messages.filter((m) => ToolMessage.isInstance(m)) as ToolMessage[];
    expect(tools.map((m) => [m.tool_call_id, m.content, m.status])).toEqual([
      ['call_s1_1', 'answer one', 'success'],
      ['call_s1_2', 'Error: delegated task failed: boom', 'error'],
    ]);
    expect(out.messages.at(-1)?.content).toBe('parent done');
    expect(pendingDelegation(await graph.getState(config))).toBeUndefined();
  });

  it('refuses delegate_task beyond DELEGATION_MAX_DEPTH without suspending', async () => {
    const { graph, config, input } = harness({ turns: twoCalls, depth: 1, maxDepth: 1, parentContext: 'grandparent' });
    const out = await graph.invoke(input, config);
    const tools = out.messages.filter((m) => ToolMessage.isInstance(m)) as ToolMessage[];
    expect(tools).toHaveLength(2);
    expect(tools.every((m) => String(m.content).startsWith('Error: delegate_task is not available here: delegated agents may be nested at most 1 level'))).toBe(
      true,
    );
    expect(pendingDelegation(await graph.getState(config))).toBeUndefined();
  });

  it('refuses the calls of one step beyond DELEGATION_MAX_PARALLEL and starts the others', async () => {
    const { graph, config, input } = harness({ turns: twoCalls, maxParallel: 1 });
    await graph.invoke(input, config);
    const request = pendingDelegation(await graph.getState(config));
    expect(request?.children.map((c) => c.tool_call_id)).toEqual(['call_s1_1']);
  });

  it('refuses invalid arguments with an Error: ToolMessage', async () => {
    const { graph, config, input } = harness({ turns: [{ tool_calls: [{ name: 'delegate_task', args: { max_loops: 2 } }] }, { content: 'ok' }] });
    const out = await graph.invoke(input, config);
    const tool = out.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(tool.content).toBe('Error: the subtask was not delegated: "task" must be a non-empty string describing the subtask');
  });

  it('gives a delegated agent the delegated-agent prompt (English or Chinese) and asks for sub-agent tools only', async () => {
    for (const language of ['en', 'zh'] as const) {
      const { graph, config, input, systems, listed } = harness({ turns: [{ content: 'result' }], depth: 1, parentContext: 'parent', language });
      await graph.invoke(input, config);
      expect(systems[0]!.startsWith(language === 'en' ? DELEGATED_AGENT_SYSTEM_PROMPT : DELEGATED_AGENT_SYSTEM_PROMPT_ZH)).toBe(true);
      expect(listed[0]?.subagent).toBe(true);
    }
  });
});

describe('DelegationCoordinator', () => {
  let store: Store;
  let runs: MemoryQueue;
  let lifecycle: RunLifecycle;
  afterEach(async () => {
    await runs.close();
    await store.close();
  });

  const parentJob = () =>
    create(RunJobSchema, {
      runId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
      threadId: 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb',
      tenantId: 't1',
      assistantId: 'agent',
      inputJson: '{"messages":[]}',
      configJson: '{}',
      webhookUrl: 'http://127.0.0.1:9/hook',
    });

  async function setup() {
    store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    runs = new MemoryQueue('runs');
    const parent = parentJob();
    await store.createThread({ tenantId: 't1', threadId: parent.threadId });
    lifecycle = new RunLifecycle(store);
    await lifecycle.admit({ run: { tenantId: 't1', threadId: parent.threadId, runId: parent.runId, assistantId: 'agent' }, whenBusy: 'reject' });
    const children = ['call_1', 'call_2'].map((id, i) => {
      const runId = childRunId(parent.runId, id);
      return {
        tool_call_id: id,
        run_id: runId,
        thread_id: childThreadId(runId),
        task: `task ${i}`,
        max_loops: 15,
        config: { configurable: { max_loops: 15 } },
      };
    });
    const request: DelegationRequest = { type: 'agentloop_delegation', delegation_id: delegationId(parent.runId, ['call_1', 'call_2']), children };
    const coordinator = new DelegationCoordinator({ store, lifecycle, runs, logger: silentLogger(), attempts: 3, backoffMs: 10 });
    return { parent, request, coordinator };
  }

  /** What a child's executor does at its end, then tells the coordinator. */
  async function finishChild(runId: string, status: 'success' | 'error', answer: string) {
    const state = await runs.getState(runId);
    expect(state).toBe('waiting');
    await lifecycle.end({
      tenantId: 't1',
      runId,
      status,
      values: { messages: [{ type: 'ai', content: answer }] },
      ...(status === 'error' ? { error: { error: 'Error', message: answer } } : {}),
      cause: 'finished',
    });
  }

  it('records each child as a run of its own thread linked to the parent, and enqueues one job per child once', async () => {
    const { parent, request, coordinator } = await setup();
    await coordinator.start(parent, request, 0);
    await coordinator.start(parent, request, 0); // a retried parent job
    for (const c of request.children) {
      const run = await store.getRun('t1', c.run_id);
      expect(run).toMatchObject({
        threadId: c.thread_id,
        status: 'pending',
        metadata: { parent_run_id: parent.runId, parent_thread_id: parent.threadId, tool_call_id: c.tool_call_id, depth: 1 },
      });
      expect(await runs.getState(c.run_id)).toBe('waiting');
    }
    const effects = await store.listToolEffects('t1', parent.runId);
    expect(effects.map((e) => [e.toolCallId, e.toolName, e.state])).toEqual([
      ['call_1', 'delegate_task', 'started'],
      ['call_2', 'delegate_task', 'started'],
    ]);
  });

  it("a child of a parent streamed with stream_subgraphs inherits it and the parent's stream modes, not its interrupts", async () => {
    const { parent, request, coordinator } = await setup();
    parent.streamSubgraphs = true;
    parent.streamMode = ['values', 'messages-tuple'];
    parent.interruptBefore = ['tools'];
    await coordinator.start(parent, request, 0);
    const child = fromBinary(RunJobSchema, (await runs.getPayload(request.children[0]!.run_id))!);
    expect(child).toMatchObject({ streamSubgraphs: true, streamMode: ['values', 'messages-tuple'], interruptBefore: [] });
    expect(child.delegation?.parentJob?.streamSubgraphs).toBe(true);
  });

  it('a child of a parent without stream_subgraphs streams on its own run only', async () => {
    const { parent, request, coordinator } = await setup();
    parent.streamMode = ['values', 'messages-tuple'];
    await coordinator.start(parent, request, 0);
    const child = fromBinary(RunJobSchema, (await runs.getPayload(request.children[0]!.run_id))!);
    expect(child).toMatchObject({ streamSubgraphs: false, streamMode: [] });
  });

  it('resumes the parent once, when the last child finishes, with every child result', async () => {
    const { parent, request, coordinator } = await setup();
    await coordinator.start(parent, request, 0);
    const jobs: Uint8Array[] = [];
    const childJob = (i: number) => {
      const c = request.children[i]!;
      return create(RunJobSchema, {
        runId: c.run_id,
        threadId: c.thread_id,
        tenantId: 't1',
        delegation: {
          parentRunId: parent.runId,
          parentThreadId: parent.threadId,
          toolCallId: c.tool_call_id,
          delegationId: request.delegation_id,
          siblingToolCallIds: ['call_1', 'call_2'],
          depth: 1,
          parentJob: parent,
        },
      });
    };
    await finishChild(request.children[0]!.run_id, 'success', 'first answer');
    await coordinator.childFinished(childJob(0));
    const resumeId = resumeJobId(parent.runId, request.delegation_id);
    expect(await runs.getState(resumeId)).toBe('unknown');
    await finishChild(request.children[1]!.run_id, 'error', 'it broke');
    await coordinator.childFinished(childJob(1));
    await coordinator.childFinished(childJob(1)); // the same child's job again (a retry after a crash)
    expect(await runs.getState(resumeId)).toBe('waiting');

    await runs.process(async (job) => void jobs.push(job.payload), { concurrency: 1 });
    await expect.poll(() => jobs.length).toBeGreaterThanOrEqual(3);
    const decoded = jobs.map((p) => fromBinary(RunJobSchema, p));
    const resumes = decoded.filter((j) => j.resumeDelegationId === request.delegation_id);
    expect(resumes).toHaveLength(1);
    const resume = resumes[0]!;
    expect(resume).toMatchObject({ runId: parent.runId, threadId: parent.threadId, webhookUrl: 'http://127.0.0.1:9/hook', inputJson: '' });
    expect(JSON.parse(resume.commandJson)).toEqual({
      resume: {
        delegation_id: request.delegation_id,
        results: {
          call_1: { content: 'first answer', is_error: false, run_id: request.children[0]!.run_id, status: 'success' },
          call_2: { content: 'Error: delegated task failed: it broke', is_error: true, run_id: request.children[1]!.run_id, status: 'error' },
        },
      },
    });
  });

  it('does not tell the parent about a child whose run has not ended', async () => {
    const { parent, request, coordinator } = await setup();
    await coordinator.start(parent, request, 0);
    const c = request.children[0]!;
    const job = create(RunJobSchema, {
      runId: c.run_id,
      threadId: c.thread_id,
      tenantId: 't1',
      delegation: {
        parentRunId: parent.runId,
        toolCallId: c.tool_call_id,
        delegationId: request.delegation_id,
        siblingToolCallIds: ['call_1'],
        parentJob: parent,
      },
    });
    await coordinator.childFinished(job);
    expect((await store.listToolEffects('t1', parent.runId)).find((e) => e.toolCallId === 'call_1')?.state).toBe('started');
  });
});
