import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { describeBudgets, fetchTenantUsage } from './tenant-usage.js';

let server: Server | undefined;
afterEach(() => server?.close());

/** A server answering each path with `routes[path]` (status and JSON body); anything else 404. Records the URLs asked. */
async function serve(routes: Record<string, [number, unknown]>): Promise<{ url: string; asked: string[] }> {
  const asked: string[] = [];
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    asked.push(`${req.url ?? ''} key=${String(req.headers['x-api-key'] ?? '')}`);
    const [status, body] = routes[(req.url ?? '').split('?')[0]!] ?? [404, { detail: 'Not found' }];
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, asked };
}

const REPORT = {
  tenant_id: 'acme',
  from: '2026-11-01',
  to: '2026-11-24',
  totals: { input_tokens: 900, output_tokens: 100, total_tokens: 1000, model_calls: 4, runs: 2 },
  by_model: [],
  by_day: [
    { day: '2026-11-03', input_tokens: 600, output_tokens: 50, total_tokens: 650, model_calls: 2 },
    { day: '2026-11-24', input_tokens: 300, output_tokens: 50, total_tokens: 350, model_calls: 2 },
  ],
  budget: { daily: null, monthly: { limit: 5000, used: 1000, resets_at: '2026-12-01T00:00:00.000Z' } },
};

describe('fetchTenantUsage', () => {
  it("reads the caller's tenant from GET /console/session and its usage today and this month from GET /usage", async () => {
    const s = await serve({ '/console/session': [200, { tenant_id: 'acme', admin: false }], '/usage': [200, REPORT] });
    const usage = await fetchTenantUsage({ apiUrl: `${s.url}/`, apiKey: 'k1' });
    expect(usage).toEqual({
      tenantId: 'acme',
      today: { input_tokens: 300, output_tokens: 50, total_tokens: 350 },
      month: { input_tokens: 900, output_tokens: 100, total_tokens: 1000 },
      from: '2026-11-01',
      to: '2026-11-24',
      budget: REPORT.budget,
    });
    expect(s.asked).toEqual(['/console/session key=k1', '/usage?group_by=day&tenant_id=acme key=k1']);
    expect(describeBudgets(usage!.budget)).toBe('monthly budget: 1000 of 5000 tokens used, resets 2026-12-01T00:00:00.000Z');
  });

  it('is undefined on a server without GET /usage (404), so the caller keeps summing its threads', async () => {
    const s = await serve({ '/console/session': [200, { tenant_id: 'acme' }] });
    expect(await fetchTenantUsage({ apiUrl: s.url })).toBeUndefined();
  });

  it('is undefined when the server answers for every tenant without saying which is the caller', async () => {
    const s = await serve({ '/usage': [200, { tenants: [REPORT] }] });
    expect(await fetchTenantUsage({ apiUrl: s.url })).toBeUndefined();
  });

  it("throws with the server's words on another refusal", async () => {
    const s = await serve({ '/console/session': [200, { tenant_id: 'acme' }], '/usage': [403, { detail: 'Forbidden here' }] });
    await expect(fetchTenantUsage({ apiUrl: s.url })).rejects.toThrow('GET /usage: 403 Forbidden here');
  });

  it('no day with usage today counts zero; no budget set says so', async () => {
    const s = await serve({
      '/console/session': [200, { tenant_id: 'acme' }],
      '/usage': [200, { ...REPORT, by_day: REPORT.by_day.slice(0, 1), budget: { daily: null, monthly: null } }],
    });
    const usage = await fetchTenantUsage({ apiUrl: s.url });
    expect(usage?.today.total_tokens).toBe(0);
    expect(describeBudgets(usage!.budget)).toBe('no budget set');
  });
});
