import { Approval, ApprovalAction, DecisionKind, RiskLevel } from '@agentloop/proto';
import { serviceClient, type Bus } from '@agentloop/bus';
import { errorMessage } from '@agentloop/core';

export type ApprovalActionName = 'allow' | 'require_approval' | 'deny';
export type RiskLevelName = 'low' | 'medium' | 'high' | 'critical' | 'unspecified';

/** The rules' verdict on one tool call. */
export interface ApprovalVerdict {
  action: ApprovalActionName;
  reason: string;
  risk_level: RiskLevelName;
  rule: string;
}

export type HumanDecision = 'approved' | 'rejected' | 'denied';

export interface ApprovalCall {
  tenantId: string;
  threadId: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
  subagent?: boolean;
  /**
   * For an append (`write_file` with `append: true`): the end of the file it extends, at most
   * 4 KiB (`PRECEDING_TEXT_MAX_CHARS`; longer text is cut to its end). The rules scan it joined
   * to the new content, so a secret split across two appends is seen whole.
   */
  precedingText?: string;
  /**
   * Path arguments as the tool-runner resolved them: argument name → workspace-relative path
   * (e.g. `{ file_path: "uploads/report.pdf" }` for an absolute spelling of it). The rules judge
   * these rather than the model's spelling; without them an absolute path is sent to a human.
   */
  resolvedPaths?: Record<string, string>;
}

/** The server-set identity of whoever answered an approval: the resume's tenant and API key id. */
export interface ApproverIdentity {
  tenantId: string;
  /** RunJob.api_key_id ("key_" + 12 hex digits); '' when the gateway has no API keys. */
  keyId: string;
}

/** Most of the file's end sent as `precedingText` (the proto's "at most 4 KiB"). */
export const PRECEDING_TEXT_MAX_CHARS = 4096;

const ACTIONS: Record<number, ApprovalActionName | undefined> = {
  [ApprovalAction.ALLOW]: 'allow',
  [ApprovalAction.REQUIRE_APPROVAL]: 'require_approval',
  [ApprovalAction.DENY]: 'deny',
};
const RISKS: Record<number, RiskLevelName> = {
  [RiskLevel.UNSPECIFIED]: 'unspecified',
  [RiskLevel.LOW]: 'low',
  [RiskLevel.MEDIUM]: 'medium',
  [RiskLevel.HIGH]: 'high',
  [RiskLevel.CRITICAL]: 'critical',
};
const RISK_WIRE: Record<RiskLevelName, RiskLevel> = {
  unspecified: RiskLevel.UNSPECIFIED,
  low: RiskLevel.LOW,
  medium: RiskLevel.MEDIUM,
  high: RiskLevel.HIGH,
  critical: RiskLevel.CRITICAL,
};
const DECISIONS: Record<HumanDecision, DecisionKind> = {
  approved: DecisionKind.APPROVED,
  rejected: DecisionKind.REJECTED,
  denied: DecisionKind.DENIED,
};

/** The approval service could not give a verdict (absent, timed out, or it failed). */
export class ApprovalUnavailableError extends Error {
  override name = 'ApprovalUnavailableError';
}

/**
 * The orchestrator's side of `agentloop.approval.*` (seed 001 Part 7). Fail
 * closed: when no verdict can be obtained the caller must not run the tool.
 */
export class ApprovalClient {
  private readonly approval;

  constructor(
    bus: Bus,
    private readonly opts: { timeoutMs?: number } = {},
  ) {
    this.approval = serviceClient(bus, Approval);
  }

  async check(call: ApprovalCall): Promise<ApprovalVerdict> {
    const req = {
      tenantId: call.tenantId,
      threadId: call.threadId,
      runId: call.runId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      argsJson: JSON.stringify(call.args ?? {}),
      subagent: call.subagent ?? false,
      precedingText: tail(call.precedingText ?? '', PRECEDING_TEXT_MAX_CHARS),
      resolvedPaths: call.resolvedPaths ?? {},
    };
    let res;
    try {
      // A verdict has no side effect: APPROVAL_RPC resends it when the connection drops (e.g. a NATS restart).
      res = await this.approval.check(req, { timeoutMs: this.opts.timeoutMs, tenantId: call.tenantId });
    } catch (err) {
      throw new ApprovalUnavailableError(`the approval service did not answer (${errorMessage(err)})`, { cause: err });
    }
    if (res.error) throw new ApprovalUnavailableError(`the approval service failed: ${res.error.message}`);
    const action = ACTIONS[res.action];
    if (!action) throw new ApprovalUnavailableError(`the approval service gave no action for ${call.toolName}`);
    return { action, reason: res.reason, risk_level: RISKS[res.riskLevel] ?? 'unspecified', rule: res.rule };
  }

  /**
   * Appends a decision to the tenant's audit trail (idempotent per run and tool call: the same
   * call, decision and approver again is a duplicate; a different call under a recorded id is
   * refused and this throws). `decidedBy` is the client's label; `approver` is who really
   * answered, from the authenticated resume (omit it for the rules' own denials).
   */
  async record(
    call: ApprovalCall,
    verdict: ApprovalVerdict,
    decision: HumanDecision,
    decidedBy: string,
    comment = '',
    approver?: ApproverIdentity,
  ): Promise<void> {
    const req = {
      tenantId: call.tenantId,
      threadId: call.threadId,
      runId: call.runId,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      argsJson: JSON.stringify(call.args ?? {}),
      decision: DECISIONS[decision],
      reason: verdict.reason,
      rule: verdict.rule,
      riskLevel: RISK_WIRE[verdict.risk_level],
      decidedBy,
      comment,
      approverTenantId: approver?.tenantId ?? '',
      approverKeyId: approver?.keyId ?? '',
    };
    // Recording is deduplicated per (run, tool call): APPROVAL_RPC resends it when the connection drops.
    const res = await this.approval.record(req, { timeoutMs: this.opts.timeoutMs, tenantId: call.tenantId });
    if (res.error) throw new Error(`approval decision not recorded: ${res.error.message}`);
  }
}

/** The last `max` characters of s, not starting on the second half of a surrogate pair. */
function tail(s: string, max: number): string {
  if (s.length <= max) return s;
  const start = s.length - max;
  const c = s.charCodeAt(start);
  return s.slice(c >= 0xdc00 && c <= 0xdfff ? start + 1 : start);
}

/** A human's answer to a tool approval interrupt. */
export interface ParsedApprovalAnswer {
  decision: 'approved' | 'rejected';
  by: string;
  comment: string;
}

const YES = new Set(['approve', 'approved', 'yes', 'y', 'allow', 'ok', 'accept', 'accepted', '批准', '同意', '是']);
const NO = new Set(['reject', 'rejected', 'no', 'n', 'deny', 'denied', 'decline', '拒绝', '否']);

/**
 * Reads a resume value: "approve" / "reject" (and common synonyms), true/false,
 * or `{decision|action|type: "approve"|"reject", by?, comment?|reason?}` — the
 * last also in agent-inbox form `{type: "accept"|"ignore"|"response", args?}`.
 * Anything else is undefined (the question is asked again).
 */
export function parseApprovalAnswer(value: unknown): ParsedApprovalAnswer | undefined {
  const word = (v: unknown): 'approved' | 'rejected' | undefined => {
    if (v === true) return 'approved';
    if (v === false) return 'rejected';
    if (typeof v !== 'string') return undefined;
    const s = v.trim().toLowerCase();
    if (YES.has(s)) return 'approved';
    if (NO.has(s) || s === 'ignore') return 'rejected';
    return undefined;
  };
  const direct = word(value);
  if (direct) return { decision: direct, by: '', comment: '' };
  const first = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (!first || typeof first !== 'object') return undefined;
  const o = first as Record<string, unknown>;
  const decision = word(o.decision) ?? word(o.action) ?? word(o.type) ?? word(o.approved);
  if (!decision) return undefined;
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 2000) : '');
  return { decision, by: text(o.by) || text(o.decided_by) || text(o.user), comment: text(o.comment) || text(o.reason) || text(o.message) || text(o.args) };
}
