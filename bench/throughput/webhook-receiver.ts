/** A webhook receiver on 127.0.0.1 that timestamps the first delivery of each run. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WebhookReceiver {
  url: string;
  /** performance.now() of the first delivery per run_id. */
  arrivals: Map<string, number>;
  /** Run status per run_id as the first delivery reported it. */
  statuses: Map<string, string>;
  /** Deliveries of a run_id already seen (retries / duplicates). */
  duplicates(): number;
  /** Resolves once every id in `runIds` has arrived, or at `deadline` (performance.now()). */
  waitAll(runIds: Iterable<string>, deadline: number): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const arrivals = new Map<string, number>();
  const statuses = new Map<string, string>();
  let duplicates = 0;
  const listeners = new Set<(runId: string) => void>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(204).end();
      let body: { run_id?: unknown; status?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        return;
      }
      if (typeof body.run_id !== 'string') return;
      if (arrivals.has(body.run_id)) {
        duplicates++;
        return;
      }
      arrivals.set(body.run_id, at);
      statuses.set(body.run_id, String(body.status));
      for (const l of listeners) l(body.run_id);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    arrivals,
    statuses,
    duplicates: () => duplicates,
    async waitAll(runIds, deadline) {
      const pending = new Set<string>();
      for (const id of runIds) if (!arrivals.has(id)) pending.add(id);
      if (pending.size === 0) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          listeners.delete(listener);
          resolve();
        };
        const listener = (id: string) => {
          if (pending.delete(id) && pending.size === 0) done();
        };
        const timer = setTimeout(done, Math.max(0, deadline - performance.now()));
        listeners.add(listener);
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
