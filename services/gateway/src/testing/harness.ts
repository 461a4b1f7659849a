import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import { MemoryRunEventStream, type RunEventStream } from '@agentloop/bus';
import { MemoryQueue, SqliteQueueDatabase, SqliteScheduler, type CronScheduler, type JobQueue } from '@agentloop/queue';
import { createSqliteStore, type Store } from '@agentloop/store';
import { silentLogger, type Logger } from '@agentloop/core';
import { createTempDir } from '@agentloop/workspace';
import { createGatewayApp } from '../app.js';
import type { ThreadCheckpoints } from '../checkpoints.js';
import { loadGatewayConfig, type GatewayConfig } from '../config.js';
import { startFakeOrchestrator, type FakeOrchestrator, type FakeOrchestratorOptions } from './fake-orchestrator.js';

export interface TestGatewayOptions {
  /** Gateway environment (defaults apply to everything not given). */
  env?: NodeJS.ProcessEnv;
  /** Options for the fake orchestrator, or false to run without one. */
  orchestrator?: Omit<FakeOrchestratorOptions, 'runs' | 'store' | 'events'> | false;
  logger?: Logger;
  /** The run event stream to use (default: a new MemoryRunEventStream). */
  events?: RunEventStream;
  /** Redis for shared rate-limit counters. */
  rateLimitRedis?: Redis;
  /** The store, runs queue and webhooks queue to use (default: new ones), e.g. a second gateway replica over the first one's; they are not closed with this gateway. */
  shared?: { store: Store; runs: JobQueue; webhooks: JobQueue };
  /** The thread checkpoints (history, state updates, copy), e.g. over a MemorySaver; absent: none. */
  checkpoints?: ThreadCheckpoints;
  /** The crons' scheduler (default: a SQLite scheduler in memory, polled every 100 ms); not closed with this gateway when given. */
  scheduler?: CronScheduler;
}

export interface TestGateway extends AsyncDisposable {
  app: FastifyInstance;
  store: Store;
  runs: JobQueue;
  webhooks: JobQueue;
  events: RunEventStream;
  config: GatewayConfig;
  orchestrator: FakeOrchestrator | undefined;
  close(): Promise<void>;
}

/**
 * A gateway on the embedded adapters (SQLite in memory, in-memory queues and
 * event stream) with the fake orchestrator consuming its runs. Not listening:
 * use `app.inject`, or `app.listen({ port: 0 })` for a real client.
 */
export async function startTestGateway(opts: TestGatewayOptions = {}): Promise<TestGateway> {
  const logger = opts.logger ?? silentLogger();
  // Workspaces (uploads) go to a temporary folder unless the test names one.
  const tmp = opts.env?.WORKSPACE_ROOT === undefined ? await createTempDir('agentloop-gateway-') : undefined;
  const config = loadGatewayConfig({ ...(tmp ? { WORKSPACE_ROOT: tmp.path } : {}), ...opts.env });
  const owned = opts.shared === undefined;
  const store = opts.shared?.store ?? createSqliteStore({ path: ':memory:' });
  if (owned) await store.migrate();
  const runs = opts.shared?.runs ?? new MemoryQueue('runs');
  const webhooks = opts.shared?.webhooks ?? new MemoryQueue('webhooks');
  const events = opts.events ?? new MemoryRunEventStream();
  const orchestrator = opts.orchestrator === false ? undefined : await startFakeOrchestrator({ runs, store, events, webhooks, ...(opts.orchestrator ?? {}) });
  const schedulerDb = opts.scheduler ? undefined : new SqliteQueueDatabase({ path: ':memory:' });
  const scheduler = opts.scheduler ?? new SqliteScheduler('crons', { database: schedulerDb!, pollMs: 100 });
  const app = await createGatewayApp({
    store,
    runs,
    events,
    logger,
    config,
    scheduler,
    ...(opts.rateLimitRedis ? { rateLimitRedis: opts.rateLimitRedis } : {}),
    ...(opts.checkpoints ? { checkpoints: opts.checkpoints } : {}),
  });
  await app.ready();
  const close = async () => {
    await app.close();
    await orchestrator?.close();
    if (schedulerDb) await scheduler.close().then(() => schedulerDb.close());
    if (!owned) return void (await tmp?.[Symbol.asyncDispose]());
    await Promise.allSettled([runs.close(), webhooks.close(), events.close()]);
    await store.close();
    await tmp?.[Symbol.asyncDispose]();
  };
  return { app, store, runs, webhooks, events, config, orchestrator, close, [Symbol.asyncDispose]: close };
}
