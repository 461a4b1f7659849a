import { describe, expect, it } from 'vitest';
import { Command } from '@langchain/langgraph';
import type { ApprovalCall, ApprovalVerdict } from '../../approval-client.js';
import { aiCalling, aloneInGraph, config, fakeCtx, runContextOf, sharedEn, stateOf } from '../testing.js';
import { TOOL_APPROVAL_INTERRUPT, type ApprovalEntry } from '../state.js';
import { awaitApprovalNode } from './await-approval.js';

const pending: ApprovalEntry = { action: 'require_approval', reason: 'risky', risk_level: 'high', rule: 'r', tool: 'rm' };

function fakeApprovals(fail = false, verdict?: (call: ApprovalCall) => ApprovalVerdict) {
  const recorded: Array<{ call: ApprovalCall; decision: string; by: string; approver: unknown; comment?: string; verdict?: ApprovalVerdict }> = [];
  const checked: ApprovalCall[] = [];
  return {
    recorded,
    checked,
    async check(call: ApprovalCall): Promise<ApprovalVerdict> {
      checked.push(call);
      if (!verdict) throw new Error('not asked here');
      return verdict(call);
    },
    async record(call: ApprovalCall, v: ApprovalVerdict, decision: string, by: string, comment?: string, approver?: unknown) {
      if (fail) throw new Error('audit store down');
      recorded.push({ call, decision, by, approver, ...(verdict ? { comment, verdict: v } : {}) });
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
    expect((first as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value).toMatchObject({
      type: TOOL_APPROVAL_INTERRUPT,
      tool_call_id: 'a',
      tool: 'rm',
      args: { p: 1 },
    });
    const out = await graph.invoke(new Command({ resume: { decision: 'approve', by: 'ann' } }), cfg);
    expect(out.approvals.a).toMatchObject({ decision: 'approved', by: 'ann' });
    expect(approvals.recorded).toEqual([
      { call: expect.objectContaining({ toolCallId: 'a', toolName: 'rm' }), decision: 'approved', by: 'ann', approver: { tenantId: 't1', keyId: 'k1' } },
    ]);
  });

  it('does not run an approval that could not be recorded', async () => {
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(fakeCtx()), approvals: fakeApprovals(true) }, sharedEn()));
    await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a' })], { approvals: { a: pending } }), cfg);
    const out = await graph.invoke(new Command({ resume: 'yes' }), cfg);
    expect(out.approvals.a!.decision).toBe('not_recorded');
  });

  it('raises the langchain v1 shape beside its own fields', async () => {
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(fakeCtx()), approvals: fakeApprovals() }, sharedEn()));
    const first = await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a', args: { p: 1 } })], { approvals: { a: pending } }), cfg);
    expect((first as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value).toEqual({
      type: TOOL_APPROVAL_INTERRUPT,
      tool_call_id: 'a',
      tool: 'rm',
      args: { p: 1 },
      reason: 'risky',
      risk_level: 'high',
      rule: 'r',
      options: ['approve', 'reject'],
      action_requests: [{ name: 'rm', args: { p: 1 }, description: 'rm needs approval: risky (risk: high)' }],
      review_configs: [{ action_name: 'rm', allowed_decisions: ['approve', 'edit', 'reject'] }],
    });
  });

  it('{decisions: [reject + message]}: rejected, the message kept for the model and the audit', async () => {
    const approvals = fakeApprovals();
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(fakeCtx()), approvals }, sharedEn()));
    await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a' })], { approvals: { a: pending } }), cfg);
    const out = await graph.invoke(new Command({ resume: { decisions: [{ type: 'reject', message: 'not today' }] } }), cfg);
    expect(out.approvals.a).toMatchObject({ decision: 'rejected', comment: 'not today' });
    expect(approvals.recorded.map((r) => r.decision)).toEqual(['rejected']);
  });

  it('edit: the edited arguments are re-checked, kept for the tools node and audited as an edit', async () => {
    const approvals = fakeApprovals(false, () => ({ action: 'allow', reason: '', risk_level: 'low', rule: '' }));
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(fakeCtx({ apiKeyId: 'k1' })), approvals }, sharedEn()));
    await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a', args: { p: 1 } })], { approvals: { a: pending } }), cfg);
    const out = await graph.invoke(new Command({ resume: { decisions: [{ type: 'edit', edited_action: { name: 'rm', args: { p: 2 } } }], by: 'ann' } }), cfg);
    expect(out.approvals.a).toMatchObject({ decision: 'approved', by: 'ann', edited_args: { p: 2 } });
    expect(approvals.checked).toEqual([expect.objectContaining({ toolCallId: 'a', toolName: 'rm', args: { p: 2 } })]);
    expect(approvals.recorded).toEqual([
      {
        call: expect.objectContaining({ toolCallId: 'a', args: { p: 2 } }),
        decision: 'approved',
        by: 'ann',
        approver: { tenantId: 't1', keyId: 'k1' },
        comment: 'edited by ann: the recorded arguments are the edited ones (re-checked: allow)',
        verdict: { action: 'require_approval', reason: 'risky', risk_level: 'high', rule: 'r' },
      },
    ]);
  });

  it("edit the rules deny: denied, recorded as the rules' denial of the edited call", async () => {
    const approvals = fakeApprovals(false, () => ({ action: 'deny', reason: 'never', risk_level: 'critical', rule: 'tool:rm:deny' }));
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(fakeCtx()), approvals }, sharedEn()));
    await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a', args: { p: 1 } })], { approvals: { a: pending } }), cfg);
    const out = await graph.invoke(new Command({ resume: { decisions: [{ type: 'edit', edited_action: { name: 'rm', args: { p: '/' } } }] } }), cfg);
    expect(out.approvals.a).toMatchObject({ action: 'deny', decision: 'denied', by: 'rules', reason: 'never', rule: 'tool:rm:deny', edited_args: { p: '/' } });
    expect(approvals.recorded).toEqual([
      expect.objectContaining({
        decision: 'denied',
        by: 'rules',
        call: expect.objectContaining({ args: { p: '/' } }),
        comment: expect.stringContaining('re-checked: deny, tool:rm:deny'),
      }),
    ]);
  });

  it('edit without a verdict: not run, nothing recorded (fail closed)', async () => {
    const approvals = fakeApprovals(false, () => {
      throw new Error('approval service down');
    });
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(fakeCtx()), approvals }, sharedEn()));
    await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a' })], { approvals: { a: pending } }), cfg);
    const out = await graph.invoke(new Command({ resume: { decisions: [{ type: 'edit', edited_action: { name: 'rm', args: { p: 2 } } }] } }), cfg);
    expect(out.approvals.a).toMatchObject({ decision: 'unavailable', reason: expect.stringContaining('approval service down') });
    expect(approvals.recorded).toHaveLength(0);
  });

  it('an edit naming another tool asks again, saying why', async () => {
    const { graph, config: cfg } = aloneInGraph(awaitApprovalNode({ ...runContextOf(fakeCtx()), approvals: fakeApprovals() }, sharedEn()));
    await graph.invoke(stateOf([aiCalling({ name: 'rm', id: 'a' })], { approvals: { a: pending } }), cfg);
    const again = await graph.invoke(new Command({ resume: { decisions: [{ type: 'edit', edited_action: { name: 'ls', args: {} } }] } }), cfg);
    expect((again as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value).toMatchObject({
      tool: 'rm',
      error: expect.stringContaining('edit refused'),
    });
  });
});
