/**
 * The approval audit trail: a per-tenant hash chain of tool approval decisions (see
 * `audit-hash.ts`). Appends are serialized per tenant across processes by locking the chain head
 * row (`approval_audit_heads`): FOR UPDATE on MySQL, the SQLite write lock (BEGIN IMMEDIATE).
 */
import type { Kysely } from 'kysely';
import { InvalidArgumentError } from '@agentloop/core';
import { AUDIT_GENESIS_HASH, auditEntryHash } from '../audit-hash.js';
import type { Database } from '../schema.js';
import type { AuditDecision, AuditEntry, AuditHead, AuditListFilter, AuditRiskLevel, NewAuditEntry } from '../types.js';
import type { SqlWriter } from '../write-transaction.js';
import type { RepositoryContext } from './context.js';
import { checkId, toAudit } from './rows.js';

export class AuditRepository {
  constructor(
    private readonly ctx: RepositoryContext,
    /** The store's writer: appends take the same transaction primitive as `RunLifecycle`. */
    private readonly writer: SqlWriter,
  ) {}

  async append(input: NewAuditEntry): Promise<{ entry: AuditEntry; duplicate: boolean }> {
    const e = auditInput(input);
    const head0 = { tenant_id: e.tenantId, seq: 0, hash: AUDIT_GENESIS_HASH };
    if (this.ctx.dialect === 'mysql') {
      // The head row exists before any append locks it (created outside the transaction: inserting it
      // inside would take gap locks that deadlock concurrent first appends).
      await this.ctx.db.insertInto('approval_audit_heads').ignore().values(head0).execute();
      return this.writer.writeTransaction((trx) => this.appendLocked(trx, e, true));
    }
    // SQLite: BEGIN IMMEDIATE serializes appends from several connections to one file.
    return this.writer.sqliteImmediate(async (conn) => {
      await conn
        .insertInto('approval_audit_heads')
        .values(head0)
        .onConflict((oc) => oc.column('tenant_id').doNothing())
        .execute();
      return this.appendLocked(conn, e, false);
    });
  }

  async get(tenantId: string, seq: number): Promise<AuditEntry | undefined> {
    if (!Number.isSafeInteger(seq) || seq < 1) return undefined;
    const row = await this.ctx.db.selectFrom('approval_audit').selectAll().where('tenant_id', '=', tenantId).where('seq', '=', seq).executeTakeFirst();
    return row ? toAudit(row) : undefined;
  }

  async head(tenantId: string): Promise<AuditHead | undefined> {
    const row = await this.ctx.db.selectFrom('approval_audit_heads').select(['seq', 'hash']).where('tenant_id', '=', tenantId).executeTakeFirst();
    return row ? { seq: Number(row.seq), hash: row.hash } : undefined;
  }

  async list(tenantId: string, filter: AuditListFilter = {}): Promise<AuditEntry[]> {
    const rows = await this.ctx.db
      .selectFrom('approval_audit')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('seq', '>', Math.max(0, Math.floor(filter.afterSeq ?? 0)))
      .$if(filter.runId !== undefined && filter.runId !== '', (q) => q.where('run_id', '=', filter.runId as string))
      .$if(filter.threadId !== undefined && filter.threadId !== '', (q) => q.where('thread_id', '=', filter.threadId as string))
      .orderBy('seq')
      .limit(Math.min(10_000, Math.max(1, Math.floor(filter.limit ?? 100))))
      .execute();
    return rows.map(toAudit);
  }

  /** The append proper, inside the transaction that holds the tenant's head row. */
  private async appendLocked(db: Kysely<Database>, e: ValidAuditEntry, forUpdate: boolean): Promise<{ entry: AuditEntry; duplicate: boolean }> {
    let q = db.selectFrom('approval_audit_heads').selectAll().where('tenant_id', '=', e.tenantId);
    if (forUpdate) q = q.forUpdate();
    const head = await q.executeTakeFirstOrThrow();
    const existing = await db
      .selectFrom('approval_audit')
      .selectAll()
      .where('tenant_id', '=', e.tenantId)
      .where('run_id', '=', e.runId)
      .where('tool_call_id', '=', e.toolCallId)
      .executeTakeFirst();
    if (existing) return { entry: toAudit(existing), duplicate: true };
    const entry: AuditEntry = { ...e, seq: Number(head.seq) + 1, createdAtMs: this.ctx.now(), prevHash: head.hash, hash: '' };
    entry.hash = auditEntryHash(entry);
    await db
      .insertInto('approval_audit')
      .values({
        tenant_id: entry.tenantId,
        seq: entry.seq,
        thread_id: entry.threadId,
        run_id: entry.runId,
        tool_call_id: entry.toolCallId,
        tool_name: entry.toolName,
        args_sha256: entry.argsSha256,
        decision: entry.decision,
        reason: entry.reason,
        rule: entry.rule,
        risk_level: entry.riskLevel,
        decided_by: entry.decidedBy,
        comment: entry.comment,
        approver_tenant_id: entry.approverTenantId,
        approver_key_id: entry.approverKeyId,
        created_at: entry.createdAtMs,
        prev_hash: entry.prevHash,
        hash: entry.hash,
      })
      .execute();
    await db.updateTable('approval_audit_heads').set({ seq: entry.seq, hash: entry.hash }).where('tenant_id', '=', e.tenantId).execute();
    return { entry, duplicate: false };
  }
}

// ---------------------------------------------------------------------------
// Validation of a new entry

const AUDIT_DECISIONS: ReadonlySet<string> = new Set<AuditDecision>(['approved', 'rejected', 'denied']);
const AUDIT_RISK_LEVELS: ReadonlySet<string> = new Set<AuditRiskLevel>(['low', 'medium', 'high', 'critical', 'unspecified']);
/** Longest free-text field of an audit entry (reason, rule, decided_by, comment), in UTF-16 units. */
const AUDIT_TEXT_MAX = 16_000;

/** A new entry after `auditInput`: checked, storable, the approver identity filled in ('' when none). */
type ValidAuditEntry = Omit<AuditEntry, 'seq' | 'createdAtMs' | 'prevHash' | 'hash'>;

/**
 * Validates a new entry and makes its text storable as-is: lone UTF-16
 * surrogates (which a database would replace, silently changing the hashed
 * content) become U+FFFD, and long texts are cut without splitting a pair.
 */
function auditInput(e: NewAuditEntry): ValidAuditEntry {
  checkId('tenantId', e.tenantId);
  checkId('threadId', e.threadId);
  checkId('runId', e.runId);
  checkId('toolCallId', e.toolCallId);
  checkId('toolName', wellFormed(e.toolName));
  if (!/^[0-9a-f]{64}$/.test(e.argsSha256)) throw new InvalidArgumentError('Invalid argsSha256: expected 64 lowercase hex digits');
  if (!AUDIT_DECISIONS.has(e.decision)) throw new InvalidArgumentError(`Invalid decision ${JSON.stringify(e.decision)}: expected approved, rejected or denied`);
  if (!AUDIT_RISK_LEVELS.has(e.riskLevel))
    throw new InvalidArgumentError(`Invalid riskLevel ${JSON.stringify(e.riskLevel)}: expected low, medium, high, critical or unspecified`);
  const approverTenantId = e.approverTenantId ?? '';
  const approverKeyId = e.approverKeyId ?? '';
  // Ids, or '' when no human (or no authenticated one) answered; a key id without its tenant says nothing.
  if (approverTenantId !== '') {
    checkId('approverTenantId', approverTenantId);
    // A tenant's keys answer only that tenant's runs.
    if (approverTenantId !== e.tenantId) throw new InvalidArgumentError("Invalid approverTenantId: the approver must belong to the entry's tenant");
  }
  if (approverKeyId !== '') {
    checkId('approverKeyId', approverKeyId);
    if (approverTenantId === '') throw new InvalidArgumentError('Invalid approver: approverKeyId given without approverTenantId');
  }
  const text = (s: string) => {
    let out = wellFormed(s);
    if (out.length > AUDIT_TEXT_MAX) out = out.slice(0, /[\uD800-\uDBFF]/.test(out[AUDIT_TEXT_MAX - 1] ?? '') ? AUDIT_TEXT_MAX - 1 : AUDIT_TEXT_MAX);
    return out;
  };
  return {
    ...e,
    toolName: wellFormed(e.toolName),
    reason: text(e.reason),
    rule: text(e.rule),
    decidedBy: text(e.decidedBy),
    comment: text(e.comment),
    approverTenantId,
    approverKeyId,
  };
}

/** The string with lone surrogates replaced by U+FFFD (String.prototype.toWellFormed, before ES2024). */
function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
