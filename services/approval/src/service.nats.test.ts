import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Headers, connectNatsBus, type NatsBus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { startMariaDb, startNats, type DevServer } from '@agentloop/devservers';
import {
  ApprovalAction,
  CheckApprovalRequestSchema,
  CheckApprovalResponseSchema,
  DecisionKind,
  RecordDecisionRequestSchema,
  RecordDecisionResponseSchema,
  RiskLevel,
  VerifyAuditRequestSchema,
  VerifyAuditResponseSchema,
  create,
  fromBinary,
  toBinary,
} from '@agentloop/proto';
import { createMysqlStore, type SqlStore, type Store } from '@agentloop/store';
import { loadApprovalConfig } from './config.js';
import { APPROVAL_SUBJECTS, createApprovalService, type ApprovalService } from './service.js';

// Two approval replicas in the `approval` queue group on a real nats-server, each with its own
// connection pool to one MariaDB: the audit chain must stay gapless across them.
describe('approval on NATS with MariaDB', () => {
  let nats: DevServer;
  let maria: DevServer;
  const buses: NatsBus[] = [];
  const stores: Store[] = [];
  const services: ApprovalService[] = [];
  let client: NatsBus;

  beforeAll(async () => {
    [nats, maria] = await Promise.all([startNats({ jetstream: false }), startMariaDb()]);
    const config = loadApprovalConfig({ NATS_URL: nats.url, MYSQL_URL: maria.url });
    for (let i = 0; i < 2; i++) {
      const bus = await connectNatsBus({ url: nats.url, name: `approval-${i}` });
      const store = createMysqlStore({ url: maria.url });
      await store.migrate();
      const svc = await createApprovalService({ bus, store, logger: silentLogger(), config });
      await svc.start();
      buses.push(bus);
      stores.push(store);
      services.push(svc);
    }
    client = await connectNatsBus({ url: nats.url, name: 'orchestrator-test' });
  });

  afterAll(async () => {
    for (const s of services) await s.stop();
    for (const b of [...buses, client]) await b?.close();
    for (const s of stores) await s.close();
    await Promise.all([nats?.stop(), maria?.stop()]);
  });

  const headers = { [Headers.tenant]: 'acme' };
  const record = async (toolCallId: string) =>
    fromBinary(
      RecordDecisionResponseSchema,
      (
        await client.request(
          APPROVAL_SUBJECTS.record,
          toBinary(
            RecordDecisionRequestSchema,
            create(RecordDecisionRequestSchema, {
              tenantId: 'acme',
              threadId: 'th',
              runId: 'run-1',
              toolCallId,
              toolName: 'run_bash_command',
              argsJson: JSON.stringify({ command: `sudo service restart ${toolCallId}` }),
              decision: DecisionKind.APPROVED,
              reason: 'High-risk command: sudo',
              rule: 'checker:run_bash_command',
              riskLevel: RiskLevel.HIGH,
              decidedBy: 'ops@example.com',
            }),
          ),
          { timeoutMs: 10_000, headers },
        )
      ).data,
    );
  const verify = async () =>
    fromBinary(
      VerifyAuditResponseSchema,
      (
        await client.request(APPROVAL_SUBJECTS.verify, toBinary(VerifyAuditRequestSchema, create(VerifyAuditRequestSchema, { tenantId: 'acme' })), {
          timeoutMs: 10_000,
          headers,
        })
      ).data,
    );

  it('answers checks from either replica', async () => {
    for (let i = 0; i < 4; i++) {
      const req = create(CheckApprovalRequestSchema, {
        tenantId: 'acme',
        threadId: 'th',
        runId: 'run-1',
        toolCallId: `k${i}`,
        toolName: 'run_bash_command',
        argsJson: '{"command":"sudo reboot"}',
      });
      const res = fromBinary(
        CheckApprovalResponseSchema,
        (await client.request(APPROVAL_SUBJECTS.check, toBinary(CheckApprovalRequestSchema, req), { timeoutMs: 10_000, headers })).data,
      );
      expect(res).toMatchObject({ action: ApprovalAction.REQUIRE_APPROVAL, riskLevel: RiskLevel.HIGH, rule: 'checker:run_bash_command' });
    }
  });

  it('replies to garbage with INVALID_ARGUMENT and keeps serving', async () => {
    const reply = await client.request(APPROVAL_SUBJECTS.check, new Uint8Array([0x0a, 0xff]), { timeoutMs: 10_000 });
    expect(fromBinary(CheckApprovalResponseSchema, reply.data).error?.code).toBe('INVALID_ARGUMENT');
  });

  it('20 concurrent records through the queue group of two replicas make seqs 1..20, a resent one is a duplicate, and the chain verifies', async () => {
    const results = await Promise.all([...Array.from({ length: 20 }, (_, i) => record(`call-${i}`)), record('call-3')]);
    expect(results.every((r) => r.error === undefined)).toBe(true);
    expect(results.filter((r) => r.duplicate)).toHaveLength(1);
    const seqs = results.filter((r) => !r.duplicate).map((r) => Number(r.entry?.seq));
    expect(seqs.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await verify()).toMatchObject({ ok: true, entries: 20n });
  });

  it('verify finds an entry deleted in the database', async () => {
    await (stores[0] as SqlStore).db.deleteFrom('approval_audit').where('tenant_id', '=', 'acme').where('seq', '=', 7).execute();
    expect(await verify()).toMatchObject({ ok: false, firstBadSeq: 7n, detail: 'entry 7 is missing (found 8 next)' });
  });
});
