import { instruments } from '@agentloop/telemetry';
import { ApprovalError } from '../errors.js';
import {
  argsSha256Paced,
  decisionName,
  parseArgs,
  requireId,
  requireTenant,
  riskName,
  toWireEntry,
  type ApprovalMethod,
  type HandlerContext,
} from './common.js';

/** An approver key id as the gateway makes them ("key_" + 12 hex digits), or any other id of the same alphabet. */
const KEY_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * The authenticated approver of a decision (RecordDecisionRequest fields 13, 14), set by the
 * gateway from the resume's API key and passed on by the orchestrator: empty for the rules'
 * denials and when the gateway has no API keys. It must be the entry's own tenant.
 */
function approverOf(tenant: string, approverTenantId: string, approverKeyId: string): { approverTenantId: string; approverKeyId: string } {
  if (approverTenantId !== '' && approverTenantId !== tenant) {
    throw new ApprovalError('PERMISSION_DENIED', 'Permission denied: the approver belongs to another tenant than the decision it answers');
  }
  if (approverKeyId !== '') {
    if (approverTenantId === '') throw new ApprovalError('INVALID_ARGUMENT', 'approver_key_id needs approver_tenant_id');
    if (!KEY_ID.test(approverKeyId)) throw new ApprovalError('INVALID_ARGUMENT', 'approver_key_id: expected 1-128 characters of A-Z a-z 0-9 _ . : -');
  }
  return { approverTenantId, approverKeyId };
}

/**
 * `agentloop.approval.record`: appends a decision to the tenant's audit chain.
 * The same (run, tool call) again replies with the first entry and duplicate=true
 * — when it is the same call (tool and arguments) with the same decision and
 * approver. A different call under an id already recorded is refused with
 * CONFLICT, never answered as a duplicate: the caller must not take the first
 * call's decision for the second's (issue 18: two calls sharing one id).
 */
export function record(ctx: HandlerContext): ApprovalMethod<'record'> {
  return async (req, call) => {
    const tenant = requireTenant(call.tenantId);
    const log = ctx.logger.child({ tenant, run_id: req.runId, thread_id: req.threadId });
    const decision = decisionName(req.decision);
    if (!decision) throw new ApprovalError('INVALID_ARGUMENT', 'decision must be APPROVED, REJECTED or DENIED');
    const args = parseArgs(req.argsJson);
    const approver = approverOf(tenant, req.approverTenantId, req.approverKeyId);
    const wanted = {
      tenantId: tenant,
      threadId: requireId('thread_id', req.threadId),
      runId: requireId('run_id', req.runId),
      toolCallId: requireId('tool_call_id', req.toolCallId),
      toolName: requireId('tool_name', req.toolName),
      argsSha256: await argsSha256Paced(args),
      decision,
      reason: req.reason,
      rule: req.rule,
      riskLevel: riskName(req.riskLevel),
      // A label as the resume said; denials are made by the rules when the caller does not say otherwise.
      decidedBy: req.decidedBy || (decision === 'denied' ? 'rules' : ''),
      comment: req.comment,
      ...approver,
    };
    const { entry, duplicate } = await ctx.store.appendAuditEntry(wanted);
    if (duplicate) {
      const differs = (['threadId', 'toolName', 'argsSha256', 'decision', 'approverTenantId', 'approverKeyId'] as const).filter((k) => entry[k] !== wanted[k]);
      if (differs.length > 0) {
        log.warn(
          {
            seq: entry.seq,
            tool_call_id: entry.toolCallId,
            tool: wanted.toolName,
            recorded_tool: entry.toolName,
            args_sha256: wanted.argsSha256,
            recorded_args_sha256: entry.argsSha256,
            differs,
          },
          'decision refused: another call was already recorded under this tool call id',
        );
        throw new ApprovalError(
          'CONFLICT',
          `tool_call_id ${JSON.stringify(entry.toolCallId)} of run ${entry.runId} is already recorded (audit entry ${entry.seq}) for a different call or decision (${differs.join(', ')}); each tool call needs its own id`,
        );
      }
    }
    if (!duplicate) instruments().approvals.add(1, { decision, 'agentloop.tool': entry.toolName });
    log.info(
      {
        seq: entry.seq,
        tool: entry.toolName,
        tool_call_id: entry.toolCallId,
        decision,
        rule: entry.rule,
        duplicate,
        args_sha256: entry.argsSha256,
        approver_key_id: entry.approverKeyId || undefined,
      },
      'decision recorded',
    );
    return { entry: toWireEntry(entry), duplicate };
  };
}
