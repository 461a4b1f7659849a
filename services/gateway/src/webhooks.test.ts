import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { create, toBinary, WebhookJobSchema, RunStatus } from '@agentloop/proto';
import { MemoryQueue, UnrecoverableJobError } from '@agentloop/queue';
import { silentLogger } from '@agentloop/core';
import { parseAllowList } from '@agentloop/net';
import { deliverWebhook, signWebhook, startWebhookWorker, verifyWebhookSignature } from './webhooks.js';

/** The test receivers listen on 127.0.0.1: allowed explicitly, as an operator would. */
const LOOPBACK = parseAllowList('127.0.0.1');

const SECRET = 'whsec_' + Buffer.from('a-very-secret-key-of-32-bytes!!!').toString('base64');

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A real HTTP receiver answering with the scripted statuses, then 200. */
class Receiver {
  readonly received: Received[] = [];
  private server: Server | undefined;
  private waiters: { count: number; resolve: () => void }[] = [];
  constructor(private readonly statuses: number[] = []) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        res.statusCode = this.statuses.shift() ?? 200;
        res.end('ok');
        this.waiters = this.waiters.filter((w) => (this.received.length >= w.count ? (w.resolve(), false) : true));
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  async stop(): Promise<void> {
    await new Promise<void>((r) => this.server?.close(() => r()));
  }
}

const hookJob = (url: string, deliveryId = '7b0a3f5e-54f4-4c38-9d0f-6a4f3c1e2b10') =>
  create(WebhookJobSchema, {
    deliveryId,
    url,
    runId: deliveryId,
    threadId: '0f9d5a8e-3c2b-4a1d-8e7f-6b5c4d3e2f1a',
    tenantId: 'default',
    status: RunStatus.SUCCESS,
    payloadJson: JSON.stringify({ run_id: deliveryId, status: 'success', values: { messages: [] } }),
  });

describe('webhook signatures', () => {
  it('verifies a signature made with the same secret', () => {
    const body = '{"a":1}';
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': signWebhook(SECRET, 'msg_1', 1700000000, body) };
    expect(verifyWebhookSignature(SECRET, headers, body, { nowSec: 1700000010 })).toBe(true);
  });

  it('rejects a tampered body', () => {
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': signWebhook(SECRET, 'msg_1', 1700000000, '{"a":1}') };
    expect(verifyWebhookSignature(SECRET, headers, '{"a":2}', { nowSec: 1700000000 })).toBe(false);
  });

  it('rejects a signature made with another secret', () => {
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': signWebhook('other', 'msg_1', 1700000000, 'x') };
    expect(verifyWebhookSignature(SECRET, headers, 'x', { nowSec: 1700000000 })).toBe(false);
  });

  it('rejects a timestamp outside the tolerance', () => {
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': signWebhook(SECRET, 'msg_1', 1700000000, 'x') };
    expect(verifyWebhookSignature(SECRET, headers, 'x', { nowSec: 1700000000 + 301 })).toBe(false);
  });

  it('accepts any matching entry of a space-separated signature list', () => {
    const good = signWebhook(SECRET, 'msg_1', 1700000000, 'x');
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1700000000', 'webhook-signature': `v1,AAAA ${good}` };
    expect(verifyWebhookSignature(SECRET, headers, 'x', { nowSec: 1700000000 })).toBe(true);
  });

  it('matches the Standard Webhooks reference vector', () => {
    // Test vector from the Standard Webhooks specification's reference libraries.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    expect(signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('deliverWebhook', () => {
  let receiver: Receiver;
  afterEach(async () => receiver.stop());

  it('POSTs the payload as JSON with the Standard Webhooks headers and a valid signature', async () => {
    receiver = new Receiver();
    const url = await receiver.start();
    const job = hookJob(url);
    await deliverWebhook(job, { secret: SECRET, timeoutMs: 5000, allow: LOOPBACK });
    const got = receiver.received[0]!;
    expect(got.body).toBe(job.payloadJson);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe(job.deliveryId);
    expect(verifyWebhookSignature(SECRET, got.headers, got.body)).toBe(true);
  });

  it('sends no signature header when no secret is configured', async () => {
    receiver = new Receiver();
    const url = await receiver.start();
    await deliverWebhook(hookJob(url), { timeoutMs: 5000, allow: LOOPBACK });
    expect(receiver.received[0]!.headers['webhook-signature']).toBeUndefined();
  });

  it('throws a retryable error on a 500', async () => {
    receiver = new Receiver([500]);
    const url = await receiver.start();
    const err = await deliverWebhook(hookJob(url), { timeoutMs: 5000, allow: LOOPBACK }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(UnrecoverableJobError);
  });

  it('throws UnrecoverableJobError on a 400', async () => {
    receiver = new Receiver([400]);
    const url = await receiver.start();
    await expect(deliverWebhook(hookJob(url), { timeoutMs: 5000, allow: LOOPBACK })).rejects.toBeInstanceOf(UnrecoverableJobError);
  });

  it('treats 429 as retryable', async () => {
    receiver = new Receiver([429]);
    const url = await receiver.start();
    const err = await deliverWebhook(hookJob(url), { timeoutMs: 5000, allow: LOOPBACK }).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(UnrecoverableJobError);
  });
});

describe('startWebhookWorker', () => {
  let receiver: Receiver;
  let queue: MemoryQueue;
  beforeEach(() => {
    queue = new MemoryQueue('webhooks');
  });
  afterEach(async () => {
    await queue.close();
    await receiver.stop();
  });

  it('retries after a 500, then delivers exactly once per delivery id with a stable webhook-id', async () => {
    receiver = new Receiver([500]);
    const url = await receiver.start();
    const worker = await startWebhookWorker({ webhooks: queue, logger: silentLogger(), config: { WEBHOOK_SECRET: SECRET, WEBHOOK_TIMEOUT_MS: 5000, WEBHOOK_ALLOW: LOOPBACK } });
    const job = hookJob(url);
    await queue.enqueue(toBinary(WebhookJobSchema, job), { jobId: job.deliveryId, attempts: 3, backoffMs: 10 });
    // The orchestrator enqueueing the same delivery again (a retried run) is a no-op.
    const again = await queue.enqueue(toBinary(WebhookJobSchema, job), { jobId: job.deliveryId, attempts: 3, backoffMs: 10 });
    await receiver.waitFor(2);
    await waitForState(queue, job.deliveryId, 'completed');
    await worker.close();
    expect(again.added).toBe(false);
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([job.deliveryId, job.deliveryId]);
    expect(receiver.received.every((r) => verifyWebhookSignature(SECRET, r.headers, r.body))).toBe(true);
  });

  it('does not retry a delivery the receiver rejected with 400', async () => {
    receiver = new Receiver([400]);
    const url = await receiver.start();
    const worker = await startWebhookWorker({ webhooks: queue, logger: silentLogger(), config: { WEBHOOK_SECRET: undefined, WEBHOOK_TIMEOUT_MS: 5000, WEBHOOK_ALLOW: LOOPBACK } });
    const job = hookJob(url);
    await queue.enqueue(toBinary(WebhookJobSchema, job), { jobId: job.deliveryId, attempts: 5, backoffMs: 10 });
    await waitForState(queue, job.deliveryId, 'failed');
    await worker.close();
    expect(receiver.received).toHaveLength(1);
  });
});

/** Polls the queue until the job reaches `state` (the queue has no completion callback). */
async function waitForState(queue: MemoryQueue, jobId: string, state: string): Promise<void> {
  for (;;) {
    if ((await queue.getState(jobId)) === state) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('webhook SSRF guard', () => {
  let receiver: Receiver;
  afterEach(async () => receiver?.stop());

  const refused = async (url: string, opts: Parameters<typeof deliverWebhook>[1] = { timeoutMs: 2000 }) => {
    const err = await deliverWebhook(hookJob(url), opts).catch((e: unknown) => e);
    expect(err, url).toBeInstanceOf(UnrecoverableJobError);
    return (err as Error).message;
  };

  it.each([
    ['http://127.0.0.1:9/hook', 'loopback'],
    ['http://localhost:9/hook', 'loopback'],
    ['http://[::1]:9/hook', 'loopback'],
    ['http://[::ffff:127.0.0.1]:9/hook', 'loopback'],
    ['http://169.254.169.254/latest/meta-data/', 'link-local / cloud metadata'],
    ['http://2130706433:9/hook', 'loopback'],
    ['http://0177.0.0.1:9/hook', 'loopback'],
    ['http://10.0.0.5/hook', 'private'],
    ['http://[fd00::1]/hook', 'unique local'],
  ])('refuses %s without sending anything (not retried)', async (url, label) => {
    expect(await refused(url)).toContain(label);
  });

  it('refuses a host name that resolves to an internal address, and credentials in the URL', async () => {
    const lookup = async () => [{ address: '192.168.1.20', family: 4 }];
    expect(await refused('https://hooks.example.com/x', { timeoutMs: 2000, lookup })).toContain('hooks.example.com resolves to 192.168.1.20');
    expect(await refused('https://user:pw@hooks.example.com/x', { timeoutMs: 2000, lookup })).toContain('credentials in the URL');
    expect(await refused('ftp://hooks.example.com/x')).toContain('only http and https');
  });

  it('connects to the address it vetted: a rebinding resolver cannot redirect the delivery', async () => {
    receiver = new Receiver();
    const url = new URL(await receiver.start());
    let calls = 0;
    // First answer: the allowed receiver; any later answer: somewhere internal and not allowed.
    const lookup = async () => (calls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '10.9.9.9', family: 4 }]);
    const allow = parseAllowList(`rebind.test:${url.port}`);
    await deliverWebhook(hookJob(`http://rebind.test:${url.port}/hook`), { timeoutMs: 5000, allow, lookup });
    expect(calls).toBe(1);
    expect(receiver.received).toHaveLength(1);
  });

  it('does not follow a redirect (to an internal address or anywhere)', async () => {
    receiver = new Receiver([302]);
    const url = await receiver.start();
    const err = await deliverWebhook(hookJob(url), { timeoutMs: 5000, allow: LOOPBACK }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnrecoverableJobError);
    expect((err as Error).message).toContain('redirects are not followed');
    expect(receiver.received).toHaveLength(1);
  });

  it('an allow entry with a port only opens that port', async () => {
    receiver = new Receiver();
    const url = new URL(await receiver.start());
    await deliverWebhook(hookJob(url.href), { timeoutMs: 5000, allow: parseAllowList(`127.0.0.1:${url.port}`) });
    expect(receiver.received).toHaveLength(1);
    expect(await refused(`http://127.0.0.1:${Number(url.port) === 65535 ? 1 : Number(url.port) + 1}/hook`, { timeoutMs: 2000, allow: parseAllowList(`127.0.0.1:${url.port}`) })).toContain('loopback');
  });
});

describe('webhook URLs at submission', () => {
  it('refuses internal IP literals and bad schemes with 422 naming body.webhook; host names are checked at delivery', async () => {
    const { startTestGateway } = await import('./testing/index.js');
    const gw = await startTestGateway({ orchestrator: false });
    try {
      const thread = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json() as { thread_id: string };
      const submit = (webhook: string) =>
        gw.app.inject({ method: 'POST', url: `/threads/${thread.thread_id}/runs`, payload: { assistant_id: 'agent', input: { messages: [] }, webhook, multitask_strategy: 'enqueue' } });
      const meta = await submit('http://169.254.169.254/latest/meta-data/');
      expect(meta.statusCode).toBe(422);
      expect((meta.json() as { errors: { path: string; message: string }[] }).errors[0]).toMatchObject({ path: 'body.webhook', message: expect.stringContaining('link-local / cloud metadata') });
      expect((await submit('http://[::1]:8080/x')).statusCode).toBe(422);
      expect((await submit('https://hooks.example.com/agentloop')).statusCode).toBe(200);
    } finally {
      await gw.close();
    }
  });
});
