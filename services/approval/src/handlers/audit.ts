import type { RequestHandler } from '@agentloop/bus';
import { ListAuditRequestSchema, ListAuditResponseSchema, create, toBinary, type ListAuditResponse } from '@agentloop/proto';
import { checkTenant, decode, toWire, toWireEntry, type HandlerContext } from './common.js';

/** Entries per reply by default, and at most. */
export const AUDIT_PAGE_DEFAULT = 100;
export const AUDIT_PAGE_MAX = 1000;

/** `agentloop.approval.audit`: the tenant's entries after `after_seq`, oldest first, optionally of one run or thread. */
export function auditHandler(ctx: HandlerContext): RequestHandler {
  return async (msg) => {
    let res: ListAuditResponse;
    let log = ctx.logger;
    try {
      const req = decode(ListAuditRequestSchema, msg.data);
      const tenant = checkTenant(msg, req.tenantId);
      log = ctx.logger.child({ tenant });
      const afterSeq = req.afterSeq > 0n ? Number(req.afterSeq > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : req.afterSeq) : 0;
      const entries = await ctx.store.listAuditEntries(tenant, {
        ...(req.runId ? { runId: req.runId } : {}),
        ...(req.threadId ? { threadId: req.threadId } : {}),
        afterSeq,
        limit: Math.min(AUDIT_PAGE_MAX, req.limit || AUDIT_PAGE_DEFAULT),
      });
      res = create(ListAuditResponseSchema, { entries: entries.map(toWireEntry) });
    } catch (err) {
      res = create(ListAuditResponseSchema, { error: toWire(err, log, 'audit') });
    }
    return toBinary(ListAuditResponseSchema, res);
  };
}
