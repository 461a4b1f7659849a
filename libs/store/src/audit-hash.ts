import { createHash } from 'node:crypto';
import type { AuditEntry } from './types.js';

/** prev_hash of a tenant's first entry. */
export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/**
 * SHA-256 (hex) of an audit entry: its predecessor's hash and every field,
 * as a JSON array in a fixed order. Changing, inserting or deleting an entry
 * changes this hash or breaks the next entry's `prev_hash`.
 */
export function auditEntryHash(e: Omit<AuditEntry, 'hash'>): string {
  const canonical = JSON.stringify([
    e.prevHash,
    e.tenantId,
    e.seq,
    e.threadId,
    e.runId,
    e.toolCallId,
    e.toolName,
    e.argsSha256,
    e.decision,
    e.reason,
    e.rule,
    e.riskLevel,
    e.decidedBy,
    e.comment,
    e.createdAtMs,
  ]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** Recomputes a chain (entries oldest first, from seq 1): the first entry that does not match, or undefined. */
export function verifyAuditChain(entries: readonly AuditEntry[]): { seq: number; detail: string } | undefined {
  let prev = AUDIT_GENESIS_HASH;
  let expectedSeq = 1;
  for (const e of entries) {
    if (e.seq !== expectedSeq) return { seq: expectedSeq, detail: `entry ${expectedSeq} is missing (found ${e.seq} next)` };
    if (e.prevHash !== prev) return { seq: e.seq, detail: `entry ${e.seq} does not follow the hash of entry ${e.seq - 1}` };
    const hash = auditEntryHash(e);
    if (hash !== e.hash) return { seq: e.seq, detail: `entry ${e.seq} was altered (its content does not match its hash)` };
    prev = e.hash;
    expectedSeq++;
  }
  return undefined;
}
