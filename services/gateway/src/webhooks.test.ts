import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { create, toBinary, WebhookJobSchema, RunStatus } from '@agentloop/proto';
import { MemoryQueue, UnrecoverableJobError } from '@agentloop/queue';
import { ConfigError, createLogger, silentLogger } from '@agentloop/core';
import { parseAllowList, type HostLookup } from '@agentloop/net';
import type { WebhookAttempt } from '@agentloop/store';
import { loadGatewayConfig } from './config.js';
import { deliverWebhook, signWebhook, startWebhookWorker, verifyWebhookSignature, WebhookDeliveryError, WebhookRefusedError } from './webhooks.js';

/** The test receivers listen on 127.0.0.1: allowed explicitly, as an operator would. */
const LOOPBACK = parseAllowList('127.0.0.1');

const SECRET = 'whsec_' + Buffer.from('a-very-secret-key-of-32-bytes!!!').toString('base64');

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A scripted answer: a status, or a redirect to `location`. */
type Answer = number | { status: number; location: string };

/** A real HTTP receiver answering with the scripted answers, then 200. */
class Receiver {
  readonly received: Received[] = [];
  private server: Server | undefined;
  private waiters: { count: number; resolve: () => void }[] = [];
  constructor(private readonly answers: Answer[] = []) {}

  /** Listens on `host` (default 127.0.0.1), on `port` (default: any free one); returns its /hook URL. */
  async start(host = '127.0.0.1', port = 0): Promise<string> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body });
        const answer = this.answers.shift() ?? 200;
        if (typeof answer === 'number') res.statusCode = answer;
        else res.writeHead(answer.status, { location: answer.location });
        res.end('ok');
        this.waiters = this.waiters.filter((w) => (this.received.length >= w.count ? (w.resolve(), false) : true));
      });
    });
    await new Promise<void>((r) => this.server!.listen(port, host, r));
    return `http://${host}:${(this.server!.address() as AddressInfo).port}/hook`;
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
    const worker = await startWebhookWorker({
      webhooks: queue,
      logger: silentLogger(),
      config: { WEBHOOK_SECRET: SECRET, WEBHOOK_TIMEOUT_MS: 5000, WEBHOOK_ALLOW: LOOPBACK },
    });
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
    const worker = await startWebhookWorker({
      webhooks: queue,
      logger: silentLogger(),
      config: { WEBHOOK_SECRET: undefined, WEBHOOK_TIMEOUT_MS: 5000, WEBHOOK_ALLOW: LOOPBACK },
    });
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
  const receivers: Receiver[] = [];
  /** Starts a receiver on loopback; its URL's port is where an unguarded delivery would land. */
  const listen = async (answers: Answer[] = [], host?: string, port?: number) => {
    const r = new Receiver(answers);
    receivers.push(r);
    return { receiver: r, url: new URL(await r.start(host, port)) };
  };
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.stop()));
  });

  const refusal = async (url: string, opts: Parameters<typeof deliverWebhook>[1] = { timeoutMs: 2000 }) => {
    const err = await deliverWebhook(hookJob(url), opts).catch((e: unknown) => e);
    expect(err, url).toBeInstanceOf(WebhookRefusedError);
    // Final: the queue must not retry it.
    expect(err, url).toBeInstanceOf(UnrecoverableJobError);
    return (err as Error).message;
  };

  it.each([
    ['127.0.0.1', (p: number) => `http://127.0.0.1:${p}/hook`, 'loopback (127.0.0.0/8)'],
    ['localhost', (p: number) => `http://localhost:${p}/hook`, 'loopback'],
    ['LOCALHOST. (upper case, trailing dot)', (p: number) => `http://LOCALHOST.:${p}/hook`, 'loopback'],
    ['a .localhost name', (p: number) => `http://hooks.localhost:${p}/hook`, 'loopback'],
    ['[::1]', (p: number) => `http://[::1]:${p}/hook`, 'loopback (::1)'],
    ['[::ffff:127.0.0.1]', (p: number) => `http://[::ffff:127.0.0.1]:${p}/hook`, 'IPv4-mapped form of 127.0.0.1: loopback'],
    ['[::ffff:7f00:1]', (p: number) => `http://[::ffff:7f00:1]:${p}/hook`, 'IPv4-mapped form of 127.0.0.1: loopback'],
    ['decimal 2130706433', (p: number) => `http://2130706433:${p}/hook`, 'loopback (127.0.0.0/8)'],
    ['octal 0177.0.0.1', (p: number) => `http://0177.0.0.1:${p}/hook`, 'loopback (127.0.0.0/8)'],
    ['hex 0x7f000001', (p: number) => `http://0x7f000001:${p}/hook`, 'loopback (127.0.0.0/8)'],
    ['short 127.1', (p: number) => `http://127.1:${p}/hook`, 'loopback (127.0.0.0/8)'],
    ['0.0.0.0', (p: number) => `http://0.0.0.0:${p}/hook`, '"this network"'],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data/', 'link-local / cloud metadata (169.254.0.0/16)'],
    ['[::ffff:169.254.169.254]', () => 'http://[::ffff:169.254.169.254]/latest/meta-data/', 'link-local / cloud metadata'],
    ['[fd00:ec2::254] (IPv6 metadata)', () => 'http://[fd00:ec2::254]/latest/meta-data/', 'unique local (fc00::/7)'],
    ['10.0.0.5', () => 'http://10.0.0.5/hook', 'private (10.0.0.0/8)'],
    ['192.168.1.1', () => 'http://192.168.1.1/hook', 'private (192.168.0.0/16)'],
    ['100.64.0.1', () => 'http://100.64.0.1/hook', 'carrier-grade NAT'],
    ['[fe80::1]', () => 'http://[fe80::1]/hook', 'link-local (fe80::/10)'],
  ])('refuses %s, says why and sends nothing (not retried)', async (_name, url, label) => {
    const { receiver, url: live } = await listen();
    const message = await refusal(url(Number(live.port)));
    expect(message).toMatch(/^Refused to deliver a webhook to http:\/\/\S+: .* is an internal address \(/);
    expect(message).toContain(label);
    expect(message).toContain('WEBHOOK_ALLOW');
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses a host name that resolves to an internal address, before connecting', async () => {
    const { receiver, url } = await listen();
    const lookup: HostLookup = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
    const message = await refusal(`http://hooks.example.com:${url.port}/hook`, { timeoutMs: 2000, lookup });
    expect(message).toBe(
      `Refused to deliver a webhook to http://hooks.example.com:${url.port}/hook: hooks.example.com resolves to 127.0.0.1, which is an internal address (loopback (127.0.0.0/8)). Webhooks reach public addresses only; an operator can allow more with WEBHOOK_ALLOW.`,
    );
    expect(receiver.received).toHaveLength(0);
  });

  it('refuses a host name with one private address among public ones', async () => {
    const lookup: HostLookup = () =>
      Promise.resolve([
        { address: '93.184.216.34', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ]);
    expect(await refusal('https://mixed.example/hook', { timeoutMs: 2000, lookup })).toContain('mixed.example resolves to 10.1.2.3');
  });

  it('refuses credentials in the URL and schemes other than http(s)', async () => {
    const lookup: HostLookup = () => Promise.resolve([{ address: '93.184.216.34', family: 4 }]);
    expect(await refusal('https://user:pw@hooks.example.com/x', { timeoutMs: 2000, lookup })).toContain('credentials in the URL');
    expect(await refusal('ftp://hooks.example.com/x', { timeoutMs: 2000, lookup })).toContain('only http and https');
    expect(await refusal('file:///etc/passwd')).toContain('only http and https');
  });

  it('retries a host name that does not resolve (DNS may answer later)', async () => {
    const lookup: HostLookup = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }));
    const err = await deliverWebhook(hookJob('https://nowhere.invalid/hook'), { timeoutMs: 2000, lookup }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookDeliveryError);
    expect((err as Error).message).toBe('Could not resolve host nowhere.invalid (ENOTFOUND)');
  });

  it('connects to the vetted address: a rebinding answer (allowed first, internal next) never gets the delivery', async () => {
    // Two receivers on the same port: the allowed one on 127.0.0.1, the "internal" one on 127.0.0.2.
    const { receiver: vetted, url } = await listen();
    const { receiver: internal } = await listen([], '127.0.0.2', Number(url.port));
    let calls = 0;
    const lookup: HostLookup = () => Promise.resolve([{ address: calls++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }]);
    await deliverWebhook(hookJob(`http://rebind.test:${url.port}/hook`), { timeoutMs: 5000, allow: parseAllowList(`127.0.0.1:${url.port}`), lookup });
    expect(calls).toBe(1);
    expect(vetted.received).toHaveLength(1);
    expect(vetted.received[0]!.headers.host).toBe(`rebind.test:${url.port}`);
    expect(internal.received).toHaveLength(0);
    // Had the name been resolved again at connect time, this is where the delivery would have gone:
    const second = await lookup('rebind.test');
    expect(second[0]!.address).toBe('127.0.0.2');
    expect(await refusal(`http://127.0.0.2:${url.port}/hook`, { timeoutMs: 2000, allow: parseAllowList(`127.0.0.1:${url.port}`) })).toContain('loopback');
  });

  it.each([301, 302, 303, 307, 308])('does not follow a %i redirect to an internal address; the failure is final', async (status) => {
    const { receiver: internal, url: internalUrl } = await listen();
    const { receiver, url } = await listen([{ status, location: internalUrl.href }]);
    // Only the receiver's own port is allowed; the redirect target is another loopback port.
    const err = await deliverWebhook(hookJob(url.href), { timeoutMs: 5000, allow: parseAllowList(`127.0.0.1:${url.port}`) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnrecoverableJobError);
    expect((err as Error).message).toContain(`answered HTTP ${status}; redirects are not followed`);
    expect(receiver.received).toHaveLength(1);
    expect(internal.received).toHaveLength(0);
  });

  it('does not follow a redirect even to an allowed address', async () => {
    const { receiver: target, url: targetUrl } = await listen();
    const { receiver, url } = await listen([{ status: 307, location: targetUrl.href }]);
    const err = await deliverWebhook(hookJob(url.href), { timeoutMs: 5000, allow: LOOPBACK }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnrecoverableJobError);
    expect(receiver.received).toHaveLength(1);
    expect(target.received).toHaveLength(0);
  });

  it('an allow entry with a port only opens that port', async () => {
    const { receiver, url } = await listen();
    const { receiver: other, url: otherUrl } = await listen();
    const allow = parseAllowList(`127.0.0.1:${url.port}`);
    await deliverWebhook(hookJob(url.href), { timeoutMs: 5000, allow });
    expect(receiver.received).toHaveLength(1);
    expect(await refusal(otherUrl.href, { timeoutMs: 2000, allow })).toContain('loopback');
    expect(other.received).toHaveLength(0);
  });

  it('an allowed host name lets its delivery through to loopback', async () => {
    const { receiver, url } = await listen();
    await deliverWebhook(hookJob(`http://localhost:${url.port}/hook`), { timeoutMs: 5000, allow: parseAllowList('localhost') });
    expect(receiver.received).toHaveLength(1);
  });
});

describe('WEBHOOK_ALLOW', () => {
  it('is parsed by the gateway config and lets the worker deliver to a local receiver', async () => {
    const receiver = new Receiver();
    const url = new URL(await receiver.start());
    const queue = new MemoryQueue('webhooks');
    const config = loadGatewayConfig({ WEBHOOK_ALLOW: `127.0.0.1:${url.port}` });
    const worker = await startWebhookWorker({ webhooks: queue, logger: silentLogger(), config });
    try {
      const job = hookJob(url.href);
      await queue.enqueue(toBinary(WebhookJobSchema, job), { jobId: job.deliveryId, attempts: 1, backoffMs: 10 });
      await waitForState(queue, job.deliveryId, 'completed');
      expect(receiver.received).toHaveLength(1);
    } finally {
      await worker.close();
      await queue.close();
      await receiver.stop();
    }
  });

  it('defaults to no exception at all', () => {
    expect(loadGatewayConfig({}).WEBHOOK_ALLOW).toEqual([]);
  });

  it('stops the gateway with a ConfigError naming WEBHOOK_ALLOW for an invalid entry', () => {
    expect(() => loadGatewayConfig({ WEBHOOK_ALLOW: '127.0.0.1:http' })).toThrow(ConfigError);
    expect(() => loadGatewayConfig({ WEBHOOK_ALLOW: '10.0.0.0/33' })).toThrow(/WEBHOOK_ALLOW entry "10\.0\.0\.0\/33"/);
  });
});

describe('webhook worker and the SSRF guard', () => {
  it('fails a refused delivery at once, records it as refused and logs the reason', async () => {
    const receiver = new Receiver();
    const url = new URL(await receiver.start());
    const queue = new MemoryQueue('webhooks');
    const lines: string[] = [];
    const logger = createLogger({ service: 'gateway', level: 'info', destination: { write: (l: string) => void lines.push(l) } });
    const attempts: WebhookAttempt[] = [];
    const store = { recordWebhookAttempt: (a: WebhookAttempt) => Promise.resolve(void attempts.push(a)) };
    // No WEBHOOK_ALLOW: the loopback receiver is internal.
    const worker = await startWebhookWorker({ webhooks: queue, logger, store, config: { WEBHOOK_SECRET: SECRET, WEBHOOK_TIMEOUT_MS: 5000 } });
    try {
      const job = hookJob(url.href);
      await queue.enqueue(toBinary(WebhookJobSchema, job), { jobId: job.deliveryId, attempts: 5, backoffMs: 10 });
      await waitForState(queue, job.deliveryId, 'failed');
      expect(receiver.received).toHaveLength(0);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({
        attempt: 1,
        outcome: 'refused',
        statusCode: null,
        error: expect.stringContaining('127.0.0.1 is an internal address (loopback'),
      });
      const logged = lines
        .map((l) => JSON.parse(l) as { msg: string; err?: string; delivery_id?: string })
        .find((l) => l.msg === 'webhook refused by the SSRF guard; not retried');
      expect(logged).toMatchObject({ delivery_id: job.deliveryId, err: expect.stringContaining('loopback (127.0.0.0/8)') });
    } finally {
      await worker.close();
      await queue.close();
      await receiver.stop();
    }
  });

  it('fails a redirected delivery at once and records the 3xx', async () => {
    const receiver = new Receiver([{ status: 302, location: 'http://169.254.169.254/latest/meta-data/' }]);
    const url = new URL(await receiver.start());
    const queue = new MemoryQueue('webhooks');
    const attempts: WebhookAttempt[] = [];
    const store = { recordWebhookAttempt: (a: WebhookAttempt) => Promise.resolve(void attempts.push(a)) };
    const worker = await startWebhookWorker({
      webhooks: queue,
      logger: silentLogger(),
      store,
      config: { WEBHOOK_SECRET: undefined, WEBHOOK_TIMEOUT_MS: 5000, WEBHOOK_ALLOW: LOOPBACK },
    });
    try {
      const job = hookJob(url.href);
      await queue.enqueue(toBinary(WebhookJobSchema, job), { jobId: job.deliveryId, attempts: 5, backoffMs: 10 });
      await waitForState(queue, job.deliveryId, 'failed');
      expect(receiver.received).toHaveLength(1);
      expect(attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: 'failed', statusCode: 302 })]);
    } finally {
      await worker.close();
      await queue.close();
      await receiver.stop();
    }
  });
});

describe('webhook URLs at submission', () => {
  it('refuses internal IP literals, credentials and bad schemes with 422 naming body.webhook', async () => {
    const { startTestGateway } = await import('./testing/index.js');
    const gw = await startTestGateway({ orchestrator: false });
    try {
      const thread = (await gw.app.inject({ method: 'POST', url: '/threads', payload: {} })).json() as { thread_id: string };
      const submit = (webhook: string) =>
        gw.app.inject({
          method: 'POST',
          url: `/threads/${thread.thread_id}/runs`,
          payload: { assistant_id: 'agent', input: { messages: [] }, webhook, multitask_strategy: 'enqueue' },
        });
      const meta = await submit('http://169.254.169.254/latest/meta-data/');
      expect(meta.statusCode).toBe(422);
      expect((meta.json() as { errors: { path: string; message: string }[] }).errors[0]).toMatchObject({
        path: 'body.webhook',
        message: expect.stringContaining('link-local / cloud metadata'),
      });
      for (const bad of [
        'http://[::1]:8080/x',
        'http://127.0.0.1:9/hook',
        'http://2130706433/hook',
        'http://0177.0.0.1/hook',
        'http://[::ffff:127.0.0.1]/x',
        'http://localhost:9/x',
        'https://u:p@hooks.example.com/x',
        'ftp://hooks.example.com/x',
      ]) {
        const res = await submit(bad);
        expect(res.statusCode, bad).toBe(422);
        expect(
          (res.json() as { errors: { path: string }[] }).errors.map((e) => e.path),
          bad,
        ).toEqual(['body.webhook']);
      }
    } finally {
      await gw.close();
    }
  });

  it('accepts host names without resolving them (a name that does not resolve still submits)', async () => {
    const { startTestGateway } = await import('./testing/index.js');
    const gw = await startTestGateway({ orchestrator: false });
    try {
      const submit = (webhook: string) => gw.app.inject({ method: 'POST', url: '/runs', payload: { assistant_id: 'agent', input: { messages: [] }, webhook } });
      expect((await submit('https://hooks.example.com/agentloop')).statusCode).toBe(200);
      expect((await submit('https://does-not-exist.invalid/hook')).statusCode).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('accepts an internal literal that WEBHOOK_ALLOW covers', async () => {
    const { startTestGateway } = await import('./testing/index.js');
    const gw = await startTestGateway({ orchestrator: false, env: { WEBHOOK_ALLOW: '127.0.0.1:9999' } });
    try {
      const submit = (webhook: string) => gw.app.inject({ method: 'POST', url: '/runs', payload: { assistant_id: 'agent', input: { messages: [] }, webhook } });
      expect((await submit('http://127.0.0.1:9999/hook')).statusCode).toBe(200);
      expect((await submit('http://127.0.0.1:9998/hook')).statusCode).toBe(422);
    } finally {
      await gw.close();
    }
  });
});
