import { requireTenant, toWireEntry, type ApprovalMethod, type HandlerContext } from './common.js';

/** Entries per reply by default, and at most. */
export const AUDIT_PAGE_DEFAULT = 100;
export const AUDIT_PAGE_MAX = 1000;

/** ListAudit (`agentloop.approval.audit`): the tenant's entries after `after_seq`, oldest first, optionally of one run or thread. */
export function listAudit(ctx: HandlerContext): ApprovalMethod<'listAudit'> {
  return async (req, call) => {
    const tenant = requireTenant(call.tenantId);
    const afterSeq = req.afterSeq > 0n ? Number(req.afterSeq > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : req.afterSeq) : 0;
    const entries = await ctx.store.listAuditEntries(tenant, {
      ...(req.runId ? { runId: req.runId } : {}),
      ...(req.threadId ? { threadId: req.threadId } : {}),
      afterSeq,
      limit: Math.min(AUDIT_PAGE_MAX, req.limit || AUDIT_PAGE_DEFAULT),
    });
    return { entries: entries.map(toWireEntry) };
  };
}
