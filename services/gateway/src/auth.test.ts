import { describe, expect, it } from 'vitest';
import { ApiKeyAuthenticator, DEFAULT_TENANT, presentedKey } from './auth.js';
import { UnauthenticatedError } from './errors.js';

const keys = new Map([
  ['key-a', 'tenantA'],
  ['key-b', 'tenantB'],
]);

describe('ApiKeyAuthenticator', () => {
  it('maps every request to the default tenant when no keys are configured', () => {
    expect(new ApiKeyAuthenticator(new Map()).authenticate({})).toBe(DEFAULT_TENANT);
  });

  it('maps an x-api-key to its tenant', () => {
    expect(new ApiKeyAuthenticator(keys).authenticate({ 'x-api-key': 'key-b' })).toBe('tenantB');
  });

  it('accepts the key as an Authorization bearer token', () => {
    expect(new ApiKeyAuthenticator(keys).authenticate({ authorization: 'Bearer key-a' })).toBe('tenantA');
  });

  it('rejects a missing key when keys are configured', () => {
    expect(() => new ApiKeyAuthenticator(keys).authenticate({})).toThrow(UnauthenticatedError);
  });

  it('rejects an unknown key, including a prefix of a valid one', () => {
    const auth = new ApiKeyAuthenticator(keys);
    expect(() => auth.authenticate({ 'x-api-key': 'key-' })).toThrow('Invalid API key');
    expect(auth.lookup('key-a-extra')).toBeUndefined();
  });
});

describe('presentedKey', () => {
  it('prefers x-api-key over Authorization', () => {
    expect(presentedKey({ 'x-api-key': 'k1', authorization: 'Bearer k2' })).toBe('k1');
  });

  it('ignores a non-bearer Authorization header', () => {
    expect(presentedKey({ authorization: 'Basic abc' })).toBeUndefined();
  });
});

describe('operator keys (AGENTLOOP_ADMIN_KEYS, issue 16)', () => {
  it('marks an operator key as admin with its tenant, and tenant keys as not', () => {
    const auth = new ApiKeyAuthenticator(keys, new Map([['key-ops', 'ops']]));
    expect(auth.identify({ 'x-api-key': 'key-ops' })).toMatchObject({ tenant: 'ops', admin: true });
    expect(auth.identify({ 'x-api-key': 'key-a' })).toMatchObject({ tenant: 'tenantA', admin: false });
    expect(new ApiKeyAuthenticator(new Map()).identify({})).toMatchObject({ tenant: DEFAULT_TENANT, admin: false });
  });

  it('refuses a configuration listing one key as both a tenant key and an operator key', async () => {
    const { loadGatewayConfig } = await import('./config.js');
    expect(() => loadGatewayConfig({ AGENTLOOP_API_KEYS: 'k1:acme', AGENTLOOP_ADMIN_KEYS: 'k1:ops' })).toThrow(
      /AGENTLOOP_ADMIN_KEYS: a key is also listed in AGENTLOOP_API_KEYS/,
    );
    expect(loadGatewayConfig({ AGENTLOOP_API_KEYS: 'k1:acme', AGENTLOOP_ADMIN_KEYS: 'k2:ops' }).AGENTLOOP_ADMIN_KEYS.get('k2')).toBe('ops');
  });
});
