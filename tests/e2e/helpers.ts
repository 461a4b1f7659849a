import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
}

/** A webhook receiver on 127.0.0.1 that records every POST; `failFirst` answers 500 to the first N. */
export async function startWebhookReceiver(opts: { failFirst?: number } = {}) {
  const deliveries: Delivery[] = [];
  let failures = opts.failFirst ?? 0;
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (failures > 0) {
        failures--;
        res.writeHead(500).end('try again');
        return;
      }
      deliveries.push({ headers: req.headers, body, json: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(204).end();
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    deliveries,
    /** Resolves once at least n deliveries arrived (rejects after timeoutMs). */
    async waitFor(n: number, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (deliveries.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} webhook deliveries, got ${deliveries.length}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
    async close() {
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** The scripted conversation of the end-to-end tests: write outputs/hello.txt, read it back, answer. */
export const HELLO_TURNS = [
  { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/hello.txt', content: 'hello from the e2e test' } }] },
  { tool_calls: [{ name: 'read_file', args: { file_path: 'outputs/hello.txt' } }] },
  { content: 'The file says: hello from the e2e test' },
];

export const scripted = (turns: unknown[]) => ({ configurable: { model: { provider: 'scripted', turns } } });

export async function poll<T>(fn: () => Promise<T | undefined>, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out waiting for condition');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
