/**
 * Token budgets at admission and `GET /usage` on the gateway alone (issue 17), over a ledger
 * filled directly: acme is over its daily budget, globex has none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { usagePeriods } from '@agentloop/core';
import { failure, startTwoTenantGrpc, type TwoTenantGrpc } from '../grpc/testing.js';

let t: TwoTenantGrpc;
const today = usagePeriods(new Date());
const say = (text: string) => ({ messages: [{ role: 'user', content: text }] });

beforeAll(async () => {
  t = await startTwoTenantGrpc({
    env: {
      AGENTLOOP_API_KEYS: 'acme-key:acme,globex-key:globex',
      AGENTLOOP_ADMIN_KEYS: 'ops-key:ops',
      TENANT_TOKEN_BUDGETS_DAILY: 'acme=1000',
      TOKEN_BUDGET_MONTHLY: '50000',
    },
  });
  const spend = (tenantId: string, model: string, input: number, output: number) =>
    t.gw.store.recordTokenUsage({
      tenantId,
      day: today.day,
      model,
      inputTokens: input,
      outputTokens: output,
      totalTokens: input + output,
      firstCallOfRun: true,
    });
  await spend('acme', 'gpt-x', 900, 300);
  await spend('globex', 'gpt-x', 10, 5);
  await spend('globex', 'small', 1, 1);
});
afterAll(async () => t.close());

const http = (key: string, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  t.gw.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload: payload as object }) });

describe('token budgets at admission', () => {
  it('HTTP: 429 with Retry-After to the next UTC midnight and a body naming the budget; another tenant is admitted', async () => {
    const res = await http('acme-key', 'POST', '/runs', { assistant_id: 'agent', input: say('x') });
    expect(res.statusCode).toBe(429);
    expect(res.json()).toMatchObject({
      error: 'token_budget_exceeded',
      budget: 'daily',
      limit: 1000,
      used: 1200,
      resets_at: today.dayResetsAt.toISOString(),
    });
    expect(res.json().detail).toBe(
      `Tenant acme has used its daily token budget: 1200 of 1000 tokens. It resets at ${today.dayResetsAt.toISOString()}. New runs are refused until then.`,
    );
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((today.dayResetsAt.getTime() - Date.now()) / 1000) + 1);
    expect((await http('globex-key', 'POST', '/runs', { assistant_id: 'agent', input: say('x') })).statusCode).toBe(200);
  });

  it('gRPC: RESOURCE_EXHAUSTED saying which budget and when it resets', async () => {
    const err = await failure(t.acme.createRun({ inputJson: JSON.stringify(say('x')) }));
    expect(err.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(err.details).toContain(`daily token budget: 1200 of 1000 tokens. It resets at ${today.dayResetsAt.toISOString()}`);
    expect((await t.globex.createRun({ inputJson: JSON.stringify(say('x')) })).status).toBe('pending');
  });
});

describe('GET /usage', () => {
  it("a tenant's own usage by model, with its budgets", async () => {
    const res = await http('globex-key', 'GET', '/usage');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      tenant_id: 'globex',
      from: today.monthStart,
      to: today.day,
      totals: { input_tokens: 11, output_tokens: 6, total_tokens: 17, model_calls: 2, runs: 2 },
      by_model: [
        { model: 'gpt-x', input_tokens: 10, output_tokens: 5, total_tokens: 15, model_calls: 1 },
        { model: 'small', input_tokens: 1, output_tokens: 1, total_tokens: 2, model_calls: 1 },
      ],
      budget: { daily: null, monthly: { limit: 50_000, used: 17, resets_at: today.monthResetsAt.toISOString() } },
    });
  });

  it('an operator reads every tenant, or one; a tenant key cannot read another tenant', async () => {
    const all = (await http('ops-key', 'GET', '/usage')).json() as { tenants: Array<{ tenant_id: string; totals: { total_tokens: number } }> };
    expect(all.tenants.map((x) => [x.tenant_id, x.totals.total_tokens])).toEqual([
      ['acme', 1200],
      ['globex', 17],
    ]);
    const one = await http('ops-key', 'GET', `/usage?tenant_id=acme&group_by=day&from=${today.day}&to=${today.day}`);
    expect(one.json()).toMatchObject({ tenant_id: 'acme', by_day: [{ day: today.day, total_tokens: 1200, model_calls: 1 }] });
    const denied = await http('acme-key', 'GET', '/usage?tenant_id=globex');
    expect(denied.statusCode).toBe(403);
    expect(denied.json().detail).toContain('query.tenant_id');
  });

  it('names the query field that is wrong', async () => {
    const bad = await http('acme-key', 'GET', '/usage?from=2026-02-30');
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors).toEqual([{ path: 'query.from', message: 'not a calendar date' }]);
    expect((await http('acme-key', 'GET', '/usage?group_by=week')).json().errors[0].path).toBe('query.group_by');
    expect((await http('acme-key', 'GET', '/usage?from=2026-03-10&to=2026-03-01')).json().detail).toContain('query.from (2026-03-10) is after query.to');
    expect((await http('acme-key', 'GET', '/usage?from=2024-01-01&to=2026-01-01')).statusCode).toBe(422);
  });
});
