import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryBus, connectNatsBus, type Bus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import {
  ApprovalAction,
  CheckApprovalRequestSchema,
  CheckApprovalResponseSchema,
  DecisionKind,
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
} from '@agentloop/proto';
import { createSqliteStore, SqlStore, type Store } from '@agentloop/store';
import { startNats } from '@agentloop/devservers';
import { loadApprovalConfig } from './config.js';
import { createApprovalService, type ApprovalService } from './service.js';

let bus: Bus;
let store: Store;
let svc: ApprovalService;

async function setup(b: Bus = new MemoryBus()) {
  bus = b;
  store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  svc = await createApprovalService({ bus, store, logger: silentLogger(), config: loadApprovalConfig({}) });
  await svc.start();
}

afterEach(async () => {
  await svc?.stop();
  await bus?.close();
  await store?.close();
});

const check = async (fields: Partial<{ tenantId: string; toolName: string; argsJson: string; runId: string }>, headers: Record<string, string> = {}) =>
  fromBinary(
    CheckApprovalResponseSchema,
    (await bus.request('agentloop.approval.check', toBinary(CheckApprovalRequestSchema, create(CheckApprovalRequestSchema, { tenantId: 'acme', runId: 'r1', toolCallId: 'c1', threadId: 't1', ...fields })), { timeoutMs: 2000, headers })).data,
  );

const record = async (n: number, tenantId = 'acme', decision = DecisionKind.APPROVED) =>
  fromBinary(
    RecordDecisionResponseSchema,
    (
      await bus.request(
        'agentloop.approval.record',
        toBinary(
          RecordDecisionRequestSchema,
          create(RecordDecisionRequestSchema, { tenantId, threadId: 't1', runId: 'r1', toolCallId: `c${n}`, toolName: 'http_fetch', argsJson: '{"url":"https://api.x","token":"s3cret"}', decision, reason: 'api call', rule: 'checker:http_fetch', riskLevel: RiskLevel.MEDIUM, decidedBy: 'alice' }),
        ),
        { timeoutMs: 2000 },
      )
    ).data,
  );

describe('approval service over the bus', () => {
  beforeEach(async () => {
    await setup();
  });

  it('answers verdicts from the rules', async () => {
    expect(await check({ toolName: 'now', argsJson: '{}' })).toMatchObject({ action: ApprovalAction.ALLOW, rule: 'default' });
    expect(await check({ toolName: 'http_fetch', argsJson: '{"url":"https://x","method":"DELETE"}' })).toMatchObject({ action: ApprovalAction.REQUIRE_APPROVAL, riskLevel: RiskLevel.MEDIUM, rule: 'checker:http_fetch' });
    expect(await check({ toolName: 'write_file', argsJson: '{"file_path":"outputs/a","content":"password: x1"}' })).toMatchObject({ action: ApprovalAction.REQUIRE_APPROVAL, riskLevel: RiskLevel.CRITICAL });
  });

  it('bad input gets a clear error and the service keeps serving', async () => {
    expect((await check({ toolName: 'now', argsJson: '{not json' })).error).toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('args_json is not valid JSON') });
    expect((await check({ toolName: '', argsJson: '{}' })).error?.message).toBe('tool_name is required');
    expect((await check({ toolName: 'now', tenantId: 'acme' }, { 'agentloop-tenant': 'globex' })).error?.code).toBe('PERMISSION_DENIED');
    const garbage = await bus.request('agentloop.approval.check', new Uint8Array([0xff, 0xff, 0xff]), { timeoutMs: 2000 });
    expect(fromBinary(CheckApprovalResponseSchema, garbage.data).error?.code).toBeDefined();
    expect((await check({ toolName: 'now', argsJson: '{}' })).action).toBe(ApprovalAction.ALLOW);
  });

  it('records decisions in a per-tenant chain, keeps only a hash of the arguments, and verifies it', async () => {
    const a = await record(1);
    const b = await record(2, 'acme', DecisionKind.REJECTED);
    expect([Number(a.entry?.seq), Number(b.entry?.seq)]).toEqual([1, 2]);
    expect(a.entry?.argsSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(a.entry, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain('s3cret');
    expect((await record(1)).duplicate).toBe(true);
    await record(1, 'globex');
    const list = fromBinary(ListAuditResponseSchema, (await bus.request('agentloop.approval.audit', toBinary(ListAuditRequestSchema, create(ListAuditRequestSchema, { tenantId: 'acme' })), { timeoutMs: 2000 })).data);
    expect(list.entries.map((e) => [Number(e.seq), e.decision, e.decidedBy])).toEqual([
      [1, DecisionKind.APPROVED, 'alice'],
      [2, DecisionKind.REJECTED, 'alice'],
    ]);
    const verify = async () => fromBinary(VerifyAuditResponseSchema, (await bus.request('agentloop.approval.verify', toBinary(VerifyAuditRequestSchema, create(VerifyAuditRequestSchema, { tenantId: 'acme' })), { timeoutMs: 2000 })).data);
    expect(await verify()).toMatchObject({ ok: true, entries: 2n });
    // Someone edits the trail behind the service's back.
    await (store as SqlStore).db.updateTable('approval_audit').set({ decided_by: 'mallory' }).where('tenant_id', '=', 'acme').where('seq', '=', 1).execute();
    expect(await verify()).toMatchObject({ ok: false, firstBadSeq: 1n, detail: 'entry 1 was altered (its content does not match its hash)' });
  });
});

describe('approval service over NATS', () => {
  it('serves checks and records to a NATS client', async () => {
    const nats = await startNats();
    try {
      await setup(await connectNatsBus({ url: nats.url, name: 'approval-test', logger: silentLogger() }));
      expect((await check({ toolName: 'run_bash_command', argsJson: '{"command":"sudo reboot"}' })).riskLevel).toBe(RiskLevel.HIGH);
      expect(Number((await record(1)).entry?.seq)).toBe(1);
    } finally {
      await svc.stop();
      await bus.close();
      await nats.stop();
    }
  });
});
