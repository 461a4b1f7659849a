import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { serviceClient, type Bus } from '@agentloop/bus';
import { UnavailableError, errorMessage } from '@agentloop/core';
import { Approval, DecisionKind, RiskLevel, type AuditEntry } from '@agentloop/proto';
import { parseRequest } from '../validation.js';

const AuditQuery = z.object({
  run_id: z.string().max(128).optional(),
  thread_id: z.string().max(128).optional(),
  after_seq: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(1000).optional(),
});

const DECISIONS: Record<number, string> = {
  [DecisionKind.APPROVED]: 'approved',
  [DecisionKind.REJECTED]: 'rejected',
  [DecisionKind.DENIED]: 'denied',
};
const RISKS: Record<number, string> = {
  [RiskLevel.LOW]: 'low',
  [RiskLevel.MEDIUM]: 'medium',
  [RiskLevel.HIGH]: 'high',
  [RiskLevel.CRITICAL]: 'critical',
};

function toApiEntry(e: AuditEntry): Record<string, unknown> {
  return {
    seq: Number(e.seq),
    thread_id: e.threadId,
    run_id: e.runId,
    tool_call_id: e.toolCallId,
    tool: e.toolName,
    args_sha256: e.argsSha256,
    decision: DECISIONS[e.decision] ?? 'unspecified',
    reason: e.reason,
    rule: e.rule,
    risk_level: RISKS[e.riskLevel] ?? 'unspecified',
    // The label the resume carried (typed by the client: not proof of anything)…
    decided_by: e.decidedBy,
    // …and who really answered, set by the server from the resume's API key ('' for the rules' decisions).
    approver_tenant_id: e.approverTenantId,
    approver_key_id: e.approverKeyId,
    comment: e.comment,
    created_at: new Date(Number(e.createdAtMs)).toISOString(),
    prev_hash: e.prevHash,
    hash: e.hash,
  };
}

/**
 * The tenant's tool approval audit trail (seed 001 Part 7; hash-chained by the
 * approval service): `GET /approvals/audit` lists entries oldest first
 * (filters run_id, thread_id, after_seq, limit); `GET /approvals/audit/verify`
 * recomputes the chain. Tenant-scoped by the API key. Each entry carries both the
 * client's `decided_by` label and the server-set approver (`approver_tenant_id`,
 * `approver_key_id`: the tenant and API key id of the resume that decided).
 */
export function registerApprovalRoutes(app: FastifyInstance, bus: Bus | undefined): void {
  const approval = bus ? serviceClient(bus, Approval) : undefined;
  const ask = async <T>(call: (client: NonNullable<typeof approval>) => Promise<T>): Promise<T> => {
    if (!approval) throw new UnavailableError('The approval audit trail is not available: this gateway has no bus to the approval service.');
    try {
      return await call(approval);
    } catch (err) {
      throw new UnavailableError(`The approval service did not answer: ${errorMessage(err)}`, { cause: err });
    }
  };

  app.get('/approvals/audit', async (request) => {
    const q = parseRequest(AuditQuery, request.query, 'query');
    const req = {
      tenantId: request.tenantId,
      runId: q.run_id ?? '',
      threadId: q.thread_id ?? '',
      afterSeq: BigInt(q.after_seq ?? 0),
      limit: q.limit ?? 100,
    };
    const res = await ask((a) => a.listAudit(req, { tenantId: request.tenantId }));
    if (res.error) throw new UnavailableError(`The approval service failed: ${res.error.message}`);
    return { entries: res.entries.map(toApiEntry) };
  });

  app.get('/approvals/audit/verify', async (request) => {
    const res = await ask((a) => a.verifyAudit({ tenantId: request.tenantId }, { tenantId: request.tenantId }));
    if (res.error) throw new UnavailableError(`The approval service failed: ${res.error.message}`);
    return { ok: res.ok, entries: Number(res.entries), first_bad_seq: Number(res.firstBadSeq) || null, detail: res.detail };
  });
}
