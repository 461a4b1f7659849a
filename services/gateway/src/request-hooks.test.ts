import { afterEach, describe, expect, it, vi } from 'vitest';
import { instruments, tracingEnabled } from '@agentloop/telemetry';
import { startTestGateway, type TestGateway } from './testing/index.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await gw?.close();
  gw = undefined;
});

describe('per-request hooks with tracing off', () => {
  it('still record each request’s duration by route and status, and still refuse a missing key', async () => {
    expect(tracingEnabled()).toBe(false);
    gw = await startTestGateway({ env: { AGENTLOOP_API_KEYS: 'secret-key:acme' } });
    const record = vi.spyOn(instruments().httpRequestDuration, 'record');
    const created = await gw.app.inject({ method: 'POST', url: '/threads', headers: { 'x-api-key': 'secret-key' }, payload: {} });
    expect(created.statusCode).toBe(200);
    expect((created.json() as { thread_id: string }).thread_id).toMatch(/^[0-9a-f-]{36}$/);
    const refused = await gw.app.inject({ method: 'POST', url: '/threads', payload: {} });
    expect(refused.statusCode).toBe(401);
    expect(record).toHaveBeenCalledTimes(1);
    const [seconds, attrs] = record.mock.calls[0]!;
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(attrs).toEqual({ 'http.request.method': 'POST', 'http.route': '/threads', 'http.response.status_code': 200 });
  });
});
