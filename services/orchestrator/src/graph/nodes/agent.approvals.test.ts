/**
 * The agent step's approval verdicts (issue 9): asked right after the model answered and written
 * with its answer, so no approve step runs in between. The tools node then obeys them.
 */
import { describe, expect, it } from 'vitest';
import type { Command } from '@langchain/langgraph';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { create, ToolMetadataSchema, ToolSpecSchema } from '@agentloop/proto';
import { ScriptedChatModel, type ScriptedTurn } from '../../models/scripted.js';
import type { ToolCallInput, ToolCallResult } from '../../tool-client.js';
import { config, fakeApprovals, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import type { AgentStateType, ApprovalEntry, FinalizeReason } from '../state.js';
import { agentNode, type AgentDeps } from './agent.js';
import { toolsNode } from './tools.js';

const spec = (name: string) =>
  create(ToolSpecSchema, { name, description: name, parametersJsonSchema: '{"type":"object"}', metadata: create(ToolMetadataSchema, {}) });

/** What of the agent step's update these tests read. */
type StepUpdate = { messages: BaseMessage[]; approvals?: Record<string, ApprovalEntry>; finalize_reason?: FinalizeReason };

/** The agent node answering `turns` in order, with the approval service `approvals`, and a tool-runner that records what it runs. */
function setup(turns: ScriptedTurn[], approvals?: ReturnType<typeof fakeApprovals>) {
  const executed: ToolCallInput[] = [];
  const ctx = fakeCtx({}, new ScriptedChatModel(turns));
  const tools = {
    listTools: async () => [spec('echo'), spec('rm')],
    async execute(call: ToolCallInput): Promise<ToolCallResult> {
      executed.push(call);
      return { content: `ran ${call.name}`, isError: false };
    },
  };
  const deps: AgentDeps = { ...runContextOf(ctx), tools, ...(approvals ? { approvals } : {}) };
  const agent = agentNode(deps, sharedEn());
  const runTools = toolsNode(deps, sharedEn());
  /** The agent step, then the tools step on the state the agent's update leaves (as the graph would). */
  const step = async (state: AgentStateType) => {
    const out = (await agent(state, config)) as StepUpdate;
    const after = { ...state, ...out, messages: [...state.messages, ...out.messages] } as AgentStateType;
    return { out, after };
  };
  return { executed, agent, step, runTools };
}

const call = (name: string, args: Record<string, unknown> = {}) => ({ name, args });

describe('agent node: the verdicts of its calls, in the same step', () => {
  it('asks about the bus calls only and writes their verdicts with the answer; a denial is audited', async () => {
    const approvals = fakeApprovals({ rm: 'deny' });
    const { step } = setup([{ tool_calls: [call('echo'), call('rm'), call('todo_read')] }], approvals);
    const { out } = await step(stateOf([new HumanMessage('go')]));
    const ai = out.messages[0] as AIMessage;
    const [echo, rm] = ai.tool_calls!;
    expect(approvals.checked.map((c) => c.toolName).sort()).toEqual(['echo', 'rm']);
    expect(out.approvals![echo!.id!]).toMatchObject({ action: 'allow', tool: 'echo' });
    expect(out.approvals![rm!.id!]).toMatchObject({ action: 'deny', decision: 'denied', by: 'rules' });
    expect(approvals.recorded).toEqual([{ tool: 'rm', decision: 'denied', by: 'rules' }]);
  });

  it('a denied call is never run; the allowed one is', async () => {
    const approvals = fakeApprovals({ rm: 'deny' });
    const { step, runTools, executed } = setup([{ tool_calls: [call('echo'), call('rm')] }], approvals);
    const { after } = await step(stateOf([new HumanMessage('go')]));
    const out = await runTools(after, config);
    expect(executed.map((c) => c.name)).toEqual(['echo']);
    const answers = ((out as Command).update as { messages: ToolMessage[] }).messages;
    expect(answers.find((m) => m.name === 'rm')!.content).toMatch(/^Error:/);
  });

  it('fails closed when the approval service does not answer: the verdict is `unavailable` and the call never runs', async () => {
    const approvals = fakeApprovals({ echo: new Error('no responders') });
    const { step, runTools, executed } = setup([{ tool_calls: [call('echo')] }], approvals);
    const { out, after } = await step(stateOf([new HumanMessage('go')]));
    const id = (out.messages[0] as AIMessage).tool_calls![0]!.id!;
    expect(out.approvals![id]).toMatchObject({ action: 'unavailable', decision: 'unavailable', reason: 'no responders' });
    await runTools(after, config);
    expect(executed).toEqual([]);
  });

  it('a delegated agent has no human to ask: what needs one is denied in the step', async () => {
    const approvals = fakeApprovals({ rm: 'require_approval' });
    const { step } = setup([{ tool_calls: [call('rm')] }], approvals);
    const { out } = await step(stateOf([new HumanMessage('go')], { parent_context: 'parent-run' }));
    expect(Object.values(out.approvals!)).toEqual([expect.objectContaining({ action: 'require_approval', decision: 'denied', by: 'rules' })]);
  });

  it('asks nothing about calls that will not run (loop limit, repeated call), with approvals off, or for a final answer', async () => {
    const atLimit = fakeApprovals({});
    const limit = await setup([{ tool_calls: [call('echo')] }], atLimit).step(stateOf([new HumanMessage('go')], { loops: 2, max_loops: 3 }));
    expect(atLimit.checked).toEqual([]);
    expect(limit.out.approvals).toBeUndefined();

    const repeated = fakeApprovals({});
    const same = () => new AIMessage({ content: '', tool_calls: [{ name: 'echo', args: { q: 1 }, id: 'x', type: 'tool_call' }] });
    const done = () => new ToolMessage({ content: 'r', tool_call_id: 'x' });
    const history = [new HumanMessage('go'), same(), done(), same(), done()];
    await setup([{ tool_calls: [call('echo', { q: 1 })] }], repeated).step(stateOf(history, { loops: 2 }));
    expect(repeated.checked).toEqual([]);

    const off = await setup([{ tool_calls: [call('echo')] }]).step(stateOf([new HumanMessage('go')]));
    expect(off.out.approvals).toBeUndefined();

    const answered = fakeApprovals({});
    const final = await setup([{ content: 'done' }], answered).step(stateOf([new HumanMessage('go')]));
    expect(answered.checked).toEqual([]);
    expect(final.out.approvals).toBeUndefined();
  });

  it('replaces the verdicts of the previous calls', async () => {
    const approvals = fakeApprovals({});
    const stale: Record<string, ApprovalEntry> = { old: { action: 'allow', reason: '', risk_level: 'low', rule: '', tool: 'echo' } };
    const { out } = await setup([{ tool_calls: [call('echo')] }], approvals).step(stateOf([new HumanMessage('go')], { approvals: stale }));
    expect(Object.keys(out.approvals!)).not.toContain('old');
  });
});

describe('agent node: finalize_reason', () => {
  it('clears a stop reason an earlier run left once the model answers; writes nothing when there is none', async () => {
    const stale = await setup([{ content: 'done' }]).step(stateOf([new HumanMessage('go')], { finalize_reason: 'loop_limit' }));
    expect(stale.out.finalize_reason).toBeNull();
    const fresh = await setup([{ content: 'done' }]).step(stateOf([new HumanMessage('go')]));
    expect('finalize_reason' in fresh.out).toBe(false);
  });
});
