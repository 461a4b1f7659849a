import { AuditChainVerifier, type AuditChainProblem, type Store } from '@agentloop/store';
import { requireTenant, type ApprovalMethod, type HandlerContext } from './common.js';

const PAGE = 1000;

/**
 * Recomputes a tenant's chain from its first entry up to the head read at the
 * start (entries appended meanwhile are left for the next verification), and
 * compares its end with the head, which catches entries deleted at the end.
 */
export async function verifyTrail(store: Store, tenantId: string): Promise<{ entries: number; problem: AuditChainProblem | undefined }> {
  for (let attempt = 1; ; attempt++) {
    const head = await store.getAuditHead(tenantId);
    const last = head?.seq ?? Number.MAX_SAFE_INTEGER;
    const v = new AuditChainVerifier();
    let problem: AuditChainProblem | undefined;
    for (let after = 0; !problem && after < last;) {
      const page = (await store.listAuditEntries(tenantId, { afterSeq: after, limit: PAGE })).filter((e) => e.seq <= last);
      problem = v.add(page);
      if (page.length < PAGE) break;
      after = page[page.length - 1]!.seq;
    }
    problem ??= v.finish(head);
    // No head yet but entries: the tenant's first append may have completed while we read; once more.
    if (problem && !head && attempt === 1) continue;
    return { entries: v.count, problem };
  }
}

/** VerifyAudit (`agentloop.approval.verify`): is the tenant's audit trail intact, and if not, from which entry on. */
export function verifyAudit(ctx: HandlerContext): ApprovalMethod<'verifyAudit'> {
  return async (_req, call) => {
    const tenant = requireTenant(call.tenantId);
    const log = ctx.logger.child({ tenant });
    const { entries, problem } = await verifyTrail(ctx.store, tenant);
    if (problem) log.error({ seq: problem.seq, detail: problem.detail }, 'audit trail verification FAILED');
    return {
      ok: !problem,
      entries: BigInt(entries),
      firstBadSeq: BigInt(problem?.seq ?? 0),
      detail: problem?.detail ?? `${entries} entries verified`,
    };
  };
}
