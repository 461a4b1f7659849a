import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { UnauthenticatedError } from './errors.js';

/** The tenant of every request when no API keys are configured. */
export const DEFAULT_TENANT = 'default';

/**
 * Maps API keys to tenants. Keys are compared as SHA-256 digests with
 * `timingSafeEqual`, against every configured key without an early exit, so
 * the response time says nothing about how much of a key was right.
 */
export class ApiKeyAuthenticator {
  private readonly entries: { digest: Buffer; tenant: string; admin: boolean }[];

  /** `adminKeys` (key → tenant): operator keys that also see every tenant on the ops console's reads. */
  constructor(keys: ReadonlyMap<string, string>, adminKeys: ReadonlyMap<string, string> = new Map()) {
    this.entries = [
      ...[...keys].map(([key, tenant]) => ({ digest: sha256(key), tenant, admin: false })),
      ...[...adminKeys].map(([key, tenant]) => ({ digest: sha256(key), tenant, admin: true })),
    ];
  }

  /** True when keys are configured and requests must present one. */
  get enabled(): boolean {
    return this.entries.length > 0;
  }

  /** Returns the tenant for the request's key; throws UnauthenticatedError when auth is on and the key is missing or unknown. */
  authenticate(headers: IncomingHttpHeaders): string {
    return this.identify(headers).tenant;
  }

  /**
   * The caller: the tenant its key maps to and the key's id (see `apiKeyId`), which is what the
   * server records as "who" wherever a client could otherwise type any name (approvals).
   * Throws UnauthenticatedError when auth is on and the key is missing or unknown.
   */
  identify(headers: IncomingHttpHeaders): Caller {
    if (!this.enabled) return { tenant: DEFAULT_TENANT, keyId: '', admin: false };
    const key = presentedKey(headers);
    if (key === undefined) {
      throw new UnauthenticatedError('Missing API key: send it in the "x-api-key" header (or "Authorization: Bearer <key>").');
    }
    const entry = this.find(key);
    if (entry === undefined) throw new UnauthenticatedError('Invalid API key.');
    return { tenant: entry.tenant, keyId: apiKeyId(key), admin: entry.admin };
  }

  /** Constant-time lookup of a key among the configured ones. */
  lookup(key: string): string | undefined {
    return this.find(key)?.tenant;
  }

  private find(key: string): { tenant: string; admin: boolean } | undefined {
    const digest = sha256(key);
    let found: { tenant: string; admin: boolean } | undefined;
    for (const e of this.entries) {
      if (timingSafeEqual(digest, e.digest) && found === undefined) found = e;
    }
    return found;
  }
}

/** Who made a request: its tenant and the id of its API key ("" when auth is off). */
export interface Caller {
  tenant: string;
  keyId: string;
  /** An operator key (AGENTLOOP_ADMIN_KEYS): the ops console's reads cover every tenant. */
  admin: boolean;
}

/**
 * A stable, non-secret name of an API key for logs and the audit trail: `key_` and the first 12
 * hex digits of its SHA-256 (48 bits: enough to tell a deployment's keys apart, far too few to
 * help guess one). Operators find a key's id with `node -e` over the same hash.
 */
export function apiKeyId(key: string): string {
  return `key_${sha256(key).toString('hex').slice(0, 12)}`;
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** The key from `x-api-key`, else from `Authorization: Bearer <key>`. */
export function presentedKey(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['x-api-key'];
  const xKey = Array.isArray(raw) ? raw[0] : raw;
  if (xKey !== undefined && xKey.trim() !== '') return xKey.trim();
  const auth = headers.authorization;
  if (auth !== undefined) {
    const m = /^Bearer\s+(.+)$/i.exec(auth.trim());
    if (m?.[1]) return m[1].trim();
  }
  return undefined;
}
