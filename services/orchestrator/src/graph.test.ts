import { describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import { HumanMessage, AIMessage, ToolMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolSpecSchema, ToolMetadataSchema } from '@agentloop/proto';
import { silentLogger } from '@agentloop/core';
import { buildAgentGraph, detectRepeatedToolCall, type AgentGraphDeps, type RunContext } from './graph.js';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted.js';
import type { ToolCallInput, ToolCallResult, ToolVisibility } from './tool-client.js';
import type { ModelSlot } from './models/registry.js';
import { publicValues } from './run-executor.js';
import { BASE_SYSTEM_PROMPT_ZH, promptTexts } from './prompts.js';
import type { JsonObject } from '@agentloop/store';
import { toJsonValue } from './serialize.js';
import { catalogEntry } from './testing/catalog-entry.js';

interface FakeTools {
  calls: ToolCallInput[];
  listTools(): Promise<ReturnType<typeof spec>[]>;
  execute(call: ToolCallInput): Promise<ToolCallResult>;
}

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

/** A tool peer that echoes, fails on "boom", and records what it was asked. */
function fakeTools(): FakeTools {
  const calls: ToolCallInput[] = [];
  return {
    calls,
    async listTools() {
      return [spec('echo'), spec('boom')];
    },
    async execute(call) {
      calls.push(call);
      if (call.name === 'boom') return { content: 'Error: Unexpected error: Error: kaboom', isError: true, errorCode: 'TOOL_FAILED' };
      return { content: `echo:${JSON.stringify(call.args)}`, isError: false };
    },
  };
}

async function run(turns: ScriptedTurn[], opts: { maxLoops?: number; capture?: BaseMessage[][] } = {}) {
  const tools = fakeTools();
  const model = new ScriptedChatModel(turns);
  if (opts.capture) {
    const orig = model._generate.bind(model);
    model._generate = async (msgs, o) => {
      opts.capture!.push(msgs);
      return orig(msgs, o);
    };
  }
  const ctx: RunContext = {
    runId: 'r1',
    tenantId: 't1',
    threadId: 'th1',
    model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
    logger: silentLogger(),
    signal: new AbortController().signal,
  };
  const graph = buildAgentGraph({ tools, checkpointer: new MemorySaver(), runContext: (id) => (id === 'r1' ? ctx : undefined) });
  const config = { configurable: { thread_id: 't1:th1', run_id: 'r1' }, recursionLimit: 1200 };
  const out = await graph.invoke({ messages: [new HumanMessage('hi')], loops: 0, max_loops: opts.maxLoops ?? 100 }, config);
  return { out, tools, graph, config };
}

describe('agent loop', () => {
  it('answers directly when the model calls no tool', async () => {
    const { out, tools } = await run([{ content: 'hello there' }]);
    const last = out.messages.at(-1)!;
    expect(AIMessage.isInstance(last) && last.content).toBe('hello there');
    expect(tools.calls).toHaveLength(0);
    expect(out.loops).toBe(1);
  });

  it('executes tool calls and feeds their results back to the model', async () => {
    const { out, tools } = await run([{ tool_calls: [{ name: 'echo', args: { a: 1 } }] }, { content: 'done' }]);
    expect(tools.calls.map((c) => c.name)).toEqual(['echo']);
    const tm = out.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(tm.content).toBe('echo:{"a":1}');
    expect(tm.tool_call_id).toBe('call_s1_1');
    expect(out.messages.at(-1)!.content).toBe('done');
  });

  it('turns a tool failure into an "Error:" tool message and keeps looping', async () => {
    const { out } = await run([{ tool_calls: [{ name: 'boom', args: {} }] }, { content: 'recovered' }]);
    const tm = out.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(String(tm.content).startsWith('Error:')).toBe(true);
    expect(out.messages.at(-1)!.content).toBe('recovered');
  });

  it('forces finalize with an explanation when max_loops is reached', async () => {
    const turns: ScriptedTurn[] = Array.from({ length: 10 }, (_, i) => ({ tool_calls: [{ name: 'echo', args: { i } }] }));
    const { out, tools } = await run(turns, { maxLoops: 3 });
    expect(out.loops).toBe(3);
    expect(tools.calls).toHaveLength(2); // the third turn's call is not executed
    const last = out.messages.at(-1)!;
    expect(String(last.content)).toContain('limit of 3 agent steps');
    expect(out.finalize_reason).toBe('loop_limit');
    // history stays valid: every tool call has a result
    const ids = out.messages.flatMap((m) => (AIMessage.isInstance(m) ? (m.tool_calls ?? []).map((t) => t.id) : []));
    const answered = out.messages.filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id);
    expect(answered.sort()).toEqual(ids.sort());
  });

  it('forces finalize when the same call with the same arguments repeats three times in a row', async () => {
    const same = { tool_calls: [{ name: 'echo', args: { q: 'x', n: 1 } }] };
    const { out, tools } = await run([same, same, same, same, { content: 'never' }]);
    expect(tools.calls).toHaveLength(2);
    expect(out.finalize_reason).toBe('repeated_tool_call');
    expect(String(out.messages.at(-1)!.content)).toContain('"echo" with the same arguments three times');
  });

  it('does not treat calls with different arguments as repeated', async () => {
    const { out, tools } = await run([
      { tool_calls: [{ name: 'echo', args: { n: 1 } }] },
      { tool_calls: [{ name: 'echo', args: { n: 2 } }] },
      { tool_calls: [{ name: 'echo', args: { n: 3 } }] },
      { content: 'ok' },
    ]);
    expect(tools.calls).toHaveLength(3);
    expect(out.finalize_reason).toBeNull();
  });

  it('builds the system prompt on every call with the current UTC time and never stores it', async () => {
    const capture: BaseMessage[][] = [];
    const { out } = await run([{ tool_calls: [{ name: 'echo', args: {} }] }, { content: 'ok' }], { capture });
    expect(capture).toHaveLength(2);
    for (const msgs of capture) {
      expect(SystemMessage.isInstance(msgs[0]!)).toBe(true);
      expect(String(msgs[0]!.content)).toMatch(/<current_datetime>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/current_datetime>/);
      expect(msgs.filter((m) => SystemMessage.isInstance(m))).toHaveLength(1);
    }
    expect(out.messages.some((m) => SystemMessage.isInstance(m))).toBe(false);
  });
});

describe('detectRepeatedToolCall', () => {
  it('treats argument key order as the same call', () => {
    const ai = (args: Record<string, unknown>) => new AIMessage({ content: '', tool_calls: [{ name: 't', args, id: String(Math.random()) }] });
    expect(detectRepeatedToolCall([ai({ a: 1, b: 2 }), ai({ b: 2, a: 1 }), ai({ a: 1, b: 2 })])).toBe('t');
    expect(detectRepeatedToolCall([ai({ a: 1 }), ai({ a: 1 })])).toBeNull();
  });
});

// ---------------------------------------------------------------------------
// Todos, @mentions, compaction, routing and token usage through the graph.

/** A scripted model that also records the tools it is offered and what each call received. */
class RecordingModel extends ScriptedChatModel {
  bound: string[][] = [];
  calls: Array<{ messages: BaseMessage[]; turn: number | undefined }> = [];
  override bindTools(tools?: unknown[]): this {
    this.bound.push((tools ?? []).map((t) => (t as { function: { name: string } }).function.name));
    return this;
  }
  override async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']) {
    this.calls.push({ messages, turn: options.scripted_turn });
    return super._generate(messages, options);
  }
}

function harness(deps: Partial<Omit<AgentGraphDeps, 'tools' | 'runContext' | 'checkpointer'>> = {}) {
  const tools = fakeTools();
  const listed: ToolVisibility[] = [];
  const origList = tools.listTools.bind(tools);
  const peer = {
    ...tools,
    listTools: async (_tenant: string, v?: ToolVisibility) => {
      listed.push(v ?? {});
      return origList();
    },
    execute: tools.execute.bind(tools),
  };
  const contexts = new Map<string, RunContext>();
  const graph = buildAgentGraph({ tools: peer, checkpointer: new MemorySaver(), runContext: (id) => contexts.get(id), ...deps });
  const config = (runId: string) => ({ configurable: { thread_id: 't1:th1', run_id: runId }, recursionLimit: 200 });
  const systemOf = (call: { messages: BaseMessage[] }) => String(call.messages[0]!.content);
  async function run(runId: string, text: string, turns: ScriptedTurn[], extra: Partial<RunContext> & { input?: Record<string, unknown> } = {}) {
    const model = new RecordingModel(turns);
    const { input, ...ctxExtra } = extra;
    contexts.set(runId, {
      runId,
      tenantId: 't1',
      threadId: 'th1',
      model: { model, label: 'scripted', provider: 'scripted', modelId: 'scripted' },
      logger: silentLogger(),
      signal: new AbortController().signal,
      ...ctxExtra,
    });
    const out = await graph.invoke({ messages: [new HumanMessage(text)], loops: 0, context_id: runId, ...(input ?? {}) }, config(runId));
    return { out, model };
  }
  return { graph, tools, listed, run, systemOf, config };
}

const todoWrite = (todos: unknown[], id?: string) => ({ tool_calls: [{ name: 'todo_write', args: { todos }, ...(id ? { id } : {}) }] });
const toolMessages = (msgs: BaseMessage[]) => msgs.filter((m): m is ToolMessage => ToolMessage.isInstance(m));

describe('todo tools', () => {
  it('runs todo_write in the orchestrator and writes todos to state with its ToolMessage', async () => {
    const h = harness();
    const { out } = await h.run('r1', 'plan it', [
      todoWrite([
        { content: 'parse', status: 'in_progress' },
        { content: 'test', status: 'pending', priority: 'high' },
      ]),
      { content: 'ok' },
    ]);
    expect(h.tools.calls).toHaveLength(0); // never sent over the bus
    expect(out.todos).toEqual([
      { id: 'todo-1', content: 'parse', status: 'in_progress', priority: 'medium' },
      { id: 'todo-2', content: 'test', status: 'pending', priority: 'high' },
    ]);
    const [tm] = toolMessages(out.messages);
    expect(tm!.content).toBe('TODO list updated: 2 incomplete (1 in progress, 1 pending), 0 completed.');
    expect(tm!.tool_call_id).toBe('call_s1_1');
  });

  it('adds the reminder of incomplete tasks to the system prompt of the next model call', async () => {
    const h = harness();
    const { model } = await h.run('r1', 'plan it', [
      todoWrite([
        { content: 'parse', status: 'in_progress' },
        { content: 'test', status: 'pending' },
      ]),
      { content: 'ok' },
    ]);
    expect(h.systemOf(model.calls[0]!)).not.toContain('<system_reminder>');
    const second = h.systemOf(model.calls[1]!);
    expect(second).toContain('⚠️ Task tracking (2 incomplete):\n  [in progress] parse\n  [pending] test');
  });

  it('rejects an invalid list with an Error ToolMessage and leaves todos unchanged', async () => {
    const h = harness();
    const { out, model } = await h.run('r1', 'plan', [
      todoWrite([
        { content: 'a', status: 'in_progress' },
        { content: 'b', status: 'in_progress' },
      ]),
      { content: 'ok' },
    ]);
    const [tm] = toolMessages(out.messages);
    expect(tm!.content).toBe("Error: the TODO list was not updated: only one task can be 'in_progress' at a time, found 2");
    expect(tm!.status).toBe('error');
    expect(out.todos).toEqual([]);
    expect(h.systemOf(model.calls[1]!)).not.toContain('Task tracking');
  });

  it('applies several todo_write calls of one message in order and todo_read sees the result', async () => {
    const h = harness();
    const { out } = await h.run('r1', 'plan', [
      {
        tool_calls: [
          { name: 'todo_write', args: { todos: [{ content: 'a', status: 'pending' }] } },
          {
            name: 'todo_write',
            args: {
              todos: [
                { content: 'a', status: 'completed' },
                { content: 'b', status: 'in_progress' },
              ],
            },
          },
        ],
      },
      { tool_calls: [{ name: 'todo_read', args: {} }] },
      { content: 'ok' },
    ]);
    expect(out.todos.map((t) => t.status)).toEqual(['completed', 'in_progress']);
    const read = JSON.parse(String(toolMessages(out.messages).at(-1)!.content)) as { ok: boolean; summary: unknown };
    expect(read).toMatchObject({ ok: true, summary: { pending: 0, in_progress: 1, completed: 1, total: 2 } });
  });

  it('offers todo_write, todo_read and ask_human to the model alongside the bus tools, without delegate_task', async () => {
    const h = harness();
    const { model } = await h.run('r1', 'hi', [{ content: 'ok' }]);
    expect(model.bound[0]).toEqual(['todo_write', 'todo_read', 'ask_human', 'echo', 'boom']);
  });
});

describe('@mentions', () => {
  it('asks the tool list for the mentioned names and reminds the model of the mentioned tools', async () => {
    const h = harness();
    const { model } = await h.run('r1', 'use @echo on it', [{ content: 'ok' }]);
    expect(h.listed[0]).toEqual({ mentioned: ['echo'], allowed: [], subagent: false });
    expect(h.systemOf(model.calls[0]!)).toContain(
      '<system_reminder>The user mentioned the tool(s): echo. Prefer these tools to complete the task.</system_reminder>',
    );
  });

  it('runs a mentioned tool on demand and other tools normally', async () => {
    const h = harness();
    await h.run('r1', 'try @echo', [
      {
        tool_calls: [
          { name: 'echo', args: {} },
          { name: 'boom', args: {} },
        ],
      },
      { content: 'ok' },
    ]);
    expect(h.tools.calls.map((c) => [c.name, c.onDemand, c.subagent])).toEqual([
      ['echo', true, false],
      ['boom', false, false],
    ]);
  });

  it('offers delegate_task when an agent is mentioned, and says it is not available yet when called', async () => {
    const h = harness();
    const { out, model } = await h.run('r1', 'ask @general to summarise', [
      { tool_calls: [{ name: 'delegate_task', args: { task: 'summarise' } }] },
      { content: 'ok' },
    ]);
    expect(model.bound[0]).toContain('delegate_task');
    expect(h.systemOf(model.calls[0]!)).toContain('The user mentioned the agent(s): general.');
    const [tm] = toolMessages(out.messages);
    expect(String(tm!.content)).toMatch(/^Error: delegate_task is not available yet/);
    expect(h.tools.calls).toHaveLength(0);
  });

  it("classifies a skill mention with the tenant's skills and loads the skill into the workspace first", async () => {
    const loaded: string[] = [];
    const h = harness({
      skills: {
        catalog: async () => ({
          environment: null,
          settings: null,
          skills: [catalogEntry('pdf', { description: 'PDFs' })],
        }),
        load: async (tenant: string, thread: string, id: string) => {
          loaded.push(`${tenant}/${thread}/${id}`);
          return `skills/${id}/SKILL.md`;
        },
      },
    });
    const { model } = await h.run('r1', 'convert with @pdf', [{ content: 'ok' }]);
    expect(h.systemOf(model.calls[0]!)).toContain('skills/pdf/SKILL.md');
    expect(model.bound[0]).not.toContain('delegate_task');
    expect(loaded).toHaveLength(1);
    expect(loaded[0]).toMatch(/\/pdf$/);
  });

  it('writes prompt and reminders in Chinese when the language is zh', async () => {
    const h = harness({ language: 'zh' });
    const { model } = await h.run('r1', '请 @general 帮忙', [{ content: 'ok' }]);
    const system = h.systemOf(model.calls[0]!);
    expect(system.startsWith(BASE_SYSTEM_PROMPT_ZH)).toBe(true);
    expect(system).toContain('<system_reminder>用户提到了代理：general。你可以使用 delegate_task 工具将任务委派给子代理执行。</system_reminder>');
  });
});

describe('compaction', () => {
  it('summarizes the conversation on /compact, consuming one scripted turn, and folds the summary into later prompts', async () => {
    const h = harness();
    await h.run('r1', 'hi', [{ tool_calls: [{ name: 'echo', args: { n: 1 } }] }, { content: 'first answer' }]);
    const { out, model } = await h.run('r2', '/compact', [{ content: 'SUMMARY: user said hi, echo ran.' }]);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.turn).toBe(0);
    expect(String(model.calls[0]!.messages[1]!.content)).toContain('User: hi');
    expect(out.messages.map((m) => m.getType())).toEqual(['system', 'human', 'ai']);
    expect(out.messages[0]!.content).toBe('SUMMARY: user said hi, echo ran.');
    expect(out.messages[2]!.content).toBe(promptTexts('en').compacted(4));

    const next = await h.run('r3', 'and now?', [{ content: 'ok' }]);
    const call = next.model.calls[0]!;
    expect(h.systemOf(call)).toContain('<conversation_summary>');
    expect(h.systemOf(call)).toContain('SUMMARY: user said hi, echo ran.');
    expect(call.messages.slice(1).map((m) => m.content)).toEqual(['/compact', promptTexts('en').compacted(4), 'and now?']);
  });

  it('answers /compact without a model call when there is nothing to compact', async () => {
    const h = harness();
    const { out, model } = await h.run('r1', '/compact', [{ content: 'unused' }]);
    expect(model.calls).toHaveLength(0);
    expect(out.messages.at(-1)!.content).toBe(promptTexts('en').nothingToCompact);
  });

  const bigRun = (h: ReturnType<typeof harness>) => h.run('r1', 'hi', [{ tool_calls: [{ name: 'echo', args: { pad: 'x'.repeat(6000) } }] }, { content: 'a1' }]);

  it('compacts automatically when the next input exceeds the token budget, the summary taking a scripted turn', async () => {
    const h = harness({ compactTokenBudget: 1000 });
    await bigRun(h);
    const { out, model } = await h.run('r2', 'second question', [{ content: 'SUMMARY' }, { content: 'a2' }]);
    expect(model.calls.map((c) => c.turn)).toEqual([0, 1]);
    expect(h.systemOf(model.calls[0]!)).toBe(promptTexts('en').summarizerSystem);
    expect(h.systemOf(model.calls[1]!)).toContain('SUMMARY');
    expect(model.calls[1]!.messages.slice(1).map((m) => m.content)).toEqual(['second question']);
    expect(out.messages.map((m) => [m.getType(), m.content])).toEqual([
      ['system', 'SUMMARY'],
      ['human', 'second question'],
      ['ai', 'a2'],
    ]);
    expect(out.run_usage.model_calls).toBe(2);
  });

  it('does not compact when no budget is set', async () => {
    const h = harness();
    await bigRun(h);
    const { out, model } = await h.run('r2', 'second question', [{ content: 'a2' }]);
    expect(model.calls).toHaveLength(1);
    expect(out.messages).toHaveLength(6);
  });
});

describe('token usage', () => {
  it("sums usage_metadata of the run's AI messages per run and accumulates it per thread", async () => {
    const h = harness();
    const r1 = await h.run('r1', 'hi', [{ tool_calls: [{ name: 'echo', args: {} }] }, { content: 'done' }]);
    const usage1 = r1.out.messages.filter((m) => AIMessage.isInstance(m)).map((m) => (m as AIMessage).usage_metadata!);
    const total1 = usage1.reduce((n, u) => n + u.total_tokens, 0);
    expect(total1).toBeGreaterThan(0);
    expect(r1.out.run_usage).toMatchObject({ run_id: 'r1', model_calls: 2, total_tokens: total1 });
    expect(r1.out.token_usage.total_tokens).toBe(total1);

    const r2 = await h.run('r2', 'again', [{ content: 'fine' }]);
    const last = r2.out.messages.at(-1) as AIMessage;
    expect(r2.out.run_usage).toMatchObject({ run_id: 'r2', model_calls: 1, total_tokens: last.usage_metadata!.total_tokens });
    expect(r2.out.token_usage.total_tokens).toBe(total1 + last.usage_metadata!.total_tokens);

    const values = publicValues(toJsonValue(r2.out) as JsonObject, 'r2') as {
      token_usage: { run: { total_tokens: number; model_calls: number }; thread: { total_tokens: number } };
    };
    expect(values.token_usage.run).toMatchObject({ total_tokens: last.usage_metadata!.total_tokens, model_calls: 1 });
    expect(values.token_usage.thread.total_tokens).toBe(total1 + last.usage_metadata!.total_tokens);
    expect(values).not.toHaveProperty('run_usage');
  });
});

describe('model routing in the agent node', () => {
  const routed = () => {
    const models: Partial<Record<ModelSlot, RecordingModel>> = {};
    const configured = new Set<ModelSlot>(['base', 'code', 'reasoning']);
    return {
      models,
      router: {
        configured,
        forSlot: (slot: ModelSlot) => {
          const label = configured.has(slot) ? slot : 'base';
          const model = (models[label] ??= new RecordingModel([{ content: `from ${label}` }]));
          return { model, label, provider: 'openai-compatible' as const, modelId: label };
        },
      },
    };
  };

  it('calls the code slot for a message about a code file and records the decision', async () => {
    const h = harness();
    const r = routed();
    const { out } = await h.run('r1', 'fix src/app.ts', [{ content: 'unused' }], { router: r.router });
    const ai = out.messages.at(-1) as AIMessage;
    expect(ai.content).toBe('from code');
    expect(ai.response_metadata).toMatchObject({ agentloop_model: 'code', agentloop_route: 'code' });
  });

  it('follows the run preference, then the state preference, before content rules', async () => {
    const h = harness();
    const r = routed();
    const a = await h.run('r1', 'fix src/app.ts', [], { router: r.router, modelPref: 'reasoning' });
    expect((a.out.messages.at(-1) as AIMessage).response_metadata).toMatchObject({ agentloop_model: 'reasoning', agentloop_route: 'preference' });
    const b = await h.run('r2', 'hello', [], { router: r.router, input: { model_pref: 'code' } });
    expect((b.out.messages.at(-1) as AIMessage).response_metadata.agentloop_model).toBe('code');
  });

  it('falls back to base for a preferred slot that is not configured', async () => {
    const h = harness();
    const r = routed();
    const { out } = await h.run('r1', 'hello', [], { router: r.router, modelPref: 'vision' });
    expect((out.messages.at(-1) as AIMessage).response_metadata.agentloop_model).toBe('base');
  });

  it('keeps the scripted model for every call when no router is given', async () => {
    const h = harness();
    const { out } = await h.run('r1', 'fix src/app.ts', [{ content: 'scripted answer' }]);
    expect((out.messages.at(-1) as AIMessage).response_metadata).toMatchObject({ agentloop_model: 'scripted', agentloop_route: 'scripted' });
  });
});

describe('effect ledger', () => {
  it('claims and records calls of side-effecting tools, and lets idempotent ones through without a store write', async () => {
    const tools = { ...fakeTools(), isIdempotent: (name: string) => name === 'echo' };
    const claimed: string[] = [];
    const completed: string[] = [];
    const ledger: NonNullable<AgentGraphDeps['ledger']> = {
      async claimToolEffect(key) {
        claimed.push(key.toolName);
        return { created: true, effect: { ...key, state: 'started', content: null, isError: false, createdAt: new Date(), updatedAt: new Date() } } as never;
      },
      async restartToolEffect() {
        throw new Error('not expected');
      },
      async completeToolEffect(_t, _r, _id, result) {
        completed.push(result.content);
        return { content: result.content, isError: result.isError } as never;
      },
    };
    const ctx: RunContext = {
      runId: 'r1',
      tenantId: 't1',
      threadId: 'th1',
      model: {
        model: new ScriptedChatModel([
          {
            tool_calls: [
              { name: 'echo', args: { a: 1 } },
              { name: 'boom', args: {} },
            ],
          },
          { content: 'done' },
        ]),
        label: 'scripted',
        provider: 'scripted',
        modelId: 'scripted',
      },
      logger: silentLogger(),
      signal: new AbortController().signal,
    };
    const graph = buildAgentGraph({ tools, ledger, checkpointer: new MemorySaver(), runContext: () => ctx });
    const out = await graph.invoke({ messages: [new HumanMessage('hi')], loops: 0, max_loops: 10 }, { configurable: { thread_id: 't1:th1', run_id: 'r1' } });
    expect(tools.calls.map((c) => c.name).sort()).toEqual(['boom', 'echo']);
    expect(claimed).toEqual(['boom']);
    expect(completed).toEqual(['Error: Unexpected error: Error: kaboom']);
    expect(out.messages.at(-1)!.content).toBe('done');
  });
});
