/**
 * Embedded mode: every service in one process, with the in-memory bus and
 * event stream behind the same interfaces as the cluster adapters, SQLite for
 * records, checkpoints and the job queues (so a restarted process takes up the
 * runs and webhook deliveries that were in flight), and the protobuf codec
 * still on every hop.
 */
import path from 'node:path';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createLogger, type Logger } from '@agentloop/core';
import { flushThreadTelemetryOnCollect, initTelemetry, logTelemetry, observePendingApprovals, observeQueues } from '@agentloop/telemetry';
import { MemoryBus, MemoryRunEventStream } from '@agentloop/bus';
import { SqliteQueueDatabase, SqliteScheduler, type JobQueue } from '@agentloop/queue';
import { createSqliteStore, WalCheckpointer } from '@agentloop/store';
import { DEFAULT_SKILLS_ROOT } from '@agentloop/skill-sandbox';
import { createThreadCheckpoints, sqliteCheckpointRewinder } from '@agentloop/orchestrator';
import { launcherDefaults } from './defaults.js';
import { openEmbeddedCheckpointer } from './sqlite-checkpointer.js';
import { startRunServices, type RunServices } from './run-services.js';
import { startOrchestratorPool, type OrchestratorPool } from './orchestrator-pool.js';
import { announcingQueue } from './queue-wake.js';
import { embeddedThreads } from './embedded-threads.js';
import { embeddedSqliteFiles, walCheckpointsInThread, writerAutocheckpointPages } from './wal-checkpoints.js';
import { createGatewayApp, gatewayPathRedactor, loadGatewayConfig, startGrpcServer, startWebhookWorker, withThreadResourceDeletion } from '@agentloop/gateway';

export interface EmbeddedOptions {
  /** Environment to read configuration from (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** Overrides PORT (0 picks a free port). */
  port?: number;
  logger?: Logger;
  /**
   * Called when an orchestrator thread (EMBEDDED_THREADS=orchestrator[:N]) fails, after the server
   * has closed what it could. Default: log it and exit the process with status 1 — a server that
   * accepts runs nobody executes must not keep running.
   */
  onFatal?: (err: Error) => void;
}

export interface EmbeddedServer {
  /** Base URL, e.g. http://127.0.0.1:2024 */
  url: string;
  /** Port of the gRPC API (undefined when GRPC_ENABLED=false). */
  grpcPort: number | undefined;
  port: number;
  /** The first orchestrator thread's id when the run-executing services run in worker threads (EMBEDDED_THREADS=orchestrator[:N]). */
  orchestratorThreadId: number | undefined;
  /** The ids of every orchestrator thread (empty in one-thread mode). */
  orchestratorThreadIds: number[];
  close(): Promise<void>;
}

export async function startEmbedded(opts: EmbeddedOptions = {}): Promise<EmbeddedServer> {
  const baseEnv = opts.env ?? process.env;
  const dataDir = path.resolve(baseEnv.DATA_DIR ?? './data');
  mkdirSync(dataDir, { recursive: true });
  // Embedded defaults: everything under DATA_DIR; without API keys the offline demo's scripted
  // model and loopback webhooks, with them per-tenant caps instead (defaults.ts).
  const env: NodeJS.ProcessEnv = {
    WORKSPACE_ROOT: path.join(dataDir, 'workspaces'),
    SQLITE_PATH: path.join(dataDir, 'agentloop.sqlite'),
    ...launcherDefaults(baseEnv, { loopbackWebhooks: true }),
    // The project's skills; the tool-runner and indexer read skills/<id> links into it.
    SKILLS_ROOT: DEFAULT_SKILLS_ROOT,
    // Record and replay (issue 17): a laptop records every run, so any run can be replayed.
    RECORD_RUNS: 'all',
    ...baseEnv,
    ...(opts.port !== undefined ? { PORT: String(opts.port), GRPC_PORT: baseEnv.GRPC_PORT ?? '0' } : {}),
  };
  // Transport URLs mean cluster mode; embedded ignores them on purpose.
  delete env.NATS_URL;
  delete env.REDIS_URL;
  delete env.MYSQL_URL;

  const gatewayConfig = loadGatewayConfig(env);
  const threads = embeddedThreads(env);
  // One logger per service so every line carries the service that wrote it.
  const loggerFor = (service: string): Logger =>
    opts.logger ? opts.logger.child({ component: service }) : createLogger({ service, level: gatewayConfig.LOG_LEVEL, ...logTelemetry });
  const logger = loggerFor('agentloop');
  logger.info({ data_dir: dataDir, mode: 'embedded', threads }, 'starting AgentLoop (embedded)');
  // One OpenTelemetry SDK for the whole process, per the OTEL_* environment (no-op when none is set).
  const telemetry = await initTelemetry({ serviceName: 'agentloop', env, logger });

  const bus = new MemoryBus();
  const events = new MemoryRunEventStream(gatewayConfig.RUN_EVENTS_MAX_BYTES ? { maxBytes: gatewayConfig.RUN_EVENTS_MAX_BYTES } : {});
  // Durable queues: a job a killed process had taken goes back to waiting when the workers below
  // start (as a stalled BullMQ job does), so its run resumes from its last checkpoint.
  const files = embeddedSqliteFiles(dataDir, gatewayConfig.SQLITE_PATH);
  const walAutocheckpointPages = writerAutocheckpointPages(env);
  const queues = new SqliteQueueDatabase({ path: files.queue, ...(walAutocheckpointPages !== undefined ? { walAutocheckpointPages } : {}) });
  // Tenants share the workers by weight (docs/adr/0008-fair-scheduling.md).
  const runs = queues.queue('runs', { logger: loggerFor('orchestrator'), fairness: { weights: gatewayConfig.TENANT_WEIGHTS } });
  const webhooks = queues.queue('webhooks', { logger: loggerFor('gateway') });
  // Crons (issue 12): the durable SQLite scheduler in the queues' file (ticks survive a restart).
  const scheduler = new SqliteScheduler('crons', { database: queues, logger: loggerFor('gateway') });
  const store = createSqliteStore({ path: files.records, ...(walAutocheckpointPages !== undefined ? { walAutocheckpointPages } : {}) });
  await store.migrate();
  // Its statements are prepared once, its writes batched, its serializer cheaper (sqlite-checkpointer.ts).
  const checkpointer = openEmbeddedCheckpointer(files.checkpoints, undefined, walAutocheckpointPages);
  // The WAL copied back into the files off the threads that serve requests and runs (wal-checkpoints.ts).
  const walCheckpoints = walCheckpointsInThread(env)
    ? WalCheckpointer.start({ files: [files.queue, files.records, files.checkpoints], logger: loggerFor('sqlite') })
    : undefined;
  /** Closes the queues, the databases, the bus and telemetry: the last step of a close, and of a failed start. */
  const closeStorage = async (): Promise<void> => {
    await Promise.allSettled([runs.close(), webhooks.close(), scheduler.close(), events.close()]);
    await walCheckpoints?.stop();
    await queues.close();
    await store.close();
    checkpointer.db.close();
    await bus.close();
    await telemetry.shutdown();
  };

  // The services that execute runs: in this thread, or (EMBEDDED_THREADS=orchestrator[:N]) in N
  // worker threads, each with its own connections to the same files (orchestrator-pool.ts).
  let services: RunServices;
  let gatewayRuns: JobQueue = runs;
  let pool: OrchestratorPool | undefined;
  if (threads > 0) {
    // An application's own logger sees the threads' lines too, each logged again by the service that wrote it.
    const appLogger = opts.logger;
    const logLines = appLogger ? { level: appLogger.level, write: (line: string) => relogLine(line, loggerFor) } : undefined;
    pool = await startOrchestratorPool({
      threads,
      env,
      dataDir,
      bus,
      events,
      wakeQueues: [webhooks],
      mainQueueOwner: queues.owner,
      ...(logLines ? { logLines } : {}),
    }).catch(async (err: unknown) => {
      // Nothing is listening yet: close what is open, so the caller sees the error and nothing keeps the process alive.
      await closeStorage();
      throw err;
    });
    // The gateway's runs are taken by the threads' workers: each one added wakes them.
    gatewayRuns = announcingQueue(runs, pool.port);
    services = { stop: () => pool!.stop() };
  } else {
    services = await startRunServices({ env, bus, store, events, runs, webhooks, checkpointer, scheduler, loggerFor });
  }
  const gatewayLogger = loggerFor('gateway');
  const redactor = gatewayPathRedactor(gatewayConfig);
  const webhookWorker = await startWebhookWorker({ webhooks, logger: gatewayLogger, config: gatewayConfig, store, redact: (t) => redactor.redact(t) });
  // Deleting a thread also deletes its checkpoints and workspace (the orchestrator answers over the bus).
  // History and state at a checkpoint read the orchestrator's checkpoints.
  const checkpoints = createThreadCheckpoints(checkpointer);
  const app = await createGatewayApp({
    store: withThreadResourceDeletion(store, bus),
    runs: gatewayRuns,
    events,
    logger: gatewayLogger,
    config: gatewayConfig,
    bus,
    checkpoints,
    // Cancel with rollback deletes the run's checkpoints from the orchestrator's SqliteSaver.
    rewinder: sqliteCheckpointRewinder(checkpointer),
    scheduler,
  });
  await app.listen({ port: gatewayConfig.PORT, host: gatewayConfig.HOST });
  const grpcServer = gatewayConfig.GRPC_ENABLED
    ? await startGrpcServer({ context: app.agentloop, host: gatewayConfig.HOST, port: gatewayConfig.GRPC_PORT, logger: gatewayLogger })
    : undefined;
  // Gauges read when metrics are collected: queue depth and age, threads waiting for a person.
  const unobserve = [observeQueues([runs, webhooks]), observePendingApprovals(() => store.countThreadsByTenant('interrupted'))];
  // The orchestrator threads' measurements are recorded here; each collection waits for what they have not sent yet.
  if (pool) unobserve.push(flushThreadTelemetryOnCollect(() => pool.telemetry));
  const port = (app.server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ url }, 'AgentLoop is listening');

  let closed = false;
  const server: EmbeddedServer = {
    url,
    grpcPort: grpcServer?.port,
    port,
    orchestratorThreadId: pool?.threadIds[0],
    orchestratorThreadIds: pool?.threadIds ?? [],
    async close() {
      if (closed) return;
      closed = true;
      for (const stop of unobserve) stop();
      await grpcServer?.close();
      await app.close();
      await services.stop();
      await webhookWorker.close(5_000);
      await closeStorage();
    },
  };
  pool?.failed.catch((err: Error) => {
    logger.fatal({ err }, 'the orchestrator thread failed; stopping');
    const fatal = opts.onFatal ?? (() => process.exit(1));
    void server.close().finally(() => fatal(err));
  });
  return server;
}

/** Logs a JSON line an orchestrator thread wrote on the logger of the service that wrote it, at its level. */
function relogLine(line: string, loggerFor: (service: string) => Logger): void {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  const { level, msg, time: _time, pid: _pid, hostname: _host, service, ...fields } = rec;
  const logger = loggerFor(typeof service === 'string' ? service : 'agentloop');
  const label = typeof level === 'number' ? logger.levels.labels[level] : undefined;
  const log =
    label === 'trace' || label === 'debug' || label === 'info' || label === 'warn' || label === 'error' || label === 'fatal' ? logger[label] : logger.info;
  log.call(logger, fields, typeof msg === 'string' ? msg : '');
}
