import { describe, expect, it } from 'vitest';
import { MemoryBus } from '@agentloop/bus';
import {
  ApprovalAction,
  CheckApprovalRequestSchema,
  CheckApprovalResponseSchema,
  DecisionKind,
  RecordDecisionRequestSchema,
  RecordDecisionResponseSchema,
  RiskLevel,
  create,
  fromBinary,
  toBinary,
  type RecordDecisionRequest,
} from '@agentloop/proto';
import { ApprovalClient, ApprovalUnavailableError, PRECEDING_TEXT_MAX_CHARS, parseApprovalAnswer } from './approval-client.js';

const call = { tenantId: 't1', threadId: 'th', runId: 'r', toolCallId: 'c1', toolName: 'http_fetch', args: { url: 'https://x' } };

describe('parseApprovalAnswer', () => {
  it.each([
    ['approve', 'approved'],
    [' Yes ', 'approved'],
    [true, 'approved'],
    ['批准', 'approved'],
    ['reject', 'rejected'],
    [false, 'rejected'],
    [{ decision: 'reject', comment: 'too risky', by: 'bob' }, 'rejected'],
    [[{ type: 'accept' }], 'approved'],
    [{ type: 'ignore' }, 'rejected'],
  ])('%j is %s', (value, decision) => {
    expect(parseApprovalAnswer(value)?.decision).toBe(decision);
  });

  it.each([['maybe'], [''], [null], [42], [{ decision: 'perhaps' }], [[1, 2]]])('%j is not an answer', (value) => {
    expect(parseApprovalAnswer(value)).toBeUndefined();
  });

  it('keeps who decided and why', () => {
    expect(parseApprovalAnswer({ decision: 'approve', by: 'alice', comment: 'ok for staging' })).toEqual({
      decision: 'approved',
      by: 'alice',
      comment: 'ok for staging',
    });
  });
});

describe('ApprovalClient', () => {
  it('maps the verdict and the recorded decision to and from the wire', async () => {
    const bus = new MemoryBus();
    const recorded: RecordDecisionRequest[] = [];
    await bus.serve('agentloop.approval.check', { queue: 'approval' }, async (msg) => {
      const req = fromBinary(CheckApprovalRequestSchema, msg.data);
      expect(JSON.parse(req.argsJson)).toEqual({ url: 'https://x' });
      return toBinary(
        CheckApprovalResponseSchema,
        create(CheckApprovalResponseSchema, {
          action: ApprovalAction.REQUIRE_APPROVAL,
          reason: 'api call',
          riskLevel: RiskLevel.MEDIUM,
          rule: 'tool:http_fetch:medium_risk',
        }),
      );
    });
    await bus.serve('agentloop.approval.record', { queue: 'approval' }, async (msg) => {
      recorded.push(fromBinary(RecordDecisionRequestSchema, msg.data));
      return toBinary(RecordDecisionResponseSchema, create(RecordDecisionResponseSchema, {}));
    });
    const client = new ApprovalClient(bus);
    const verdict = await client.check(call);
    expect(verdict).toEqual({ action: 'require_approval', reason: 'api call', risk_level: 'medium', rule: 'tool:http_fetch:medium_risk' });
    await client.record(call, verdict, 'rejected', 'alice', 'no');
    expect(recorded[0]).toMatchObject({ decision: DecisionKind.REJECTED, decidedBy: 'alice', comment: 'no', riskLevel: RiskLevel.MEDIUM, toolCallId: 'c1' });
    await bus.close();
  });

  it('sends preceding_text (cut to its last 4 KiB) and resolved_paths with a check', async () => {
    const bus = new MemoryBus();
    const seen: Array<{ precedingText: string; resolvedPaths: Record<string, string> }> = [];
    await bus.serve('agentloop.approval.check', { queue: 'approval' }, async (msg) => {
      const req = fromBinary(CheckApprovalRequestSchema, msg.data);
      seen.push({ precedingText: req.precedingText, resolvedPaths: { ...req.resolvedPaths } });
      return toBinary(CheckApprovalResponseSchema, create(CheckApprovalResponseSchema, { action: ApprovalAction.ALLOW, rule: 'default' }));
    });
    const client = new ApprovalClient(bus);
    const write = { ...call, toolName: 'write_file', args: { file_path: '/abs/uploads/a.txt', content: 'word=x', append: true } };
    await client.check({ ...write, precedingText: 'DB_PASS', resolvedPaths: { file_path: 'uploads/a.txt' } });
    await client.check({ ...write, precedingText: `${'x'.repeat(PRECEDING_TEXT_MAX_CHARS)}TAIL` });
    await client.check(write);
    expect(seen[0]).toEqual({ precedingText: 'DB_PASS', resolvedPaths: { file_path: 'uploads/a.txt' } });
    expect(seen[1]!.precedingText).toHaveLength(PRECEDING_TEXT_MAX_CHARS);
    expect(seen[1]!.precedingText.endsWith('TAIL')).toBe(true);
    expect(seen[2]).toEqual({ precedingText: '', resolvedPaths: {} });
    await bus.close();
  });

  it('records the approver identity beside the decided_by label, and none when not given', async () => {
    const bus = new MemoryBus();
    const recorded: RecordDecisionRequest[] = [];
    await bus.serve('agentloop.approval.record', { queue: 'approval' }, async (msg) => {
      recorded.push(fromBinary(RecordDecisionRequestSchema, msg.data));
      return toBinary(RecordDecisionResponseSchema, create(RecordDecisionResponseSchema, {}));
    });
    const client = new ApprovalClient(bus);
    const verdict = { action: 'require_approval', reason: 'r', risk_level: 'medium', rule: 'checker:write_file' } as const;
    await client.record(call, verdict, 'approved', 'ceo@example.com', 'fine', { tenantId: 't1', keyId: 'key_0123456789ab' });
    await client.record({ ...call, toolCallId: 'c2' }, { ...verdict, action: 'deny' }, 'denied', 'rules');
    expect(recorded[0]).toMatchObject({ decidedBy: 'ceo@example.com', comment: 'fine', approverTenantId: 't1', approverKeyId: 'key_0123456789ab' });
    expect(recorded[1]).toMatchObject({ decidedBy: 'rules', approverTenantId: '', approverKeyId: '' });
    await bus.close();
  });

  it('record throws when the service refuses the decision (e.g. another call under a recorded id)', async () => {
    const bus = new MemoryBus();
    await bus.serve('agentloop.approval.record', { queue: 'approval' }, async () =>
      toBinary(
        RecordDecisionResponseSchema,
        create(RecordDecisionResponseSchema, { error: { code: 'CONFLICT', message: 'tool_call_id "c1" of run r is already recorded', retryable: false } }),
      ),
    );
    const client = new ApprovalClient(bus);
    await expect(client.record(call, { action: 'require_approval', reason: '', risk_level: 'medium', rule: '' }, 'approved', 'alice')).rejects.toThrow(
      /already recorded/,
    );
    await bus.close();
  });

  it('throws ApprovalUnavailableError when nobody answers or the service reports an error', async () => {
    const bus = new MemoryBus();
    const client = new ApprovalClient(bus, { timeoutMs: 200 });
    await expect(client.check(call)).rejects.toBeInstanceOf(ApprovalUnavailableError);
    await bus.serve('agentloop.approval.check', { queue: 'approval' }, async () =>
      toBinary(CheckApprovalResponseSchema, create(CheckApprovalResponseSchema, { error: { code: 'INTERNAL', message: 'rules broken', retryable: false } })),
    );
    await expect(client.check(call)).rejects.toThrow('the approval service failed: rules broken');
    await bus.close();
  });
});
