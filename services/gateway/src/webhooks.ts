import { createHmac, timingSafeEqual } from 'node:crypto';
import { fromBinary, WebhookJobSchema, type WebhookJob } from '@agentloop/proto';
import { UnrecoverableJobError, type Job, type JobQueue, type QueueWorker } from '@agentloop/queue';
import { errorMessage, type Logger } from '@agentloop/core';
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
  config: Pick<GatewayConfig, 'WEBHOOK_SECRET' | 'WEBHOOK_TIMEOUT_MS'> & Partial<Pick<GatewayConfig, 'WEBHOOK_CONCURRENCY'>>;
  /** HTTP client (tests may pass one); defaults to the global fetch. */
  fetch?: typeof fetch;
}

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

/** Statuses other than 2xx that are worth retrying; every other 4xx is final. */
const RETRYABLE_4XX = new Set([408, 425, 429]);

/**
 * Delivers one WebhookJob. Resolves on 2xx; throws WebhookDeliveryError for
 * retryable failures and UnrecoverableJobError for final ones.
 */
export async function deliverWebhook(
  job: WebhookJob,
  opts: { secret?: string | undefined; timeoutMs: number; signal?: AbortSignal; fetch?: typeof fetch; nowSec?: number },
): Promise<number> {
  let url: URL;
  try {
    url = new URL(job.url);
  } catch {
    throw new UnrecoverableJobError(`webhook URL is not valid: ${JSON.stringify(job.url)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UnrecoverableJobError(`webhook URL must be http(s): ${url.protocol}`);
  }
  const timestamp = opts.nowSec ?? Math.floor(Date.now() / 1000);
  const body = job.payloadJson;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'agentloop-webhooks/1',
    'webhook-id': job.deliveryId,
    'webhook-timestamp': String(timestamp),
  };
  if (opts.secret) headers['webhook-signature'] = signWebhook(opts.secret, job.deliveryId, timestamp, body);
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
  let res: Response;
  try {
    res = await (opts.fetch ?? fetch)(url, { method: 'POST', headers, body, signal, redirect: 'manual' });
  } catch (err) {
    const why = timeout.aborted ? `no response within ${opts.timeoutMs} ms` : errorMessage(err);
    throw new WebhookDeliveryError(`POST ${url.origin}${url.pathname} failed: ${why}`, { cause: err });
  }
  // The body is not used; drain it so the connection can be reused.
  await res.arrayBuffer().catch(() => undefined);
  if (res.status >= 200 && res.status < 300) return res.status;
  const msg = `POST ${url.origin}${url.pathname} answered HTTP ${res.status}`;
  if (res.status >= 400 && res.status < 500 && !RETRYABLE_4XX.has(res.status)) throw new UnrecoverableJobError(`${msg} (not retried)`);
  throw new WebhookDeliveryError(msg);
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
    try {
      const status = await deliverWebhook(hook, {
        secret: opts.config.WEBHOOK_SECRET,
        timeoutMs: opts.config.WEBHOOK_TIMEOUT_MS,
        signal,
        ...(opts.fetch ? { fetch: opts.fetch } : {}),
      });
      log.info({ ...fields, status }, 'webhook delivered');
    } catch (err) {
      if (err instanceof UnrecoverableJobError) {
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
