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
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { createLogger, type Logger } from '@agentloop/core';
import { initTelemetry, logTelemetry, observePendingApprovals, observeQueues } from '@agentloop/telemetry';
import { MemoryBus, MemoryRunEventStream } from '@agentloop/bus';
import { SqliteQueueDatabase, SqliteScheduler } from '@agentloop/queue';
import { createSqliteStore, openCachedSqlite } from '@agentloop/store';
import { createToolRunner, loadToolRunnerConfig } from '@agentloop/tool-runner';
import { createIndexer, loadIndexerConfig } from '@agentloop/indexer';
import { createApprovalService, loadApprovalConfig } from '@agentloop/approval';
import { createSkillSandbox, DEFAULT_SKILLS_ROOT, loadSkillSandboxConfig } from '@agentloop/skill-sandbox';
import { createMcpBroker, loadMcpBrokerConfig } from '@agentloop/mcp-broker';
import { createOrchestrator, createThreadCheckpoints, loadOrchestratorConfig, sqliteCheckpointRewinder } from '@agentloop/orchestrator';
import { launcherDefaults } from './defaults.js';
import { createGatewayApp, gatewayPathRedactor, loadGatewayConfig, startGrpcServer, startWebhookWorker, withThreadResourceDeletion } from '@agentloop/gateway';

export interface EmbeddedOptions {
  /** Environment to read configuration from (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** Overrides PORT (0 picks a free port). */
  port?: number;
  logger?: Logger;
}

export interface EmbeddedServer {
  /** Base URL, e.g. http://127.0.0.1:2024 */
  url: string;
  /** Port of the gRPC API (undefined when GRPC_ENABLED=false). */
  grpcPort: number | undefined;
  port: number;
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
  const orchestratorConfig = loadOrchestratorConfig(env);
  const toolConfig = loadToolRunnerConfig(env);
  const indexerConfig = loadIndexerConfig(env);
  const approvalConfig = loadApprovalConfig(env);
  const skillsConfig = loadSkillSandboxConfig(env);
  const mcpConfig = loadMcpBrokerConfig(env);
  // One logger per service so every line carries the service that wrote it.
  const loggerFor = (service: string): Logger =>
    opts.logger ? opts.logger.child({ component: service }) : createLogger({ service, level: gatewayConfig.LOG_LEVEL, ...logTelemetry });
  const logger = loggerFor('agentloop');
  logger.info({ data_dir: dataDir, mode: 'embedded' }, 'starting AgentLoop (embedded)');
  // One OpenTelemetry SDK for the whole process, per the OTEL_* environment (no-op when none is set).
  const telemetry = await initTelemetry({ serviceName: 'agentloop', env, logger });

  const bus = new MemoryBus();
  const events = new MemoryRunEventStream(gatewayConfig.RUN_EVENTS_MAX_BYTES ? { maxBytes: gatewayConfig.RUN_EVENTS_MAX_BYTES } : {});
  // Durable queues: a job a killed process had taken goes back to waiting when the workers below
  // start (as a stalled BullMQ job does), so its run resumes from its last checkpoint.
  const queues = new SqliteQueueDatabase({ path: path.join(dataDir, 'queue.sqlite') });
  // Tenants share the workers by weight (docs/adr/0008-fair-scheduling.md).
  const runs = queues.queue('runs', { logger: loggerFor('orchestrator'), fairness: { weights: gatewayConfig.TENANT_WEIGHTS } });
  const webhooks = queues.queue('webhooks', { logger: loggerFor('gateway') });
  // Crons (issue 12): the durable SQLite scheduler in the queues' file (ticks survive a restart).
  const scheduler = new SqliteScheduler('crons', { database: queues, logger: loggerFor('gateway') });
  const store = createSqliteStore({ path: gatewayConfig.SQLITE_PATH });
  await store.migrate();
  // Its statements are prepared once, not on every checkpoint read and write (statement-cache.ts).
  const checkpointer = new SqliteSaver(openCachedSqlite(path.join(dataDir, 'checkpoints.sqlite')));

  const toolRunner = createToolRunner({ bus, logger: loggerFor('tool-runner'), config: toolConfig, useIndexer: true });
  await toolRunner.start();
  const indexer = createIndexer({ bus, logger: loggerFor('indexer'), config: indexerConfig });
  await indexer.start();
  const approval = await createApprovalService({ bus, store, logger: loggerFor('approval'), config: approvalConfig });
  await approval.start();
  const skillSandbox = createSkillSandbox({ bus, logger: loggerFor('skill-sandbox'), config: skillsConfig });
  await skillSandbox.start();
  const mcpBroker = await createMcpBroker({ bus, logger: loggerFor('mcp-broker'), config: mcpConfig });
  await mcpBroker.start();
  const orchestrator = createOrchestrator({
    bus,
    store,
    events,
    runs,
    webhooks,
    checkpointer,
    logger: loggerFor('orchestrator'),
    config: orchestratorConfig,
    env,
    durability: 'async',
    scheduler,
  });
  await orchestrator.start();
  const gatewayLogger = loggerFor('gateway');
  const redactor = gatewayPathRedactor(gatewayConfig);
  const webhookWorker = await startWebhookWorker({ webhooks, logger: gatewayLogger, config: gatewayConfig, store, redact: (t) => redactor.redact(t) });
  // Deleting a thread also deletes its checkpoints and workspace (the orchestrator answers over the bus).
  // History and state at a checkpoint read the orchestrator's checkpoints.
  const checkpoints = createThreadCheckpoints(checkpointer);
  const app = await createGatewayApp({
    store: withThreadResourceDeletion(store, bus),
    runs,
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
  const port = (app.server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  logger.info({ url }, 'AgentLoop is listening');

  let closed = false;
  return {
    url,
    grpcPort: grpcServer?.port,
    port,
    async close() {
      if (closed) return;
      closed = true;
      for (const stop of unobserve) stop();
      await grpcServer?.close();
      await app.close();
      await orchestrator.stop();
      await webhookWorker.close(5_000);
      await toolRunner.stop();
      await indexer.stop();
      await approval.stop();
      await skillSandbox.stop();
      await mcpBroker.stop();
      await Promise.allSettled([runs.close(), webhooks.close(), scheduler.close(), events.close()]);
      await queues.close();
      await store.close();
      checkpointer.db.close();
      await bus.close();
      await telemetry.shutdown();
    },
  };
}
