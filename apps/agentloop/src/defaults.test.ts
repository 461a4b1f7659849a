import { describe, expect, it } from 'vitest';
import { RUN_CONCURRENCY_DEFAULT } from '@agentloop/orchestrator';
import { launcherDefaults, MULTI_TENANT_MAX_ACTIVE_RUNS } from './defaults.js';

describe('launcherDefaults', () => {
  it('without API keys: the offline demo (scripted model, loopback webhooks when asked)', () => {
    expect(launcherDefaults({}, { loopbackWebhooks: true })).toEqual({ ALLOW_SCRIPTED_MODEL: 'true', WEBHOOK_ALLOW: '127.0.0.0/8,::1,localhost' });
    expect(launcherDefaults({}, { loopbackWebhooks: false })).toEqual({ ALLOW_SCRIPTED_MODEL: 'true' });
  });

  it('with API keys: no scripted model, no loopback webhooks, per-tenant caps', () => {
    const d = launcherDefaults({ AGENTLOOP_API_KEYS: 'k:acme' }, { loopbackWebhooks: true });
    expect(d.ALLOW_SCRIPTED_MODEL).toBeUndefined();
    expect(d.WEBHOOK_ALLOW).toBeUndefined();
    expect(d).toEqual({ TENANT_MAX_CONCURRENT_RUNS: String(RUN_CONCURRENCY_DEFAULT / 2), TENANT_MAX_ACTIVE_RUNS: String(MULTI_TENANT_MAX_ACTIVE_RUNS) });
  });

  it('the per-tenant cap is half of RUN_CONCURRENCY, at least 1', () => {
    expect(launcherDefaults({ AGENTLOOP_API_KEYS: 'k:a', RUN_CONCURRENCY: '32' }, { loopbackWebhooks: false }).TENANT_MAX_CONCURRENT_RUNS).toBe('16');
    expect(launcherDefaults({ AGENTLOOP_API_KEYS: 'k:a', RUN_CONCURRENCY: '1' }, { loopbackWebhooks: false }).TENANT_MAX_CONCURRENT_RUNS).toBe('1');
  });

  it('an empty AGENTLOOP_API_KEYS means no keys', () => {
    expect(launcherDefaults({ AGENTLOOP_API_KEYS: '  ' }, { loopbackWebhooks: false }).ALLOW_SCRIPTED_MODEL).toBe('true');
  });
});
