import { createHash } from 'node:crypto';
import type { MethodImpl, ServiceShape } from '@agentloop/bus';
import { errorMessage, type Logger } from '@agentloop/core';
import { AuditEntrySchema, DecisionKind, RiskLevel, create, type Approval, type AuditEntry as WireAuditEntry } from '@agentloop/proto';
import type { AuditDecision, AuditEntry, AuditRiskLevel, Store } from '@agentloop/store';
import { ApprovalError } from '../errors.js';
import type { ApprovalRules, Risk } from '../rules.js';

/** A handler of an Approval RPC (decoding, tenant agreement and the error channel: APPROVAL_RPC in @agentloop/bus). */
export type ApprovalMethod<K extends keyof ServiceShape<typeof Approval> & string> = MethodImpl<ServiceShape<typeof Approval>, K>;

/** What every handler works with. `rules()` is read per request, so a reload applies to the next one. */
export interface HandlerContext {
  rules(): ApprovalRules;
  store: Store;
  logger: Logger;
  /** APPROVAL_ENABLED: false answers allow to every check. */
  enabled: boolean;
}

const TENANT = /^[A-Za-z0-9_.:-]{1,128}$/;

/** The caller's tenant (the body's or else the header's; the server checked that they agree): required, of a safe shape. */
export function requireTenant(tenant: string): string {
  if (tenant === '') throw new ApprovalError('INVALID_ARGUMENT', 'tenant_id is required');
  if (!TENANT.test(tenant)) {
    throw new ApprovalError('INVALID_ARGUMENT', `Invalid tenant_id ${JSON.stringify(tenant.slice(0, 140))}: expected 1-128 characters of A-Z a-z 0-9 _ . : -`);
  }
  return tenant;
}

/** An id field of a request: 1-128 characters, no control characters or surrounding spaces. */
export function requireId(field: string, value: string): string {
  // eslint-disable-next-line no-control-regex
  if (value.length === 0 || value.length > 128 || value.trim() !== value || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new ApprovalError('INVALID_ARGUMENT', `${field} is required: 1-128 characters without control characters or surrounding spaces`);
  }
  return value;
}

/** The arguments of a call: a JSON object ("" = no arguments). */
export function parseArgs(json: string): Record<string, unknown> {
  if (json.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (err) {
    throw new ApprovalError('INVALID_ARGUMENT', `args_json is not valid JSON: ${errorMessage(err)}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ApprovalError('INVALID_ARGUMENT', 'args_json must be a JSON object');
  return v as Record<string, unknown>;
}

/** JSON with object keys sorted and no whitespace: the same arguments give the same text whatever their key order. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x ?? null)).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * `args_sha256` of the audit trail and of the logs: SHA-256 (hex) of the
 * arguments as canonical JSON. The trail keeps this, never the arguments
 * (they may hold secrets); whoever has the arguments can check it.
 */
export function argsSha256(args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(args), 'utf8').digest('hex');
}

/** canonicalJson(v) as consecutive pieces (their concatenation is exactly canonicalJson(v)). */
function* canonicalPieces(v: unknown): Generator<string> {
  if (Array.isArray(v)) {
    yield '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) yield ',';
      yield* canonicalPieces(v[i] ?? null);
    }
    yield ']';
  } else if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    yield '{';
    for (let i = 0; i < entries.length; i++) {
      const [k, x] = entries[i]!;
      yield `${i > 0 ? ',' : ''}${JSON.stringify(k)}:`;
      yield* canonicalPieces(x);
    }
    yield '}';
  } else {
    yield JSON.stringify(v) ?? 'null';
  }
}

/** Characters hashed between two yields to the event loop. */
const HASH_SLICE_CHARS = 256 * 1024;

/**
 * argsSha256, computed in slices with yields between them, so hashing 10 MB
 * of arguments does not hold the event loop (the service shares the gateway's
 * process in embedded mode). Same digest: slices are never cut inside a
 * surrogate pair, and canonical JSON has no lone surrogates (JSON.stringify
 * escapes them), so the UTF-8 of the slices is the UTF-8 of the whole.
 */
export async function argsSha256Paced(args: Record<string, unknown>): Promise<string> {
  const hash = createHash('sha256');
  let since = 0;
  for (const piece of canonicalPieces(args)) {
    for (let start = 0; start < piece.length;) {
      let end = Math.min(piece.length, start + HASH_SLICE_CHARS);
      const last = piece.charCodeAt(end - 1);
      if (end < piece.length && last >= 0xd800 && last <= 0xdbff) end--;
      hash.update(start === 0 && end === piece.length ? piece : piece.slice(start, end), 'utf8');
      since += end - start;
      start = end;
      if (since >= HASH_SLICE_CHARS) {
        since = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  }
  return hash.digest('hex');
}

export const RISK_WIRE: Record<Risk, RiskLevel> = {
  unspecified: RiskLevel.UNSPECIFIED,
  low: RiskLevel.LOW,
  medium: RiskLevel.MEDIUM,
  high: RiskLevel.HIGH,
  critical: RiskLevel.CRITICAL,
};

export function riskName(level: RiskLevel): AuditRiskLevel {
  switch (level) {
    case RiskLevel.LOW:
      return 'low';
    case RiskLevel.MEDIUM:
      return 'medium';
    case RiskLevel.HIGH:
      return 'high';
    case RiskLevel.CRITICAL:
      return 'critical';
    default:
      return 'unspecified';
  }
}

export function decisionName(kind: DecisionKind): AuditDecision | undefined {
  switch (kind) {
    case DecisionKind.APPROVED:
      return 'approved';
    case DecisionKind.REJECTED:
      return 'rejected';
    case DecisionKind.DENIED:
      return 'denied';
    default:
      return undefined;
  }
}

const DECISION_WIRE: Record<AuditDecision, DecisionKind> = { approved: DecisionKind.APPROVED, rejected: DecisionKind.REJECTED, denied: DecisionKind.DENIED };

export function toWireEntry(e: AuditEntry): WireAuditEntry {
  return create(AuditEntrySchema, {
    tenantId: e.tenantId,
    seq: BigInt(e.seq),
    threadId: e.threadId,
    runId: e.runId,
    toolCallId: e.toolCallId,
    toolName: e.toolName,
    argsSha256: e.argsSha256,
    decision: DECISION_WIRE[e.decision] ?? DecisionKind.UNSPECIFIED,
    reason: e.reason,
    rule: e.rule,
    riskLevel: RISK_WIRE[e.riskLevel] ?? RiskLevel.UNSPECIFIED,
    decidedBy: e.decidedBy,
    comment: e.comment,
    approverTenantId: e.approverTenantId,
    approverKeyId: e.approverKeyId,
    createdAtMs: BigInt(e.createdAtMs),
    prevHash: e.prevHash,
    hash: e.hash,
  });
}
