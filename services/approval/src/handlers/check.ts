import { ApprovalAction } from '@agentloop/proto';
import { instruments } from '@agentloop/telemetry';
import { ApprovalError } from '../errors.js';
import type { Action, Verdict } from '../rules.js';
import { argsSha256Paced, parseArgs, requireTenant, RISK_WIRE, type ApprovalMethod, type HandlerContext } from './common.js';

const ACTION_WIRE: Record<Action, ApprovalAction> = {
  allow: ApprovalAction.ALLOW,
  require_approval: ApprovalAction.REQUIRE_APPROVAL,
  deny: ApprovalAction.DENY,
};

const DISABLED: Verdict = { action: 'allow', reason: 'Approval is disabled (APPROVAL_ENABLED=false)', risk: 'unspecified', rule: 'disabled' };

/** Check (`agentloop.approval.check`): the rules' verdict on one tool call. Always replies; failures are in `error`. */
export function check(ctx: HandlerContext): ApprovalMethod<'check'> {
  return async (req, call) => {
    const tenant = requireTenant(call.tenantId);
    if (req.toolName.trim() === '') throw new ApprovalError('INVALID_ARGUMENT', 'tool_name is required');
    const args = parseArgs(req.argsJson);
    const v = ctx.enabled ? await ctx.rules().check(req.toolName, args, { precedingText: req.precedingText, resolvedPaths: req.resolvedPaths }) : DISABLED;
    instruments().approvals.add(1, { verdict: v.action, 'agentloop.tool': req.toolName });
    // The argument values may hold secrets: only their hash is logged. An allowed call is logged at
    // debug, off by default: then neither the child logger nor the hash is made (issue 9: every
    // bus tool call of a run is checked here).
    const reply = { action: ACTION_WIRE[v.action], reason: v.reason, riskLevel: RISK_WIRE[v.risk], rule: v.rule };
    const level = v.action === 'allow' ? 'debug' : 'info';
    if (!ctx.logger.isLevelEnabled(level)) return reply;
    ctx.logger.child({ tenant, run_id: req.runId, thread_id: req.threadId })[level](
      {
        tool: req.toolName,
        tool_call_id: req.toolCallId,
        subagent: req.subagent,
        action: v.action,
        rule: v.rule,
        risk: v.risk,
        args_sha256: await argsSha256Paced(args),
      },
      v.action === 'allow' ? 'tool call allowed' : 'tool call needs a decision',
    );
    return reply;
  };
}
