import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startRedis, type DevServer } from '@agentloop/devservers';
import { startTestGateway, type TestGateway } from './testing/index.js';

let gws: TestGateway[] = [];
let redis: DevServer | undefined;
const clients: Redis[] = [];
afterEach(async () => {
  await Promise.all(gws.map((g) => g.close()));
  gws = [];
  for (const c of clients.splice(0)) c.disconnect();
  await redis?.stop();
  redis = undefined;
});

const KEYS = 'ka:acme,kb:globex,kc:bigco';

describe('rate limits per tenant', () => {
  it('answers 429 with Retry-After past the tenant limit, without affecting other tenants, and /ok is exempt', async () => {
    const gw = await startTestGateway({ orchestrator: false, env: { AGENTLOOP_API_KEYS: KEYS, RATE_LIMIT_MAX: '3', TENANT_RATE_LIMITS: 'bigco=10' } });
    gws.push(gw);
    const get = (key: string) => gw.app.inject({ method: 'GET', url: '/assistants/agent', headers: { 'x-api-key': key } });
    for (let i = 0; i < 3; i++) expect((await get('ka')).statusCode).toBe(200);
    const limited = await get('ka');
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((limited.json() as { detail: string }).detail).toMatch(/^Rate limit exceeded for tenant acme: at most 3 requests per 60 s window/);
    expect((await get('kb')).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) expect((await get('kc')).statusCode).toBe(200);
    expect((await get('kc')).statusCode).toBe(429);
    for (let i = 0; i < 5; i++) expect((await gw.app.inject({ method: 'GET', url: '/ok' })).statusCode).toBe(200);
  });

  it('two gateway replicas share one tenant budget through Redis', async () => {
    redis = await startRedis();
    const env = { AGENTLOOP_API_KEYS: KEYS, RATE_LIMIT_MAX: '4' };
    for (let i = 0; i < 2; i++) {
      const client = new Redis(redis.url);
      clients.push(client);
      gws.push(await startTestGateway({ orchestrator: false, env, rateLimitRedis: client }));
    }
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await gws[i % 2]!.app.inject({ method: 'GET', url: '/assistants/agent', headers: { 'x-api-key': 'ka' } });
      codes.push(res.statusCode);
    }
    expect(codes).toEqual([200, 200, 200, 200, 429, 429]);
  });

  it('limiting is off unless RATE_LIMIT_MAX is set; a bad TENANT_RATE_LIMITS is a configuration error', async () => {
    const gw = await startTestGateway({ orchestrator: false, env: {} });
    gws.push(gw);
    for (let i = 0; i < 20; i++) expect((await gw.app.inject({ method: 'GET', url: '/assistants/agent' })).statusCode).toBe(200);
    await expect(startTestGateway({ orchestrator: false, env: { TENANT_RATE_LIMITS: 'acme:5' } })).rejects.toThrow(/TENANT_RATE_LIMITS/);
  });
});

describe('active run quota per tenant', () => {
  it('refuses a new run with 429 once the tenant has its quota of pending or running runs; other tenants and overrides are separate', async () => {
    const gw = await startTestGateway({ orchestrator: false, env: { AGENTLOOP_API_KEYS: KEYS, TENANT_MAX_ACTIVE_RUNS: '2', TENANT_RUN_QUOTAS: 'bigco=3' } });
    gws.push(gw);
    const start = (key: string) =>
      gw.app.inject({
        method: 'POST',
        url: '/runs',
        headers: { 'x-api-key': key },
        payload: { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] } },
      });
    expect((await start('ka')).statusCode).toBe(200);
    expect((await start('ka')).statusCode).toBe(200);
    const refused = await start('ka');
    expect(refused.statusCode).toBe(429);
    expect((refused.json() as { detail: string }).detail).toBe(
      'Tenant acme has 2 runs pending or running, at its limit of 2 (TENANT_MAX_ACTIVE_RUNS / TENANT_RUN_QUOTAS); retry when some have finished.',
    );
    expect((await start('kb')).statusCode).toBe(200);
    for (let i = 0; i < 3; i++) expect((await start('kc')).statusCode).toBe(200);
    expect((await start('kc')).statusCode).toBe(429);
  });
});
