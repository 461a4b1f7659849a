import { describe, expect, it } from 'vitest';
import { AdminAuthenticator } from './admin-auth.js';
import { ApiKeyAuthenticator } from './auth.js';

const keys = new ApiKeyAuthenticator(new Map([['tenant-key', 'acme']]), new Map([['admin-key', 'ops']]));
const statusOf = (fn: () => void): number | 'ok' => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return (err as { statusCode: number }).statusCode;
  }
};

describe('AdminAuthenticator', () => {
  const admin = new AdminAuthenticator(keys);
  it('lets an operator key (AGENTLOOP_ADMIN_KEYS) through, refuses a tenant key with 403 and no or an unknown key with 401', () => {
    expect(statusOf(() => admin.authorize({ 'x-api-key': 'admin-key' }))).toBe('ok');
    expect(statusOf(() => admin.authorize({ authorization: 'Bearer admin-key' }))).toBe('ok');
    expect(statusOf(() => admin.authorize({ 'x-api-key': 'tenant-key' }))).toBe(403);
    expect(statusOf(() => admin.authorize({}))).toBe(401);
    expect(statusOf(() => admin.authorize({ 'x-api-key': 'admin-ke' }))).toBe(401);
  });

  it('is open only on a server with no keys at all', () => {
    expect(statusOf(() => new AdminAuthenticator(new ApiKeyAuthenticator(new Map())).authorize({}))).toBe('ok');
    const tenantsOnly = new ApiKeyAuthenticator(new Map([['tenant-key', 'acme']]));
    expect(statusOf(() => new AdminAuthenticator(tenantsOnly).authorize({ 'x-api-key': 'tenant-key' }))).toBe(403);
  });
});
