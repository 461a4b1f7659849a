import { createHash } from 'node:crypto';
import type { AuditEntry, AuditHead } from './types.js';

/** prev_hash of a tenant's first entry. */
export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/**
 * SHA-256 (hex) of an audit entry: its predecessor's hash and every field,
 * as a JSON array in a fixed order. Changing, inserting or deleting an entry
 * changes this hash or breaks the next entry's `prev_hash`. The one definition
 * used both to write entries and to verify them.
 *
 * How the form grows: fields added after the first version (so far the
 * approver identity, migration 0008) are appended to the array only when one
 * of them is set. An entry written before they existed has them empty, so its
 * canonical form, and its hash, are exactly what the older code computed and
 * old trails keep verifying. The array's length tells the forms apart, so no
 * content can be read both ways: blanking a set approver on an entry changes
 * its hash like any other edit.
 */
export function auditEntryHash(
  e: Omit<AuditEntry, 'hash' | 'approverTenantId' | 'approverKeyId'> & Partial<Pick<AuditEntry, 'approverTenantId' | 'approverKeyId'>>,
): string {
  const fields: Array<string | number> = [
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
  ];
  // v2 (migration 0008): the server-set approver identity.
  const approverTenantId = e.approverTenantId ?? '';
  const approverKeyId = e.approverKeyId ?? '';
  if (approverTenantId !== '' || approverKeyId !== '') fields.push(approverTenantId, approverKeyId);
  return createHash('sha256').update(JSON.stringify(fields), 'utf8').digest('hex');
}

/** Where a chain stops being trustworthy. */
export interface AuditChainProblem {
  /** The first entry that is missing, altered or out of place. */
  seq: number;
  detail: string;
}

/**
 * Recomputes a tenant's chain page by page (entries oldest first, from seq 1),
 * so a long trail is verified without holding it in memory.
 */
export class AuditChainVerifier {
  private prev = AUDIT_GENESIS_HASH;
  private next = 1;
  private problem: AuditChainProblem | undefined;

  /** Entries verified so far. */
  get count(): number {
    return this.next - 1;
  }

  /** Feeds the next entries in seq order; returns the first problem found so far. */
  add(entries: readonly AuditEntry[]): AuditChainProblem | undefined {
    for (const e of entries) {
      if (this.problem) break;
      if (e.seq !== this.next) {
        this.problem = { seq: this.next, detail: `entry ${this.next} is missing (found ${e.seq} next)` };
      } else if (e.prevHash !== this.prev) {
        this.problem = { seq: e.seq, detail: `entry ${e.seq} does not follow the hash of entry ${e.seq - 1}` };
      } else if (auditEntryHash(e) !== e.hash) {
        this.problem = { seq: e.seq, detail: `entry ${e.seq} was altered (its content does not match its hash)` };
      } else {
        this.prev = e.hash;
        this.next++;
      }
    }
    return this.problem;
  }

  /**
   * After the last entry: compares the chain's end with the tenant's head (the
   * last seq and hash the store appended), which catches entries deleted from
   * the end of the trail. `head` undefined = the store has no head for the tenant.
   */
  finish(head: AuditHead | undefined): AuditChainProblem | undefined {
    if (this.problem) return this.problem;
    const last = this.count;
    if (!head) {
      if (last > 0) this.problem = { seq: 1, detail: `the trail has ${last} entries but its head record is missing` };
    } else if (head.seq > last) {
      this.problem = { seq: last + 1, detail: `entries ${last + 1}..${head.seq} are missing (the trail ends at ${last}, its head says ${head.seq})` };
    } else if (head.seq < last) {
      this.problem = {
        seq: head.seq + 1,
        detail: `entries after ${head.seq} were added outside the store (the head says ${head.seq}, the trail ends at ${last})`,
      };
    } else if (head.hash !== this.prev) {
      this.problem = { seq: Math.max(1, last), detail: `the last entry ${last} does not match the head's hash` };
    }
    return this.problem;
  }
}

/**
 * Recomputes a chain (entries oldest first, from seq 1): the first entry that
 * does not match, or undefined. With `head` (`Store.getAuditHead`; null when the
 * store has none), a trail cut short at its end is caught too.
 */
export function verifyAuditChain(entries: readonly AuditEntry[], head?: AuditHead | null): AuditChainProblem | undefined {
  const v = new AuditChainVerifier();
  const problem = v.add(entries);
  if (problem || head === undefined) return problem;
  return v.finish(head ?? undefined);
}
