import { afterEach, describe, expect, it } from 'vitest';
import { Headers, MemoryBus, MemoryRunEventStream } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { MemoryQueue } from '@agentloop/queue';
import { createSqliteStore } from '@agentloop/store';
import { createTempDir } from '@agentloop/workspace';
import {
  AuditEntrySchema,
  DecisionKind,
  ListAuditRequestSchema,
  ListAuditResponseSchema,
  RiskLevel,
  create,
  fromBinary,
  toBinary,
  type ListAuditRequest,
} from '@agentloop/proto';
import { createGatewayApp } from '../app.js';
import { loadGatewayConfig } from '../config.js';

const closers: Array<() => PromiseLike<unknown>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A gateway with API keys whose bus answers `agentloop.approval.audit` with one entry (the approval service is not imported here). */
async function gatewayWithAudit() {
  const bus = new MemoryBus();
  const asked: Array<{ req: ListAuditRequest; tenantHeader: string | undefined }> = [];
  await bus.serve('agentloop.approval.audit', { queue: 'approval' }, async (msg) => {
    const req = fromBinary(ListAuditRequestSchema, msg.data);
    asked.push({ req, tenantHeader: msg.headers[Headers.tenant] });
    const entry = create(AuditEntrySchema, {
      tenantId: req.tenantId,
      seq: 1n,
      threadId: 'th-1',
      runId: 'run-1',
      toolCallId: 'call-1',
      toolName: 'write_file',
      argsSha256: 'a'.repeat(64),
      decision: DecisionKind.APPROVED,
      reason: 'Sensitive data',
      rule: 'global:critical',
      riskLevel: RiskLevel.CRITICAL,
      decidedBy: 'admin@corp',
      approverTenantId: req.tenantId,
      approverKeyId: 'key_0123456789ab',
      comment: '',
      createdAtMs: 1_700_000_000_000n,
      prevHash: '0'.repeat(64),
      hash: 'b'.repeat(64),
    });
    return toBinary(ListAuditResponseSchema, create(ListAuditResponseSchema, { entries: [entry] }));
  });
  const tmp = await createTempDir('agentloop-gateway-approvals-');
  const store = createSqliteStore({ path: ':memory:' });
  await store.migrate();
  const runs = new MemoryQueue('runs');
  const events = new MemoryRunEventStream();
  const config = loadGatewayConfig({ WORKSPACE_ROOT: tmp.path, AGENTLOOP_API_KEYS: 'secret-key-a:tenant-a' });
  const app = await createGatewayApp({ store, runs, events, logger: silentLogger(), config, bus });
  await app.ready();
  closers.push(
    () => tmp[Symbol.asyncDispose](),
    () => store.close(),
    () => runs.close(),
    () => events.close(),
    () => bus.close(),
    () => app.close(),
  );
  return { app, asked };
}

describe('GET /approvals/audit', () => {
  it("shows the server-set approver (tenant, key id) beside the client's decided_by label", async () => {
    const { app, asked } = await gatewayWithAudit();
    const res = await app.inject({ method: 'GET', url: '/approvals/audit?thread_id=th-1', headers: { 'x-api-key': 'secret-key-a' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      entries: [
        expect.objectContaining({
          seq: 1,
          tool: 'write_file',
          decision: 'approved',
          risk_level: 'critical',
          decided_by: 'admin@corp',
          approver_tenant_id: 'tenant-a',
          approver_key_id: 'key_0123456789ab',
          created_at: '2023-11-14T22:13:20.000Z',
        }),
      ],
    });
    // The tenant asked about is the key's, in the body and the header.
    expect(asked[0]).toMatchObject({ req: { tenantId: 'tenant-a', threadId: 'th-1' }, tenantHeader: 'tenant-a' });
    expect(res.body).not.toContain('secret-key-a');
  });
});
