import type { IncomingHttpHeaders } from 'node:http';
import type { ApiKeyAuthenticator } from './auth.js';
import { ApiError } from './errors.js';

/** Paths of the operator API: only an operator key (AGENTLOOP_ADMIN_KEYS) may call them. */
export const ADMIN_PATH_PREFIX = '/admin/';

/**
 * Who may call `/admin/*`: an operator key — one of AGENTLOOP_ADMIN_KEYS, the same keys that see
 * every tenant on the ops console and `GET /usage`. A tenant key is recognised and refused with 403,
 * so its holder learns why; no key or an unknown one is 401 (the authenticator's). A server without
 * keys is open, like the rest of its API.
 */
export class AdminAuthenticator {
  constructor(private readonly keys: ApiKeyAuthenticator) {}

  /** Throws UnauthenticatedError (401) or a PERMISSION_DENIED ApiError (403) unless the request carries an operator key. */
  authorize(headers: IncomingHttpHeaders): void {
    if (!this.keys.enabled) return;
    if (this.keys.identify(headers).admin) return;
    throw new ApiError(
      'PERMISSION_DENIED',
      'Admin only: this is a tenant API key, and /admin endpoints (such as the cluster reload) need an operator key of AGENTLOOP_ADMIN_KEYS.',
    );
  }
}
