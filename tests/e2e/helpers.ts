import { afterAll, beforeAll } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, startMariaDb, startNats, startRedis, type DevServer } from '@agentloop/devservers';
import { startEmbedded, startService, type EmbeddedServer, type ServiceName, type ServiceProcess } from '@agentloop/agentloop-app';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

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

// ---------------------------------------------------------------------------
// Cluster harness: real nats-server / redis-server / mariadbd and each service as its own process.

export interface ClusterHarness {
  nats: DevServer;
  redis: DevServer;
  mysql: DevServer;
  /** The environment every service gets (extraEnv of `start` is added on top). */
  env: NodeJS.ProcessEnv;
  /** Gateway base URL, e.g. http://127.0.0.1:41234. */
  url: string;
  /** Gateway gRPC address, e.g. 127.0.0.1:41235. */
  grpcAddress: string;
  workspaceRoot: string;
  /** Every output line of every service, prefixed `[name#instance] `. */
  logs: string[];
  /** Live and exited processes by `name#instance`. */
  procs: Map<string, ServiceProcess>;
  /** Starts one more service process (not waiting for it). */
  start(name: ServiceName, instance: number, extraEnv?: NodeJS.ProcessEnv): ServiceProcess;
  /** Starts an orchestrator and waits until its worker takes jobs. */
  startOrchestrator(instance: number, extraEnv?: NodeJS.ProcessEnv): Promise<ServiceProcess>;
  /** Resolves once a log line after index `from` matches re. */
  waitLog(re: RegExp, from?: number, timeoutMs?: number): Promise<string>;
  /** Log lines of one process (`name#instance`). */
  linesOf(key: string): string[];
  /** SIGTERMs every process, stops the servers, removes the workspaces. (tool-runner, approval, orchestrators and gateway are started.) */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Added to the default service environment (LOG_LEVEL info, scripted model allowed...). */
  env?: NodeJS.ProcessEnv;
  /** Orchestrator instances started at boot (default 1). */
  orchestrators?: number;
  /** Added to one process's environment, e.g. its own Prometheus port (tests/e2e/observability-cluster.test.ts). */
  serviceEnv?: (name: ServiceName, instance: number) => NodeJS.ProcessEnv;
}

/**
 * Boots the servers and tool-runner #1, orchestrator #1..n and gateway #1, and
 * resolves once the gateway answers /ok and every orchestrator and the
 * tool-runner have logged that they serve.
 */
export async function startCluster(opts: ClusterOptions = {}): Promise<ClusterHarness> {
  const [nats, redis, mysql] = await Promise.all([startNats({ jetstream: true }), startRedis(), startMariaDb()]);
  const workspaceRoot = mkdtempSync(path.join(tmpdir(), 'agentloop-e2e-ws-'));
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NATS_URL: nats.url,
    REDIS_URL: redis.url,
    MYSQL_URL: mysql.url,
    WORKSPACE_ROOT: workspaceRoot,
    PORT: String(port),
    GRPC_PORT: String(await freePort()),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ALLOW_SCRIPTED_MODEL: 'true',
    // The tests' webhook receivers listen on loopback: allowed explicitly, as an operator would.
    WEBHOOK_ALLOW: '127.0.0.1',
    ...opts.env,
  };
  const logs: string[] = [];
  const procs = new Map<string, ServiceProcess>();
  const waitLog = (re: RegExp, from = 0, timeoutMs = 60_000) => poll(async () => logs.slice(from).find((l) => re.test(l)), timeoutMs, 100);
  const start = (name: ServiceName, instance: number, extraEnv: NodeJS.ProcessEnv = {}) => {
    const key = `${name}#${instance}`;
    const p = startService(name, {
      env: { ...env, ...opts.serviceEnv?.(name, instance), ...extraEnv },
      instance,
      fromSource: true,
      onLine: (l) => logs.push(`[${key}] ${l}`),
    });
    procs.set(key, p);
    return p;
  };
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const startOrchestrator = async (instance: number, extraEnv: NodeJS.ProcessEnv = {}) => {
    const from = logs.length;
    const p = start('orchestrator', instance, extraEnv);
    await waitLog(new RegExp(`^${escape(`[orchestrator#${instance}]`)}.*orchestrator started`), from, 90_000);
    return p;
  };
  const harness: ClusterHarness = {
    nats,
    redis,
    mysql,
    env,
    url: `http://127.0.0.1:${port}`,
    grpcAddress: `127.0.0.1:${env.GRPC_PORT}`,
    workspaceRoot,
    logs,
    procs,
    start,
    startOrchestrator,
    waitLog,
    linesOf: (key) => logs.filter((l) => l.startsWith(`[${key}] `)),
    async stop() {
      await Promise.all([...procs.values()].map((p) => p.kill('SIGTERM')));
      // E2E_LOG_DIR=/some/dir keeps every service's output for a post-mortem.
      if (process.env.E2E_LOG_DIR) writeFileSync(path.join(process.env.E2E_LOG_DIR, `cluster-${port}.log`), logs.join('\n'));
      await Promise.all([nats, redis, mysql].map((s) => s.stop()));
      rmSync(workspaceRoot, { recursive: true, force: true });
    },
  };
  try {
    start('tool-runner', 1);
    start('approval', 1);
    const orchestrators = Array.from({ length: opts.orchestrators ?? 1 }, (_, i) => startOrchestrator(i + 1));
    start('gateway', 1);
    await poll(async () => ((await fetch(`${harness.url}/ok`).catch(() => undefined))?.ok ? true : undefined), 90_000);
    await Promise.all(orchestrators);
    await waitLog(/tool-runner serving/, 0, 90_000);
    await waitLog(/approval serving/, 0, 90_000);
  } catch (err) {
    await harness.stop().catch(() => undefined);
    throw err;
  }
  return harness;
}

/** Calls fn until it resolves (transient failures while a server restarts), up to timeoutMs. */
export async function retrying<T>(fn: () => Promise<T>, timeoutMs = 30_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}

/**
 * Registers beforeAll/afterAll that start a cluster (`startCluster(opts)`) and stop it; the
 * returned function gives the running cluster inside a test.
 */
export function useCluster(opts: ClusterOptions = {}): () => ClusterHarness {
  let cluster: ClusterHarness | undefined;
  beforeAll(async () => {
    cluster = await startCluster(opts);
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
  });
  return () => {
    if (!cluster) throw new Error('the cluster is not started (use it inside a test)');
    return cluster;
  };
}

/** An embedded server of a `describe` block: started in beforeAll on a fresh DATA_DIR, closed and removed in afterAll. */
export interface EmbeddedFixture {
  readonly url: string;
  readonly dataDir: string;
  readonly server: EmbeddedServer;
}

/**
 * Registers beforeAll/afterAll that start AgentLoop embedded (LOG_LEVEL warn, a temporary
 * DATA_DIR named after `prefix`, `env` added) and stop it; the fixture's getters read it once started.
 */
export function useEmbeddedServer(prefix: string, env: NodeJS.ProcessEnv = {}): EmbeddedFixture {
  let server: EmbeddedServer | undefined;
  let dataDir: string | undefined;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), prefix));
    server = await startEmbedded({ env: { DATA_DIR: dataDir, LOG_LEVEL: 'warn', EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, ...env }, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('the embedded server is not started (use it inside a test)');
    return v;
  };
  return {
    get url() {
      return started(server).url;
    },
    get dataDir() {
      return started(dataDir);
    },
    get server() {
      return started(server);
    },
  };
}
