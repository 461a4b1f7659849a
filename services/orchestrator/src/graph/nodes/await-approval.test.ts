import { describe, expect, it } from 'vitest';
import { Command } from '@langchain/langgraph';
import type { ApprovalCall, ApprovalVerdict } from '../../approval-client.js';
import { aiCalling, aloneInGraph, config, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import { TOOL_APPROVAL_INTERRUPT, type ApprovalEntry } from '../state.js';
import { awaitApprovalNode } from './await-approval.js';

const pending: ApprovalEntry = { action: 'require_approval', reason: 'risky', risk_level: 'high', rule: 'r', tool: 'rm' };

function fakeApprovals(fail = false) {
  const recorded: Array<{ call: ApprovalCall; decision: string; by: string; approver: unknown }> = [];
  return {
    recorded,
    async check(): Promise<ApprovalVerdict> {
      throw new Error('not asked here');
    },
    async record(call: ApprovalCall, _v: ApprovalVerdict, decision: string, by: string, _c?: string, approver?: unknown) {
      if (fail) throw new Error('audit store down');
      recorded.push({ call, decision, by, approver });
    },
  };
}

describe('await_approval node, alone', () => {
  it('returns the approvals unchanged when no call waits for a human', async () => {
    const approvals = fakeApprovals();
    const node = awaitApprovalNode({ ...runContextOf(fakeCtx()), approvals }, sharedEn());
    const state = stateOf([aiCalling({ name: 'echo', id: 'a' })], { approvals: { a: { ...pending, action: 'allow' } } });
    expect(await node(state, config)).toEqual({ approvals: state.approvals });
    expect(approvals.recorded).toHaveLength(0);
  });

  it('suspends with the call, then records the decision with who resumed it', async () => {
    const approvals = fakeApprovals();
    const ctx = fakeCtx({ apiKeyId: 'k1' });
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(ctx), approvals }, sharedEn()));
    const first = await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a', args: { p: 1 } })], { approvals: { a: pending } }), cfg);
    expect((first as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value).toMatchObject({ type: TOOL_APPROVAL_INTERRUPT, tool_call_id: 'a', tool: 'rm', args: { p: 1 } });
    const out = await graph.invoke(new Command({ resume: { decision: 'approve', by: 'ann' } }), cfg);
    expect(out.approvals.a).toMatchObject({ decision: 'approved', by: 'ann' });
    expect(approvals.recorded).toEqual([{ call: expect.objectContaining({ toolCallId: 'a', toolName: 'rm' }), decision: 'approved', by: 'ann', approver: { tenantId: 't1', keyId: 'k1' } }]);
  });

  it('does not run an approval that could not be recorded', async () => {
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(fakeCtx()), approvals: fakeApprovals(true) }, sharedEn()));
    await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a' })], { approvals: { a: pending } }), cfg);
    const out = await graph.invoke(new Command({ resume: 'yes' }), cfg);
    expect(out.approvals.a!.decision).toBe('not_recorded');
  });
});
