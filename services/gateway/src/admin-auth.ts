import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { presentedKey, type ApiKeyAuthenticator } from './auth.js';
import { ApiError, UnauthenticatedError } from './errors.js';

/** Paths of the operator API: only an admin key (AGENTLOOP_ADMIN_API_KEYS) may call them. */
export const ADMIN_PATH_PREFIX = '/admin/';

const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/**
 * Who may call `/admin/*`: a key of AGENTLOOP_ADMIN_API_KEYS (compared in constant time, like tenant
 * keys). A tenant key is recognised and refused with 403, so its holder learns why; no key or an
 * unknown one is 401. A server with neither tenant nor admin keys is open, like the rest of its API.
 */
export class AdminAuthenticator {
  private readonly digests: Buffer[];

  constructor(
    adminKeys: readonly string[],
    private readonly tenants: ApiKeyAuthenticator,
  ) {
    this.digests = adminKeys.map(sha256);
  }

  /** Throws UnauthenticatedError (401) or a PERMISSION_DENIED ApiError (403) unless the request carries an admin key. */
  authorize(headers: IncomingHttpHeaders): void {
    if (this.digests.length === 0 && !this.tenants.enabled) return;
    const key = presentedKey(headers);
    if (key === undefined) throw new UnauthenticatedError('Missing admin API key: send a key of AGENTLOOP_ADMIN_API_KEYS in the "x-api-key" header.');
    const digest = sha256(key);
    let admin = false;
    for (const d of this.digests) admin = timingSafeEqual(digest, d) || admin;
    if (admin) return;
    if (this.tenants.lookup(key) !== undefined) {
      throw new ApiError(
        'PERMISSION_DENIED',
        'Admin only: this is a tenant API key, and /admin endpoints (such as the cluster reload) need a key of AGENTLOOP_ADMIN_API_KEYS.',
      );
    }
    throw new UnauthenticatedError('Invalid admin API key.');
  }
}
