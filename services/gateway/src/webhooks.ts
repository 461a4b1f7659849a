import { createHmac, timingSafeEqual } from 'node:crypto';
import { HostUnresolvedError, requestPinned, UrlRefusedError, vetUrl, type AllowEntry, type HostLookup, type VettedTarget } from '@agentloop/net';
import { fromBinary, WebhookJobSchema, type WebhookJob } from '@agentloop/proto';
import { UnrecoverableJobError, type Job, type JobQueue, type QueueWorker } from '@agentloop/queue';
import type { Store, WebhookAttempt } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import { instruments } from '@agentloop/telemetry';
import type { GatewayConfig } from './config.js';

/**
 * Webhook delivery (Standard Webhooks, https://www.standardwebhooks.com):
 * POST the run's JSON with `webhook-id` (the delivery id, stable across
 * retries so receivers de-duplicate), `webhook-timestamp` and, when a secret
 * is configured, `webhook-signature: v1,<base64 HMAC-SHA256>`.
 */

export interface WebhookWorkerOptions {
  /** The `webhooks` queue the orchestrator fills (job id = delivery id). */
  webhooks: JobQueue;
  logger: Logger;
  config: Pick<GatewayConfig, 'WEBHOOK_SECRET' | 'WEBHOOK_TIMEOUT_MS'> & Partial<Pick<GatewayConfig, 'WEBHOOK_CONCURRENCY' | 'WEBHOOK_ALLOW'>>;
  /** Resolver for the SSRF guard (tests). */
  lookup?: HostLookup;
  /** Where each attempt is logged (`GET /runs/{id}/webhook`); without it attempts are only logged as lines. */
  store?: Pick<Store, 'recordWebhookAttempt'>;
  /**
   * Replaces host paths in the body before it leaves (redaction.ts `gatewayPathRedactor`): a run's
   * error text comes from the orchestrator and the tools. The signature covers the redacted body.
   */
  redact?: (text: string) => string;
}

/** How the SSRF guard words webhook refusals. */
export const WEBHOOK_WORDING = {
  what: 'deliver a webhook to',
  policy: 'Webhooks reach public addresses only; an operator can allow more with WEBHOOK_ALLOW.',
} as const;

/** Key bytes of a secret: `whsec_<base64>` as Standard Webhooks defines it, any other string as UTF-8. */
export function webhookSecretKey(secret: string): Buffer {
  return secret.startsWith('whsec_') ? Buffer.from(secret.slice('whsec_'.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`. */
export function signWebhook(secret: string, id: string, timestampSec: number, body: string): string {
  const mac = createHmac('sha256', webhookSecretKey(secret)).update(`${id}.${timestampSec}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export interface VerifyWebhookOptions {
  /** Accepted clock skew in seconds (default 300); 0 disables the timestamp check. */
  toleranceSec?: number;
  /** "Now" in unix seconds (tests). */
  nowSec?: number;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function' && typeof (headers as Headers).has === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const v = key === undefined ? undefined : bag[key];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Verifies a delivery as a receiver would: the `webhook-signature` header
 * (space-separated `v1,<sig>` entries, any may match) against the raw body,
 * and `webhook-timestamp` within the tolerance. Constant-time comparison.
 */
export function verifyWebhookSignature(secret: string, headers: HeaderBag, body: string, opts: VerifyWebhookOptions = {}): boolean {
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const sigs = header(headers, 'webhook-signature');
  if (!id || !ts || !sigs || !/^\d+$/.test(ts)) return false;
  const timestamp = Number(ts);
  const tolerance = opts.toleranceSec ?? 300;
  const now = opts.nowSec ?? Math.floor(Date.now() / 1000);
  if (tolerance > 0 && Math.abs(now - timestamp) > tolerance) return false;
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body).slice(3), 'base64');
  let ok = false;
  for (const entry of sigs.split(' ')) {
    const [version, sig] = entry.split(',', 2);
    if (version !== 'v1' || !sig) continue;
    const given = Buffer.from(sig, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}

/** A delivery failed and should be retried (network error, timeout, 5xx, 408, 429). */
export class WebhookDeliveryError extends Error {
  override name = 'WebhookDeliveryError';
}

/**
 * The SSRF guard refused the delivery (internal address not in WEBHOOK_ALLOW, bad scheme,
 * credentials in the URL). Final: the same URL would be refused again.
 */
export class WebhookRefusedError extends UnrecoverableJobError {
  override name = 'WebhookRefusedError';
}

/** Statuses other than 2xx that are worth retrying; every other 4xx is final. */
const RETRYABLE_4XX = new Set([408, 425, 429]);

/**
 * Delivers one WebhookJob. Resolves with the status on 2xx; throws WebhookDeliveryError for
 * retryable failures (network, timeout, 5xx, 408/425/429, a host that does not resolve),
 * WebhookRefusedError when the SSRF guard refuses the URL and UnrecoverableJobError for other
 * final failures (3xx: redirects are never followed; other 4xx).
 */
export async function deliverWebhook(
  job: WebhookJob,
  opts: { secret?: string | undefined; timeoutMs: number; signal?: AbortSignal; nowSec?: number; allow?: readonly AllowEntry[]; lookup?: HostLookup },
): Promise<number> {
  // SSRF guard at every attempt: the name is resolved now and the connection pinned to the vetted
  // address, so a DNS answer that changed since submission (rebinding) cannot reach inside.
  let target: VettedTarget;
  try {
    target = await vetUrl(job.url, { allow: opts.allow ?? [], ...(opts.lookup ? { lookup: opts.lookup } : {}) }, WEBHOOK_WORDING);
  } catch (err) {
    // DNS may answer on a later attempt; a refusal would be the same every time.
    if (err instanceof HostUnresolvedError) throw new WebhookDeliveryError(err.message, { cause: err });
    if (err instanceof UrlRefusedError) throw new WebhookRefusedError(err.message, { cause: err });
    throw err;
  }
  const { url } = target;
  const timestamp = opts.nowSec ?? Math.floor(Date.now() / 1000);
  const body = job.payloadJson;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': 'agentloop-webhooks/1',
    'webhook-id': job.deliveryId,
    'webhook-timestamp': String(timestamp),
  };
  if (opts.secret) headers['webhook-signature'] = signWebhook(opts.secret, job.deliveryId, timestamp, body);
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  let status: number;
  try {
    status = await postPinned(target, headers, body, signal);
  } catch (err) {
    const why = timeout.aborted ? `no response within ${opts.timeoutMs} ms` : errorMessage(err);
    throw new WebhookDeliveryError(`POST ${url.origin}${url.pathname} failed: ${why}`, { cause: err });
  }
  if (status >= 200 && status < 300) return status;
  const msg = `POST ${url.origin}${url.pathname} answered HTTP ${status}`;
  // Redirects are never followed (the Location could be internal, and the receiver is the URL the
  // client gave); a receiver that redirects would redirect again, so a 3xx is final.
  if (status >= 300 && status < 400) throw new UnrecoverableJobError(`${msg}; redirects are not followed (not retried)`);
  if (status >= 400 && status < 500 && !RETRYABLE_4XX.has(status)) throw new UnrecoverableJobError(`${msg} (not retried)`);
  throw new WebhookDeliveryError(msg);
}

/** POST on a fresh connection to the vetted address; resolves with the status (the body is drained). */
async function postPinned(target: VettedTarget, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<number> {
  const res = await requestPinned(target, { method: 'POST', headers, body, signal });
  return new Promise<number>((resolve, reject) => {
    res.resume();
    res.on('end', () => resolve(res.statusCode ?? 0));
    res.on('error', reject);
  });
}

/**
 * Starts the delivery worker on the `webhooks` queue. Retries (attempts,
 * exponential backoff) are the job's, set by the enqueuer; a bad job or a
 * final 4xx fails at once.
 */
export async function startWebhookWorker(opts: WebhookWorkerOptions): Promise<QueueWorker> {
  const log = opts.logger.child({ component: 'webhooks' });
  const handler = async (job: Job, signal: AbortSignal): Promise<void> => {
    let hook: WebhookJob;
    try {
      hook = fromBinary(WebhookJobSchema, job.payload);
      if (opts.redact) hook.payloadJson = opts.redact(hook.payloadJson);
    } catch (err) {
      log.error({ job_id: job.id, err: errorMessage(err) }, 'webhooks job is not a valid WebhookJob; dropped');
      throw new UnrecoverableJobError(`webhooks job ${job.id} is not a valid WebhookJob: ${errorMessage(err)}`);
    }
    const fields = {
      delivery_id: hook.deliveryId,
      run_id: hook.runId,
      thread_id: hook.threadId,
      tenant: hook.tenantId,
      attempt: job.attemptsMade + 1,
      attempts: job.attempts,
    };
    const started = Date.now();
    const record = (outcome: WebhookAttempt['outcome'], statusCode: number | null, error: string | null) => {
      // Every attempt counts once, by how it ended (the dashboard's webhook outcomes, the failure alert).
      instruments().webhookDeliveries.add(1, { outcome });
      return opts.store
        ?.recordWebhookAttempt({
          tenantId: hook.tenantId,
          deliveryId: hook.deliveryId,
          runId: hook.runId,
          attempt: job.attemptsMade + 1,
          at: new Date(started),
          outcome,
          statusCode,
          error,
          durationMs: Date.now() - started,
        })
        .catch((err: unknown) => log.warn({ ...fields, err: errorMessage(err) }, 'webhook attempt not logged'));
    };
    try {
      const status = await deliverWebhook(hook, {
        secret: opts.config.WEBHOOK_SECRET,
        timeoutMs: opts.config.WEBHOOK_TIMEOUT_MS,
        signal,
        allow: opts.config.WEBHOOK_ALLOW ?? [],
        ...(opts.lookup ? { lookup: opts.lookup } : {}),
      });
      log.info({ ...fields, status }, 'webhook delivered');
      await record('delivered', status, null);
    } catch (err) {
      const code = /answered HTTP (\d{3})/.exec(errorMessage(err))?.[1];
      const refused = err instanceof WebhookRefusedError;
      const final = err instanceof UnrecoverableJobError || job.attemptsMade + 1 >= job.attempts;
      await record(refused ? 'refused' : final ? 'failed' : 'retry', code ? Number(code) : null, errorMessage(err));
      if (refused) {
        log.error({ ...fields, err: err.message }, 'webhook refused by the SSRF guard; not retried');
      } else if (err instanceof UnrecoverableJobError) {
        log.error({ ...fields, err: err.message }, 'webhook rejected by the receiver; not retried');
      } else if (job.attemptsMade + 1 >= job.attempts) {
        log.error({ ...fields, err: errorMessage(err) }, 'webhook delivery failed; no attempts left');
      } else {
        log.warn({ ...fields, err: errorMessage(err) }, 'webhook delivery failed; will retry');
      }
      throw err;
    }
  };
  return opts.webhooks.process(handler, { concurrency: opts.config.WEBHOOK_CONCURRENCY ?? 4 });
}
