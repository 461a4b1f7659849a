import type { RequestHandler } from '@agentloop/bus';
import { RecordDecisionRequestSchema, RecordDecisionResponseSchema, create, toBinary, type RecordDecisionResponse } from '@agentloop/proto';
import { instruments } from '@agentloop/telemetry';
import { ApprovalError } from '../errors.js';
import { argsSha256, checkTenant, decisionName, decode, parseArgs, requireId, riskName, toWire, toWireEntry, type HandlerContext } from './common.js';

/**
 * `agentloop.approval.record`: appends a decision to the tenant's audit chain.
 * The same (run, tool call) again replies with the first entry and duplicate=true.
 */
export function recordHandler(ctx: HandlerContext): RequestHandler {
  return async (msg) => {
    let res: RecordDecisionResponse;
    let log = ctx.logger;
    try {
      const req = decode(RecordDecisionRequestSchema, msg.data);
      const tenant = checkTenant(msg, req.tenantId);
      log = ctx.logger.child({ tenant, run_id: req.runId, thread_id: req.threadId });
      const decision = decisionName(req.decision);
      if (!decision) throw new ApprovalError('INVALID_ARGUMENT', 'decision must be APPROVED, REJECTED or DENIED');
      const args = parseArgs(req.argsJson);
      const { entry, duplicate } = await ctx.store.appendAuditEntry({
        tenantId: tenant,
        threadId: requireId('thread_id', req.threadId),
        runId: requireId('run_id', req.runId),
        toolCallId: requireId('tool_call_id', req.toolCallId),
        toolName: requireId('tool_name', req.toolName),
        argsSha256: argsSha256(args),
        decision,
        reason: req.reason,
        rule: req.rule,
        riskLevel: riskName(req.riskLevel),
        // Denials are made by the rules when the caller does not say otherwise.
        decidedBy: req.decidedBy || (decision === 'denied' ? 'rules' : ''),
        comment: req.comment,
      });
      if (!duplicate) instruments().approvals.add(1, { decision, 'agentloop.tool': entry.toolName });
      log.info({ seq: entry.seq, tool: entry.toolName, tool_call_id: entry.toolCallId, decision, rule: entry.rule, duplicate, args_sha256: entry.argsSha256 }, 'decision recorded');
      res = create(RecordDecisionResponseSchema, { entry: toWireEntry(entry), duplicate });
    } catch (err) {
      res = create(RecordDecisionResponseSchema, { error: toWire(err, log, 'record') });
    }
    return toBinary(RecordDecisionResponseSchema, res);
  };
}
