import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Headers, MemoryBus } from '@agentloop/bus';
import { ConfigError, createLogger, silentLogger } from '@agentloop/core';
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
  type RecordDecisionRequest,
} from '@agentloop/proto';
import { auditEntryHash, createSqliteStore, type SqlStore, type Store } from '@agentloop/store';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { loadApprovalConfig } from './config.js';
import { argsSha256 } from './handlers/common.js';
import { ApprovalRules } from './rules.js';
import { APPROVAL_SUBJECTS, createApprovalService, type ApprovalDeps, type ApprovalService } from './service.js';

interface Harness {
  bus: MemoryBus;
  store: Store;
  svc: ApprovalService;
  check(fields: MessageInitShape<typeof CheckApprovalRequestSchema>, headers?: Record<string, string>): Promise<ReturnType<typeof decodeCheck>>;
  record(fields: Partial<Omit<RecordDecisionRequest, '$typeName' | '$unknown'>>): Promise<ReturnType<typeof decodeRecord>>;
  list(fields: MessageInitShape<typeof ListAuditRequestSchema>): Promise<ReturnType<typeof decodeList>>;
  verify(tenantId: string): Promise<ReturnType<typeof decodeVerify>>;
}

const decodeCheck = (b: Uint8Array) => fromBinary(CheckApprovalResponseSchema, b);
const decodeRecord = (b: Uint8Array) => fromBinary(RecordDecisionResponseSchema, b);
const decodeList = (b: Uint8Array) => fromBinary(ListAuditResponseSchema, b);
const decodeVerify = (b: Uint8Array) => fromBinary(VerifyAuditResponseSchema, b);

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) {
    await h.svc.stop();
    await h.bus.close();
    await h.store.close();
  }
});

async function harness(env: Record<string, string> = {}, extra: Partial<ApprovalDeps> = {}): Promise<Harness> {
  const bus = new MemoryBus();
  const store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  const svc = await createApprovalService({ bus, store, logger: silentLogger(), config: loadApprovalConfig(env), ...extra });
  await svc.start();
  const req = async (subject: string, data: Uint8Array, headers: Record<string, string> = {}) =>
    (await bus.request(subject, data, { timeoutMs: 5000, headers })).data;
  const h: Harness = {
    bus,
    store,
    svc,
    check: async (fields, headers) =>
      decodeCheck(
        await req(
          APPROVAL_SUBJECTS.check,
          toBinary(
            CheckApprovalRequestSchema,
            create(CheckApprovalRequestSchema, { tenantId: 'acme', threadId: 't1', runId: 'r1', toolCallId: 'c1', ...fields }),
          ),
          headers,
        ),
      ),
    record: async (fields) =>
      decodeRecord(
        await req(
          APPROVAL_SUBJECTS.record,
          toBinary(
            RecordDecisionRequestSchema,
            create(RecordDecisionRequestSchema, {
              tenantId: 'acme',
              threadId: 't1',
              runId: 'r1',
              toolCallId: 'c1',
              toolName: 'http_fetch',
              argsJson: '{"url":"https://api.example.com","token":"s3cret"}',
              decision: DecisionKind.APPROVED,
              reason: 'http_fetch POST may change data on api.example.com',
              rule: 'checker:http_fetch',
              riskLevel: RiskLevel.MEDIUM,
              decidedBy: 'alice@example.com',
              ...fields,
            }),
          ),
        ),
      ),
    list: async (fields) => decodeList(await req(APPROVAL_SUBJECTS.audit, toBinary(ListAuditRequestSchema, create(ListAuditRequestSchema, fields)))),
    verify: async (tenantId) =>
      decodeVerify(await req(APPROVAL_SUBJECTS.verify, toBinary(VerifyAuditRequestSchema, create(VerifyAuditRequestSchema, { tenantId })))),
  };
  open.push(h);
  return h;
}

describe('check', () => {
  it('answers the rules verdict with action, risk level, rule and reason', async () => {
    const h = await harness();
    expect(await h.check({ toolName: 'now', argsJson: '{}' })).toMatchObject({ action: ApprovalAction.ALLOW, rule: 'default' });
    expect(await h.check({ toolName: 'http_fetch', argsJson: '{"url":"https://x.example","method":"DELETE"}' })).toMatchObject({
      action: ApprovalAction.REQUIRE_APPROVAL,
      riskLevel: RiskLevel.MEDIUM,
      rule: 'checker:http_fetch',
      reason: 'http_fetch DELETE may change data on x.example',
    });
    expect(await h.check({ toolName: 'write_file', argsJson: '{"file_path":"outputs/a","content":{"nested":["password: x1"]}}' })).toMatchObject({
      action: ApprovalAction.REQUIRE_APPROVAL,
      riskLevel: RiskLevel.CRITICAL,
      rule: 'global:critical',
    });
  });

  it('judges write_file by resolved_paths: an absolute path into uploads/ asks, and without resolved_paths it asks too', async () => {
    const h = await harness();
    const argsJson = JSON.stringify({ file_path: '/data/tenants/acme/threads/t1/uploads/report.pdf', content: 'x' });
    expect(await h.check({ toolName: 'write_file', argsJson, resolvedPaths: { file_path: 'uploads/report.pdf' } })).toMatchObject({
      action: ApprovalAction.REQUIRE_APPROVAL,
      rule: 'checker:write_file',
      reason: "write_file would overwrite the user's upload uploads/report.pdf",
    });
    expect(await h.check({ toolName: 'write_file', argsJson })).toMatchObject({ action: ApprovalAction.REQUIRE_APPROVAL, rule: 'checker:write_file' });
    expect(await h.check({ toolName: 'write_file', argsJson, resolvedPaths: { file_path: 'outputs/report.pdf' } })).toMatchObject({
      action: ApprovalAction.ALLOW,
    });
  });

  it('scans an append together with preceding_text: a secret split across two appends is caught', async () => {
    const h = await harness();
    const argsJson = JSON.stringify({ file_path: 'outputs/.env', content: 'word=hunter2', append: true });
    expect(await h.check({ toolName: 'write_file', argsJson })).toMatchObject({ action: ApprovalAction.ALLOW });
    expect(await h.check({ toolName: 'write_file', argsJson, precedingText: 'USER=app\nDB_PASS' })).toMatchObject({
      action: ApprovalAction.REQUIRE_APPROVAL,
      riskLevel: RiskLevel.CRITICAL,
      rule: 'global:critical',
    });
  });

  it('maps a deny verdict to APPROVAL_ACTION_DENY', async () => {
    const h = await harness({}, { rules: ApprovalRules.parse("global: { risk_patterns: { high: { patterns: ['DROP\\s+TABLE'], action: deny } } }") });
    expect(await h.check({ toolName: 'sql', argsJson: '{"q":"drop table users"}' })).toMatchObject({
      action: ApprovalAction.DENY,
      riskLevel: RiskLevel.HIGH,
      rule: 'global:high',
    });
  });

  it('answers allow to everything with APPROVAL_ENABLED=false', async () => {
    const h = await harness({ APPROVAL_ENABLED: 'false' });
    expect(await h.check({ toolName: 'run_bash_command', argsJson: '{"command":"sudo rm -rf /"}' })).toMatchObject({
      action: ApprovalAction.ALLOW,
      rule: 'disabled',
    });
  });

  it('takes the tenant from the header when the body has none', async () => {
    const h = await harness();
    expect((await h.check({ tenantId: '', toolName: 'now' }, { [Headers.tenant]: 'acme' })).action).toBe(ApprovalAction.ALLOW);
  });

  it('never logs argument values, only their SHA-256', async () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'approval', level: 'debug', destination: { write: (l: string) => void lines.push(l) } });
    const h = await harness({}, { logger });
    const args = { url: 'https://api.example.com/?password=hunter2', method: 'POST' };
    await h.check({ toolName: 'http_fetch', argsJson: JSON.stringify(args) });
    await h.check({ toolName: 'now', argsJson: '{"note":"hunter2"}' });
    await h.record({ argsJson: JSON.stringify(args) });
    const log = lines.join('');
    expect(log).toContain(argsSha256(args));
    expect(log).toContain('"rule":"checker:http_fetch"');
    expect(log).not.toContain('hunter2');
  });

  it('at info level logs the calls that need a decision (with the hash) and not the allowed ones', async () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'approval', level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    const h = await harness({}, { logger });
    const args = { url: 'https://api.example.com/?password=hunter2', method: 'POST' };
    expect((await h.check({ toolName: 'now', argsJson: '{"note":"hunter2"}' })).action).toBe(ApprovalAction.ALLOW);
    expect(lines.join('')).not.toContain('tool call allowed');
    expect((await h.check({ toolName: 'http_fetch', argsJson: JSON.stringify(args) })).action).not.toBe(ApprovalAction.ALLOW);
    const log = lines.join('');
    expect(log).toContain('tool call needs a decision');
    expect(log).toContain(argsSha256(args));
    expect(log).not.toContain('hunter2');
  });
});

describe('bad input gets a clear error in the response, and the service keeps serving', () => {
  it('malformed proto bytes', async () => {
    const h = await harness();
    const decoders = { check: decodeCheck, record: decodeRecord, audit: decodeList, verify: decodeVerify } as const;
    for (const [verb, subject] of Object.entries(APPROVAL_SUBJECTS) as Array<[keyof typeof decoders, string]>) {
      const reply = await h.bus.request(subject, new Uint8Array([0xff, 0xff, 0xff, 0xff]), { timeoutMs: 5000 });
      expect(decoders[verb](reply.data).error, subject).toMatchObject({
        code: 'INVALID_ARGUMENT',
        retryable: false,
        message: expect.stringMatching(/^Invalid (CheckApprovalRequest|RecordDecisionRequest|ListAuditRequest|VerifyAuditRequest): /),
      });
    }
    expect((await h.check({ toolName: 'now' })).action).toBe(ApprovalAction.ALLOW);
  });

  it('args_json that is not a JSON object', async () => {
    const h = await harness();
    expect((await h.check({ toolName: 'now', argsJson: '{not json' })).error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining('args_json is not valid JSON'),
    });
    expect((await h.check({ toolName: 'now', argsJson: '[1,2]' })).error?.message).toBe('args_json must be a JSON object');
    expect((await h.record({ argsJson: 'nope' })).error?.code).toBe('INVALID_ARGUMENT');
    expect((await h.check({ toolName: 'now', argsJson: '{}' })).action).toBe(ApprovalAction.ALLOW);
  });

  it('a missing or malformed tenant, or one that is not the caller', async () => {
    const h = await harness();
    expect((await h.check({ tenantId: '', toolName: 'now' })).error).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'tenant_id is required' });
    expect((await h.check({ tenantId: 'acme corp/../x', toolName: 'now' })).error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/^Invalid tenant_id "acme corp\/..\/x"/),
    });
    expect((await h.verify('x'.repeat(129))).error?.code).toBe('INVALID_ARGUMENT');
    expect((await h.check({ tenantId: 'acme', toolName: 'now' }, { [Headers.tenant]: 'globex' })).error?.code).toBe('PERMISSION_DENIED');
    expect((await h.list({ tenantId: 'acme' })).error).toBeUndefined();
  });

  it('missing fields and an unknown decision', async () => {
    const h = await harness();
    expect((await h.check({ toolName: ' ' })).error?.message).toBe('tool_name is required');
    expect((await h.record({ runId: '' })).error?.message).toMatch(/^run_id is required/);
    expect((await h.record({ toolCallId: 'x'.repeat(200) })).error?.message).toMatch(/^tool_call_id is required/);
    expect((await h.record({ decision: DecisionKind.UNSPECIFIED })).error?.message).toBe('decision must be APPROVED, REJECTED or DENIED');
    expect((await h.list({ tenantId: 'acme' })).entries).toEqual([]);
  });

  it('a store failure is INTERNAL and retryable', async () => {
    const h = await harness();
    await h.store.close();
    expect((await h.record({})).error).toMatchObject({ code: 'INTERNAL', retryable: true });
    expect((await h.check({ toolName: 'now' })).action).toBe(ApprovalAction.ALLOW);
    h.store = createSqliteStore({ path: ':memory:' }); // for afterEach
  });
});

describe('audit trail over the bus', () => {
  it('records decisions in a per-tenant chain and keeps only a hash of the arguments', async () => {
    const h = await harness();
    const a = await h.record({ toolCallId: 'c1' });
    const b = await h.record({ toolCallId: 'c2', decision: DecisionKind.REJECTED, comment: 'not today' });
    expect([a.entry?.seq, b.entry?.seq]).toEqual([1n, 2n]);
    expect(a.entry).toMatchObject({
      tenantId: 'acme',
      decision: DecisionKind.APPROVED,
      riskLevel: RiskLevel.MEDIUM,
      decidedBy: 'alice@example.com',
      rule: 'checker:http_fetch',
    });
    expect(b.entry?.prevHash).toBe(a.entry?.hash);
    // The same arguments in another key order hash the same.
    expect(a.entry?.argsSha256).toBe(argsSha256({ token: 's3cret', url: 'https://api.example.com' }));
    expect(JSON.stringify(a.entry, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v))).not.toContain('s3cret');
    const e = a.entry!;
    expect(e.hash).toBe(auditEntryHash({ ...e, seq: Number(e.seq), createdAtMs: Number(e.createdAtMs), decision: 'approved', riskLevel: 'medium' }));
  });

  it('a denial recorded without a decider is attributed to the rules', async () => {
    const h = await harness();
    expect((await h.record({ decision: DecisionKind.DENIED, decidedBy: '' })).entry?.decidedBy).toBe('rules');
  });

  it('recording the same call (run, tool call id, tool, arguments, decision) again returns the first entry with duplicate=true', async () => {
    const h = await harness();
    const first = await h.record({});
    // The same arguments in another key order are the same call.
    const again = await h.record({ argsJson: '{"token":"s3cret","url":"https://api.example.com"}', comment: 'resent' });
    expect(again).toMatchObject({ duplicate: true, entry: { seq: 1n, decision: DecisionKind.APPROVED, hash: first.entry?.hash } });
    expect((await h.list({ tenantId: 'acme' })).entries).toHaveLength(1);
  });

  it('refuses (CONFLICT) a different call or decision recorded under a tool call id already used, instead of calling it a duplicate', async () => {
    const h = await harness();
    await h.record({ toolName: 'now', argsJson: '{}' });
    // Two calls sharing one id: the second (a secret-carrying write) must not borrow the first one's record.
    const other = await h.record({ toolName: 'write_file', argsJson: '{"file_path":"outputs/a","content":"password=x"}' });
    expect(other.entry).toBeUndefined();
    expect(other.error).toMatchObject({
      code: 'CONFLICT',
      retryable: false,
      message: expect.stringMatching(
        /tool_call_id "c1" of run r1 is already recorded \(audit entry 1\) for a different call or decision \(toolName, argsSha256\)/,
      ),
    });
    expect((await h.record({ toolName: 'now', argsJson: '{"x":1}' })).error?.message).toContain('(argsSha256)');
    expect((await h.record({ toolName: 'now', argsJson: '{}', decision: DecisionKind.REJECTED })).error?.message).toContain('(decision)');
    expect((await h.list({ tenantId: 'acme' })).entries).toHaveLength(1);
    expect(await h.verify('acme')).toMatchObject({ ok: true, entries: 1n });
  });

  it('records the server-set approver (tenant, key id) beside the label the client typed, in the hash', async () => {
    const h = await harness();
    const { entry } = await h.record({ decidedBy: 'ceo@example.com', approverTenantId: 'acme', approverKeyId: 'key_0123456789ab' });
    expect(entry).toMatchObject({ decidedBy: 'ceo@example.com', approverTenantId: 'acme', approverKeyId: 'key_0123456789ab' });
    const e = entry!;
    expect(e.hash).toBe(auditEntryHash({ ...e, seq: Number(e.seq), createdAtMs: Number(e.createdAtMs), decision: 'approved', riskLevel: 'medium' }));
    expect((await h.list({ tenantId: 'acme' })).entries[0]).toMatchObject({ approverTenantId: 'acme', approverKeyId: 'key_0123456789ab' });
    // A denial by the rules has no approver.
    expect((await h.record({ toolCallId: 'c2', decision: DecisionKind.DENIED, decidedBy: '' })).entry).toMatchObject({
      decidedBy: 'rules',
      approverTenantId: '',
      approverKeyId: '',
    });
    // Replaying the decision with another approver is not the same record.
    expect((await h.record({ decidedBy: 'ceo@example.com', approverTenantId: 'acme', approverKeyId: 'key_ffffffffffff' })).error?.code).toBe('CONFLICT');
    // Rewriting the approver behind the service breaks the chain.
    await (h.store as SqlStore).db
      .updateTable('approval_audit')
      .set({ approver_key_id: 'key_ffffffffffff' })
      .where('tenant_id', '=', 'acme')
      .where('seq', '=', 1)
      .execute();
    expect(await h.verify('acme')).toMatchObject({ ok: false, firstBadSeq: 1n });
  });

  it('refuses an approver of another tenant (PERMISSION_DENIED) and a malformed approver (INVALID_ARGUMENT)', async () => {
    const h = await harness();
    expect((await h.record({ approverTenantId: 'globex', approverKeyId: 'key_0123456789ab' })).error).toMatchObject({ code: 'PERMISSION_DENIED' });
    expect((await h.record({ approverKeyId: 'key_0123456789ab' })).error).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: 'approver_key_id needs approver_tenant_id',
    });
    expect((await h.record({ approverTenantId: 'acme', approverKeyId: 'key 1' })).error?.code).toBe('INVALID_ARGUMENT');
    expect((await h.list({ tenantId: 'acme' })).entries).toEqual([]);
  });

  it('lists entries oldest first, filtered by run, thread and after_seq, with a limit', async () => {
    const h = await harness();
    await h.record({ toolCallId: 'c1' });
    await h.record({ toolCallId: 'c2', runId: 'r2' });
    await h.record({ toolCallId: 'c3', threadId: 't2' });
    await h.record({ tenantId: 'globex', toolCallId: 'c1' });
    const seqs = async (f: MessageInitShape<typeof ListAuditRequestSchema>) => (await h.list({ tenantId: 'acme', ...f })).entries.map((e) => Number(e.seq));
    expect(await seqs({})).toEqual([1, 2, 3]);
    expect(await seqs({ runId: 'r2' })).toEqual([2]);
    expect(await seqs({ threadId: 't2' })).toEqual([3]);
    expect(await seqs({ afterSeq: 1n, limit: 1 })).toEqual([2]);
    expect((await h.list({ tenantId: 'globex' })).entries.map((e) => e.toolCallId)).toEqual(['c1']);
  });

  it('verify reports ok, then the first bad seq after a row is edited behind the service', async () => {
    const h = await harness();
    for (let i = 1; i <= 3; i++) await h.record({ toolCallId: `c${i}` });
    expect(await h.verify('acme')).toMatchObject({ ok: true, entries: 3n, firstBadSeq: 0n, detail: '3 entries verified' });
    await (h.store as SqlStore).db.updateTable('approval_audit').set({ decided_by: 'mallory' }).where('tenant_id', '=', 'acme').where('seq', '=', 2).execute();
    expect(await h.verify('acme')).toMatchObject({ ok: false, firstBadSeq: 2n, detail: 'entry 2 was altered (its content does not match its hash)' });
    expect(await h.verify('globex')).toMatchObject({ ok: true, entries: 0n });
  });

  it('verify detects the last entry deleted with raw SQL', async () => {
    const h = await harness();
    for (let i = 1; i <= 3; i++) await h.record({ toolCallId: `c${i}` });
    await (h.store as SqlStore).db.deleteFrom('approval_audit').where('tenant_id', '=', 'acme').where('seq', '=', 3).execute();
    expect(await h.verify('acme')).toMatchObject({ ok: false, firstBadSeq: 3n, entries: 2n });
  });
});

describe('rules file', () => {
  it('an invalid HITL_RULES file stops the service from being created, naming the problem', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'approval-rules-'));
    try {
      const file = path.join(dir, 'rules.yaml');
      await writeFile(file, 'global: { default_action: sometimes }');
      const store = createSqliteStore({ path: ':memory:' });
      const create = createApprovalService({ bus: new MemoryBus(), store, logger: silentLogger(), config: loadApprovalConfig({ HITL_RULES: file }) });
      await expect(create).rejects.toThrow(ConfigError);
      await expect(create).rejects.toThrow(/rules\.yaml is invalid: global\.default_action/);
      await store.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reloadRules applies a changed file to the next check, and keeps the old rules when the new file is bad', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'approval-rules-'));
    try {
      const file = path.join(dir, 'rules.yaml');
      await writeFile(file, 'global: { default_action: allow }');
      const h = await harness({ HITL_RULES: file });
      expect((await h.check({ toolName: 'now' })).action).toBe(ApprovalAction.ALLOW);
      await writeFile(file, 'global: { default_action: deny }');
      await h.svc.reloadRules();
      expect((await h.check({ toolName: 'now' })).action).toBe(ApprovalAction.DENY);
      await writeFile(file, 'global: { default_action: [');
      await expect(h.svc.reloadRules()).rejects.toThrow(ConfigError);
      expect((await h.check({ toolName: 'now' })).action).toBe(ApprovalAction.DENY);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
