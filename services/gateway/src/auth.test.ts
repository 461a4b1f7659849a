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
