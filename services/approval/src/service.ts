import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Headers, type Bus, type BusMessage, type RequestHandler, type Subscription } from '@agentloop/bus';
import { AgentLoopError, errorMessage, type Logger } from '@agentloop/core';
import {
  ApprovalAction,
  AuditEntrySchema,
  CheckApprovalRequestSchema,
  CheckApprovalResponseSchema,
  DecisionKind,
  ErrorSchema,
  ListAuditRequestSchema,
  ListAuditResponseSchema,
  RecordDecisionRequestSchema,
  RecordDecisionResponseSchema,
  RiskLevel,
  VerifyAuditRequestSchema,
  VerifyAuditResponseSchema,
  create,
  fromBinary,
  toBinary,
  type AuditEntry as WireAuditEntry,
  type WireError,
} from '@agentloop/proto';
import { verifyAuditChain, type AuditEntry, type Store } from '@agentloop/store';
import { instruments } from '@agentloop/telemetry';
import { DEFAULT_RULES_PATH, type ApprovalConfig } from './config.js';
import { ApprovalRules, type Action, type Risk } from './rules.js';

export const APPROVAL_SUBJECTS = {
  check: 'agentloop.approval.check',
  record: 'agentloop.approval.record',
  audit: 'agentloop.approval.audit',
  verify: 'agentloop.approval.verify',
} as const;

export const APPROVAL_SERVICE = 'approval';

export const APPROVAL_VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface ApprovalDeps {
  bus: Bus;
  store: Store;
  logger: Logger;
  config: ApprovalConfig;
  /** Rules to use instead of loading HITL_RULES (tests). */
  rules?: ApprovalRules;
}

export interface ApprovalService {
  start(): Promise<void>;
  stop(): Promise<void>;
  readonly rules: ApprovalRules;
}

class ApprovalError extends AgentLoopError {}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;
const ACTION_WIRE: Record<Action, ApprovalAction> = { allow: ApprovalAction.ALLOW, require_approval: ApprovalAction.REQUIRE_APPROVAL, deny: ApprovalAction.DENY };
const RISK_WIRE: Record<Risk, RiskLevel> = { unspecified: RiskLevel.UNSPECIFIED, low: RiskLevel.LOW, medium: RiskLevel.MEDIUM, high: RiskLevel.HIGH, critical: RiskLevel.CRITICAL };
const RISK_NAME = Object.fromEntries(Object.entries(RISK_WIRE).map(([k, v]) => [v, k])) as Record<number, Risk>;
const DECISION_NAME: Record<number, string | undefined> = { [DecisionKind.APPROVED]: 'approved', [DecisionKind.REJECTED]: 'rejected', [DecisionKind.DENIED]: 'denied' };
const DECISION_WIRE: Record<string, DecisionKind> = { approved: DecisionKind.APPROVED, rejected: DecisionKind.REJECTED, denied: DecisionKind.DENIED };

/** The caller's tenant: the body's, which must agree with the tenant header when both are set. */
function tenantOf(msg: BusMessage, bodyTenant: string): string {
  const header = msg.headers[Headers.tenant];
  if (bodyTenant && header && bodyTenant !== header) throw new ApprovalError('PERMISSION_DENIED', 'Permission denied: the request names another tenant than its caller');
  const tenant = bodyTenant || header || '';
  if (!ID.test(tenant)) throw new ApprovalError('INVALID_ARGUMENT', 'tenant_id is required (1-128 characters of A-Z a-z 0-9 _ . : -)');
  return tenant;
}

function parseArgs(json: string): Record<string, unknown> {
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

/** SHA-256 of the arguments as sent (the trail keeps this, never the arguments: they may hold secrets). */
const argsHash = (json: string) => createHash('sha256').update(json, 'utf8').digest('hex');

function toWireEntry(e: AuditEntry): WireAuditEntry {
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
    riskLevel: RISK_WIRE[e.riskLevel as Risk] ?? RiskLevel.UNSPECIFIED,
    decidedBy: e.decidedBy,
    comment: e.comment,
    createdAtMs: BigInt(e.createdAtMs),
    prevHash: e.prevHash,
    hash: e.hash,
  });
}

function toWireError(err: unknown, logger: Logger, what: string): WireError {
  if (err instanceof AgentLoopError) {
    logger.info({ code: err.code }, `${what} refused: ${err.message}`);
    return create(ErrorSchema, { code: err.code, message: err.message, retryable: err.retryable });
  }
  logger.error({ err: errorMessage(err) }, `${what} failed`);
  return create(ErrorSchema, { code: 'INTERNAL', message: `The approval service failed: ${errorMessage(err)}`, retryable: true });
}

/**
 * The approval service (seed 001 Part 7): verdicts from the four-layer rules, and the tenant's
 * hash-chained audit trail of decisions in the shared store. Handlers reply errors in `error`.
 */
export async function createApprovalService(deps: ApprovalDeps): Promise<ApprovalService> {
  const logger = deps.logger.child({ component: 'approval' });
  const rules = deps.rules ?? (await ApprovalRules.load(deps.config.HITL_RULES ?? DEFAULT_RULES_PATH));
  let subs: Subscription[] = [];

  const check: RequestHandler = async (msg) => {
    try {
      const req = fromBinary(CheckApprovalRequestSchema, msg.data);
      const tenant = tenantOf(msg, req.tenantId);
      if (req.toolName.trim() === '') throw new ApprovalError('INVALID_ARGUMENT', 'tool_name is required');
      const args = parseArgs(req.argsJson);
      const v = deps.config.APPROVAL_ENABLED ? rules.check(req.toolName, args) : { action: 'allow' as const, reason: 'approval disabled', risk: 'unspecified' as const, rule: 'disabled' };
      instruments().approvals.add(1, { verdict: v.action, 'agentloop.tool': req.toolName });
      // Never the argument values: log their hash.
      if (v.action !== 'allow') logger.info({ tenant, run_id: req.runId, tool: req.toolName, action: v.action, rule: v.rule, risk: v.risk, args_sha256: argsHash(req.argsJson) }, 'tool call needs a decision');
      return toBinary(CheckApprovalResponseSchema, create(CheckApprovalResponseSchema, { action: ACTION_WIRE[v.action], reason: v.reason, riskLevel: RISK_WIRE[v.risk], rule: v.rule }));
    } catch (err) {
      return toBinary(CheckApprovalResponseSchema, create(CheckApprovalResponseSchema, { error: toWireError(err, logger, 'check') }));
    }
  };

  const record: RequestHandler = async (msg) => {
    try {
      const req = fromBinary(RecordDecisionRequestSchema, msg.data);
      const tenant = tenantOf(msg, req.tenantId);
      const decision = DECISION_NAME[req.decision];
      if (!decision) throw new ApprovalError('INVALID_ARGUMENT', 'decision must be APPROVED, REJECTED or DENIED');
      for (const [field, v] of [['thread_id', req.threadId], ['run_id', req.runId], ['tool_call_id', req.toolCallId]] as const) {
        if (!ID.test(v)) throw new ApprovalError('INVALID_ARGUMENT', `${field} is required (1-128 characters of A-Z a-z 0-9 _ . : -)`);
      }
      const cut = (s: string, n: number) => s.slice(0, n);
      const { entry, duplicate } = await deps.store.appendAuditEntry({
        tenantId: tenant,
        threadId: req.threadId,
        runId: req.runId,
        toolCallId: req.toolCallId,
        toolName: cut(req.toolName, 128),
        argsSha256: argsHash(req.argsJson),
        decision,
        reason: cut(req.reason, 4000),
        rule: cut(req.rule, 500),
        riskLevel: RISK_NAME[req.riskLevel] ?? 'unspecified',
        decidedBy: cut(req.decidedBy, 500),
        comment: cut(req.comment, 4000),
      });
      logger.info({ tenant, seq: entry.seq, run_id: entry.runId, tool: entry.toolName, decision, duplicate }, 'decision recorded');
      return toBinary(RecordDecisionResponseSchema, create(RecordDecisionResponseSchema, { entry: toWireEntry(entry), duplicate }));
    } catch (err) {
      return toBinary(RecordDecisionResponseSchema, create(RecordDecisionResponseSchema, { error: toWireError(err, logger, 'record') }));
    }
  };

  const audit: RequestHandler = async (msg) => {
    try {
      const req = fromBinary(ListAuditRequestSchema, msg.data);
      const tenant = tenantOf(msg, req.tenantId);
      const entries = await deps.store.listAuditEntries(tenant, {
        ...(req.runId ? { runId: req.runId } : {}),
        ...(req.threadId ? { threadId: req.threadId } : {}),
        afterSeq: Number(req.afterSeq),
        limit: Math.min(1000, req.limit || 100),
      });
      return toBinary(ListAuditResponseSchema, create(ListAuditResponseSchema, { entries: entries.map(toWireEntry) }));
    } catch (err) {
      return toBinary(ListAuditResponseSchema, create(ListAuditResponseSchema, { error: toWireError(err, logger, 'audit') }));
    }
  };

  const verify: RequestHandler = async (msg) => {
    try {
      const req = fromBinary(VerifyAuditRequestSchema, msg.data);
      const tenant = tenantOf(msg, req.tenantId);
      const all: AuditEntry[] = [];
      for (let after = 0; ; ) {
        const page = await deps.store.listAuditEntries(tenant, { afterSeq: after, limit: 1000 });
        all.push(...page);
        if (page.length < 1000) break;
        after = page[page.length - 1]!.seq;
      }
      const bad = verifyAuditChain(all);
      if (bad) logger.error({ tenant, seq: bad.seq, detail: bad.detail }, 'audit trail verification FAILED');
      return toBinary(
        VerifyAuditResponseSchema,
        create(VerifyAuditResponseSchema, { ok: !bad, entries: BigInt(all.length), firstBadSeq: BigInt(bad?.seq ?? 0), detail: bad?.detail ?? `${all.length} entries verified` }),
      );
    } catch (err) {
      return toBinary(VerifyAuditResponseSchema, create(VerifyAuditResponseSchema, { error: toWireError(err, logger, 'verify') }));
    }
  };

  return {
    rules,
    async start() {
      if (subs.length > 0) return;
      const opts = { queue: APPROVAL_SERVICE, version: APPROVAL_VERSION, description: 'AgentLoop tool approval rules and audit trail' };
      subs = [
        await deps.bus.serve(APPROVAL_SUBJECTS.check, opts, check),
        await deps.bus.serve(APPROVAL_SUBJECTS.record, opts, record),
        await deps.bus.serve(APPROVAL_SUBJECTS.audit, opts, audit),
        await deps.bus.serve(APPROVAL_SUBJECTS.verify, opts, verify),
      ];
      logger.info({ version: APPROVAL_VERSION, enabled: deps.config.APPROVAL_ENABLED && rules.enabled }, 'approval serving');
    },
    async stop() {
      await Promise.allSettled(subs.map((s) => s.unsubscribe()));
      subs = [];
    },
  };
}
