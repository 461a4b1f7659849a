/**
 * The supersteps of a run (issue 9): a tool turn is agent → tools (the verdicts of the calls are
 * asked in the agent step and checkpointed with the answer), a final answer ends at the agent
 * step. What a crash between the model's answer and that checkpoint leaves, and the paths that
 * still go through the approve and finalize nodes.
 */
import { describe, expect, it } from 'vitest';
import { MemorySaver } from '@langchain/langgraph';
import type { PendingWrite } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { buildAgentGraph, type AgentGraphDeps } from './graph.js';
import { ScriptedChatModel, type ScriptedTurn } from './models/scripted.js';
import type { ToolCallInput, ToolCallResult } from './tool-client.js';
import { fakeApprovals, fakeCtx } from './graph/testing.js';

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

/**
 * A process killed when the agent step's writes (the first writing `approvals`) are about to be
 * saved: they never are, nothing else is saved after, and the run stops (its signal aborts).
 * `restart()` is the next process, on the same storage.
 */
class KilledBeforeVerdictsAreSaved extends MemorySaver {
  killed = false;
  private dead = false;
  readonly process = new AbortController();
  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    if (!this.killed && writes.some(([channel]) => channel === 'approvals')) this.kill();
    if (this.dead) throw new Error('killed');
    return super.putWrites(config, writes, taskId);
  }
  override async put(...args: Parameters<MemorySaver['put']>): ReturnType<MemorySaver['put']> {
    if (this.dead) throw new Error('killed');
    return super.put(...args);
  }
  restart() {
    this.dead = false;
  }
  private kill() {
    this.killed = this.dead = true;
    this.process.abort(new Error('killed'));
  }
}

function harness(turns: ScriptedTurn[], opts: { approvals?: ReturnType<typeof fakeApprovals>; checkpointer?: MemorySaver; maxLoops?: number } = {}) {
  const executed: ToolCallInput[] = [];
  const model = new ScriptedChatModel(turns);
  let modelCalls = 0;
  const generate = model._generate.bind(model);
  model._generate = (msgs, o) => (modelCalls++, generate(msgs, o));
  const ctx = fakeCtx({}, model);
  const tools: AgentGraphDeps['tools'] = {
    listTools: async () => [spec('now'), spec('rm')],
    async execute(call: ToolCallInput): Promise<ToolCallResult> {
      executed.push(call);
      return { content: `ran ${call.name}`, isError: false };
    },
  };
  const checkpointer = opts.checkpointer ?? new MemorySaver();
  const graph = buildAgentGraph({ tools, checkpointer, runContext: () => ctx, ...(opts.approvals ? { approvals: opts.approvals } : {}) });
  const config = { configurable: { thread_id: 'th1', run_id: 'r1' } };
  const input = { messages: [new HumanMessage('what time is it?')], loops: 0, max_loops: opts.maxLoops ?? 20 };
  /** The nodes that ran, in order (one `updates` chunk per node). */
  const nodes = async (value: unknown) => {
    const ran: string[] = [];
    for await (const chunk of await graph.stream(value as never, { ...config, streamMode: 'updates' })) ran.push(...Object.keys(chunk));
    return ran;
  };
  return { graph, config, input, nodes, executed, modelCalls: () => modelCalls };
}

/** The bench's run (bench/throughput/README.md): `now`, `now` again, then an answer. */
const benchTurns = (): ScriptedTurn[] => [
  { tool_calls: [{ name: 'now', args: {} }] },
  { tool_calls: [{ name: 'now', args: { again: true } }] },
  { content: 'It is now.' },
];

describe('supersteps of a run', () => {
  it('with approvals on: agent → tools per tool turn, and the answer ends at the agent (no approve, no finalize)', async () => {
    const approvals = fakeApprovals({});
    const h = harness(benchTurns(), { approvals });
    expect(await h.nodes(h.input)).toEqual(['agent', 'tools', 'agent', 'tools', 'agent']);
    expect(approvals.checked.map((c) => c.toolName)).toEqual(['now', 'now']);
    const state = await h.graph.getState(h.config);
    expect(state.next).toEqual([]);
    expect(state.values.finalize_reason).toBeNull();
    expect((state.values.messages as BaseMessage[]).at(-1)!.content).toBe('It is now.');
  });

  it('with approvals off, the same steps', async () => {
    const h = harness(benchTurns());
    expect(await h.nodes(h.input)).toEqual(['agent', 'tools', 'agent', 'tools', 'agent']);
    expect(h.executed.map((c) => c.name)).toEqual(['now', 'now']);
  });

  it('a call needing a human goes from the agent straight to await_approval', async () => {
    const h = harness([{ tool_calls: [{ name: 'rm', args: {} }] }, { content: 'ok' }], { approvals: fakeApprovals({ rm: 'require_approval' }) });
    expect(await h.nodes(h.input)).toEqual(['agent', '__interrupt__']);
    expect((await h.graph.getState(h.config)).next).toEqual(['await_approval']);
    expect(h.executed).toEqual([]);
  });

  it('a forced stop still goes through finalize, and the calls it answers are not judged', async () => {
    const approvals = fakeApprovals({});
    const h = harness(benchTurns(), { approvals, maxLoops: 1 });
    expect(await h.nodes(h.input)).toEqual(['agent', 'finalize']);
    expect(approvals.checked).toEqual([]);
    expect(h.executed).toEqual([]);
    expect((await h.graph.getState(h.config)).values.finalize_reason).toBe('loop_limit');
  });
});

describe('a crash in the agent step after the model answered', () => {
  it('leaves the step undone: on resume the model is asked again, the calls judged again, and each runs once', async () => {
    const approvals = fakeApprovals({ rm: 'deny' });
    const checkpointer = new KilledBeforeVerdictsAreSaved();
    const h = harness(
      [
        {
          tool_calls: [
            { name: 'now', args: {} },
            { name: 'rm', args: {} },
          ],
        },
        { content: 'done' },
      ],
      { approvals, checkpointer },
    );
    // As in cluster mode: each step is saved before the next starts (run-executor.ts, durability "sync").
    await expect(h.graph.invoke(h.input, { ...h.config, durability: 'sync', signal: checkpointer.process.signal })).rejects.toThrow();
    expect(checkpointer.killed).toBe(true);
    checkpointer.restart();
    // Neither the answer nor its verdicts were kept: the agent step is what runs next.
    const crashed = await h.graph.getState(h.config);
    expect(crashed.next).toEqual(['agent']);
    expect((crashed.values.messages as BaseMessage[]).map((m) => m.getType())).toEqual(['human']);
    expect(h.executed).toEqual([]);
    expect(h.modelCalls()).toBe(1);

    await h.graph.invoke(null, { ...h.config, durability: 'sync' });
    expect(h.modelCalls()).toBe(3); // the first turn again, then the answer
    expect(approvals.checked.map((c) => c.toolName).sort()).toEqual(['now', 'now', 'rm', 'rm']);
    // The denial is audited each time the step judged it (as when the approve step re-ran).
    expect(approvals.recorded).toEqual([
      { tool: 'rm', decision: 'denied', by: 'rules' },
      { tool: 'rm', decision: 'denied', by: 'rules' },
    ]);
    expect(h.executed.map((c) => c.name)).toEqual(['now']);
    const messages = (await h.graph.getState(h.config)).values.messages as BaseMessage[];
    expect(messages.filter((m) => AIMessage.isInstance(m) && (m.tool_calls?.length ?? 0) > 0)).toHaveLength(1);
    const denied = messages.find((m) => ToolMessage.isInstance(m) && m.name === 'rm')!;
    expect(String(denied.content)).toMatch(/^Error:/);
  });
});

describe('the approve node, where the agent step did not judge the calls', () => {
  it('judges calls a client wrote as the agent (their verdicts are cleared) before any runs', async () => {
    const approvals = fakeApprovals({ rm: 'deny' });
    const h = harness([{ content: 'first' }, { content: 'after the tools' }], { approvals });
    await h.graph.invoke(h.input, h.config);
    const written = new AIMessage({
      content: '',
      tool_calls: [
        { name: 'now', args: {}, id: 'w1', type: 'tool_call' },
        { name: 'rm', args: {}, id: 'w2', type: 'tool_call' },
      ],
    });
    // What a client's update with `as_node: "agent"` writes (graph/client-update.ts clears the verdicts).
    await h.graph.updateState(h.config, { messages: [written], approvals: {} }, 'agent');
    expect((await h.graph.getState(h.config)).next).toEqual(['approve']);
    expect(await h.nodes(null)).toEqual(['approve', 'tools', 'agent']);
    expect(approvals.checked.map((c) => c.toolCallId).sort()).toEqual(['w1', 'w2']);
    expect(h.executed.map((c) => c.toolCallId)).toEqual(['w1']);
  });
});
