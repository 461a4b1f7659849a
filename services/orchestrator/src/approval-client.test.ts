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
import { ApprovalClient, ApprovalUnavailableError, parseApprovalAnswer } from './approval-client.js';

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
    expect(parseApprovalAnswer({ decision: 'approve', by: 'alice', comment: 'ok for staging' })).toEqual({ decision: 'approved', by: 'alice', comment: 'ok for staging' });
  });
});

describe('ApprovalClient', () => {
  it('maps the verdict and the recorded decision to and from the wire', async () => {
    const bus = new MemoryBus();
    const recorded: RecordDecisionRequest[] = [];
    await bus.serve('agentloop.approval.check', { queue: 'approval' }, async (msg) => {
      const req = fromBinary(CheckApprovalRequestSchema, msg.data);
      expect(JSON.parse(req.argsJson)).toEqual({ url: 'https://x' });
      return toBinary(CheckApprovalResponseSchema, create(CheckApprovalResponseSchema, { action: ApprovalAction.REQUIRE_APPROVAL, reason: 'api call', riskLevel: RiskLevel.MEDIUM, rule: 'tool:http_fetch:medium_risk' }));
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
