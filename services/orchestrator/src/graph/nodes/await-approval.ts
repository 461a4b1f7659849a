import { interrupt, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { errorMessage } from '@agentloop/core';
import { instruments } from '@agentloop/telemetry';
import { parseApprovalAnswer, type HumanDecision } from '../../approval-client.js';
import { ctxOf, lastAi, type NodeShared, type RunContextDeps } from '../shared.js';
import { TOOL_APPROVAL_INTERRUPT, type AgentGraphDeps, type AgentStateType } from '../state.js';
import { approvalCall } from './approve.js';

/**
 * Suspends the run (one interrupt per call, in order) until a human approves or rejects each call
 * that needs it; an unrecognized answer asks again. Decisions go to the audit trail before any call
 * runs: an approval that cannot be recorded does not run the call. Re-executed from the top on
 * resume: LangGraph replays the earlier answers to the earlier interrupts.
 */
export function awaitApprovalNode(deps: RunContextDeps & Pick<AgentGraphDeps, 'approvals'>, shared: Pick<NodeShared, 'texts'>) {
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
        options: ['approve', 'reject'],
      };
      let answer = parseApprovalAnswer(interrupt(request));
      while (!answer) answer = parseApprovalAnswer(interrupt({ ...request, error: texts.approval.badAnswer }));
      approvals[id] = { ...a, decision: answer.decision, by: answer.by, comment: answer.comment };
      decided.push(id);
    }
    // Past the last interrupt: this execution of the node completes, so each decision is counted once.
    for (const id of decided) {
      const a = approvals[id]!;
      instruments().approvals.add(1, { verdict: a.decision ?? 'unknown', 'agentloop.tool': a.tool });
      const tc = calls.find((c) => (c.id ?? '') === id)!;
      try {
        // `by` is the client's label; the tenant and key of the resume are recorded beside it.
        await deps.approvals!.record(approvalCall(ctx, tc, false), { ...a, action: 'require_approval' }, a.decision as HumanDecision, a.by || `tenant:${ctx.tenantId}`, a.comment ?? '', {
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
