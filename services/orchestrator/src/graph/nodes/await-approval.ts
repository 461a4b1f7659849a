import { interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { errorMessage } from '@agentloop/core';
import type { ApprovalVerdict, HumanDecision } from '../../approval-client.js';
import { hitlRequest, parseApprovalResume } from '../../hitl.js';
import { ctxOf, lastAi, type NodeShared, type RunContextDeps } from '../shared.js';
import { TOOL_APPROVAL_INTERRUPT, type AgentGraphDeps, type AgentStateType, type ApprovalEntry, type RunContext } from '../state.js';
import { approvalCall, approvalContext, type VerdictDeps } from '../approval-verdicts.js';

type AwaitApprovalDeps = RunContextDeps & Pick<AgentGraphDeps, 'approvals'> & { tools?: VerdictDeps['tools'] };

/**
 * An `edit` decision: the edited call is checked by the approval service like any call before it
 * may run (an edit must not get past the rules). Denied → the call is denied by the rules; no
 * verdict → not run (fail closed); allow or require_approval → the human who wrote the edit has
 * approved it. Returns the entry to keep, the verdict to audit and the audit comment.
 */
async function recheckEdit(
  deps: AwaitApprovalDeps,
  ctx: RunContext,
  tc: { id?: string; name: string },
  a: ApprovalEntry & { edited_args: Record<string, unknown> },
): Promise<{ entry: ApprovalEntry; verdict?: ApprovalVerdict; comment: string }> {
  const edited = { id: tc.id, name: tc.name, args: a.edited_args };
  let v: ApprovalVerdict;
  try {
    v = await deps.approvals!.check({ ...approvalCall(ctx, edited, false), ...(await approvalContext(deps, ctx, edited)) });
  } catch (err) {
    ctx.logger.error({ tool: tc.name, tool_call_id: tc.id, err: errorMessage(err) }, 'no approval verdict for the edited call; it will not run');
    return { entry: { ...a, decision: 'unavailable', reason: `the edited call was not checked: ${errorMessage(err)}` }, comment: '' };
  }
  const note = `edited by ${a.by || 'the approver'}: the recorded arguments are the edited ones (re-checked: ${v.action}${v.rule ? `, ${v.rule}` : ''})`;
  const comment = a.comment ? `${note}; ${a.comment}` : note;
  if (v.action === 'deny') {
    ctx.logger.warn({ tool: tc.name, tool_call_id: tc.id, rule: v.rule }, 'edited call denied by the rules; it will not run');
    return { entry: { ...a, action: 'deny', reason: v.reason, risk_level: v.risk_level, rule: v.rule, decision: 'denied', by: 'rules' }, verdict: v, comment };
  }
  return { entry: a, verdict: { action: 'require_approval', reason: a.reason, risk_level: a.risk_level, rule: a.rule }, comment };
}

/**
 * Suspends the run (one interrupt per call, in order) until a human approves or rejects each call
 * that needs it; an unrecognized answer asks again. Decisions go to the audit trail before any call
 * runs: an approval that cannot be recorded does not run the call. Re-executed from the top on
 * resume: LangGraph replays the earlier answers to the earlier interrupts.
 */
export function awaitApprovalNode(deps: AwaitApprovalDeps, shared: Pick<NodeShared, 'texts'>) {
  const { texts } = shared;
  return async (state: AgentStateType, config: LangGraphRunnableConfig) => {
    const ctx = ctxOf(deps, config);
    const calls = lastAi(state.messages)?.tool_calls ?? [];
    const approvals = { ...state.approvals };
    const decided: string[] = [];
    for (const tc of calls) {
      const id = tc.id ?? '';
      const a = approvals[id];
      if (!a || a.action !== 'require_approval' || a.decision !== undefined) continue;
      const request = {
        type: TOOL_APPROVAL_INTERRUPT,
        tool_call_id: id,
        tool: tc.name,
        args: tc.args,
        reason: a.reason,
        risk_level: a.risk_level,
        rule: a.rule,
        // The answers of the `{decision}` form; an edit is made in the langchain v1 form below.
        options: ['approve', 'reject'],
        // langchain v1 human-in-the-loop (what agent-chat-ui renders): one action request per interrupt.
        ...hitlRequest(tc, a.reason, a.risk_level),
      };
      let parsed = parseApprovalResume(interrupt(request), tc.name);
      while (!('answer' in parsed)) parsed = parseApprovalResume(interrupt({ ...request, error: parsed.error ?? texts.approval.badAnswer }), tc.name);
      const { answer } = parsed;
      approvals[id] = {
        ...a,
        decision: answer.decision,
        by: answer.by,
        comment: answer.comment,
        ...(answer.edited_args ? { edited_args: answer.edited_args } : {}),
      };
      decided.push(id);
    }
    // Past the last interrupt: this execution of the node completes, so each decision is counted once.
    for (const id of decided) {
      let a = approvals[id]!;
      const tc = calls.find((c) => (c.id ?? '') === id)!;
      let verdict: ApprovalVerdict | undefined = { ...a, action: 'require_approval' };
      let comment = a.comment ?? '';
      if (a.edited_args) {
        ({ entry: a, verdict, comment } = await recheckEdit(deps, ctx, tc, { ...a, edited_args: a.edited_args }));
        approvals[id] = a;
      }
      if (!verdict) continue; // the edited call got no verdict: not run, nothing decided to record
      try {
        // `by` is the client's label; the tenant and key of the resume are recorded beside it. An
        // edited call is recorded with the arguments it runs with (the audit's args_sha256).
        const recorded = a.edited_args ? { ...tc, args: a.edited_args } : tc;
        await deps.approvals!.record(approvalCall(ctx, recorded, false), verdict, a.decision as HumanDecision, a.by || `tenant:${ctx.tenantId}`, comment, {
          tenantId: ctx.tenantId,
          keyId: ctx.apiKeyId ?? '',
        });
      } catch (err) {
        ctx.logger.error({ tool: a.tool, tool_call_id: id, err: errorMessage(err) }, 'approval decision not recorded');
        if (a.decision === 'approved') approvals[id] = { ...a, decision: 'not_recorded' };
      }
      ctx.logger.info({ tool: a.tool, tool_call_id: id, decision: approvals[id]!.decision, by: a.by || undefined }, 'tool call decided');
    }
    return { approvals };
  };
}
