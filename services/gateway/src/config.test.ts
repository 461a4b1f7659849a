import { describe, expect, it } from 'vitest';
import { ConfigError } from '@agentloop/core';
import { loadGatewayConfig } from './config.js';

describe('loadGatewayConfig', () => {
  it('applies the defaults on an empty environment', () => {
    const c = loadGatewayConfig({});
    expect(c.PORT).toBe(2024);
    expect(c.HOST).toBe('0.0.0.0');
    expect(c.AGENTLOOP_API_KEYS.size).toBe(0);
    expect(c.WEBHOOK_TIMEOUT_MS).toBe(10_000);
    expect(c.RUN_WAIT_MAX_MS).toBe(3_600_000);
  });

  it('parses API keys into a key → tenant map', () => {
    const c = loadGatewayConfig({ AGENTLOOP_API_KEYS: 'k1:acme, k2:globex' });
    expect([...c.AGENTLOOP_API_KEYS]).toEqual([
      ['k1', 'acme'],
      ['k2', 'globex'],
    ]);
  });

  it('rejects an API key entry without a tenant, naming the variable', () => {
    expect(() => loadGatewayConfig({ AGENTLOOP_API_KEYS: 'k1' })).toThrow(ConfigError);
    expect(() => loadGatewayConfig({ AGENTLOOP_API_KEYS: 'k1' })).toThrow(/AGENTLOOP_API_KEYS/);
  });

  it('rejects a non-numeric PORT', () => {
    expect(() => loadGatewayConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });
});
