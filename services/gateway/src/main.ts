/**
 * Gateway process (cluster mode): the HTTP API on MySQL records, BullMQ
 * queues (Redis) and JetStream run events (NATS), plus the webhook worker.
 */
import { ConfigError, createLogger, exitOnSignals, runMain } from '@agentloop/core';
import { initTelemetry, logTelemetry, observePendingApprovals, tracedMethods } from '@agentloop/telemetry';
import { connectNatsBus, createJetStreamRunEventStream } from '@agentloop/bus';
import { BullMqScheduler, createBullMqQueue } from '@agentloop/queue';
import { createMysqlStore } from '@agentloop/store';
import { MySQLSaver } from '@agentloop/checkpoint-mysql';
import { createThreadCheckpoints, mysqlCheckpointRewinder } from '@agentloop/orchestrator';
import { Redis } from 'ioredis';
import { createGatewayApp } from './app.js';
import { loadGatewayConfig } from './config.js';
import { startWebhookWorker } from './webhooks.js';
import { startGrpcServer } from './grpc.js';
import { withThreadResourceDeletion } from './thread-deletion.js';

await runMain('gateway', async () => {
  const config = loadGatewayConfig();
  const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL, ...logTelemetry });
  // Traces and metrics per the OTEL_* environment (no-op when none is set).
  const telemetry = await initTelemetry({ serviceName: 'gateway', logger });
  if (!config.NATS_URL || !config.REDIS_URL || !config.MYSQL_URL) {
    throw new ConfigError(
      'Invalid configuration:\n  NATS_URL, REDIS_URL and MYSQL_URL are all required for the gateway service (use `npm start` for the embedded mode)',
    );
  }
  const bus = await connectNatsBus({ url: config.NATS_URL, name: 'gateway', logger });
  const events = await createJetStreamRunEventStream({ bus, logger, ...(config.RUN_EVENTS_MAX_BYTES ? { maxBytes: config.RUN_EVENTS_MAX_BYTES } : {}) });
  // Deleting a thread also deletes its checkpoints and workspace, which the orchestrator owns.
  const store = withThreadResourceDeletion(createMysqlStore({ url: config.MYSQL_URL }), bus);
  await store.migrate();
  // Tenants share the orchestrators by weight (docs/adr/0008-fair-scheduling.md).
  const runs = createBullMqQueue({ name: 'runs', redisUrl: config.REDIS_URL, logger, fairness: { weights: config.TENANT_WEIGHTS } });
  const webhooks = createBullMqQueue({ name: 'webhooks', redisUrl: config.REDIS_URL, logger });
  // Crons (issue 12): BullMQ job schedulers, so each tick fires once across every replica.
  const scheduler = new BullMqScheduler({ name: 'crons', redisUrl: config.REDIS_URL, logger });

  // Rate-limit counters shared by every gateway replica.
  const rateLimitRedis = new Redis(config.REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  rateLimitRedis.on('error', (err) => logger.warn({ err: err.message }, 'rate-limit redis error (requests are not limited meanwhile)'));
  // History and state at a checkpoint read the orchestrators' checkpoint tables; state updates, copies,
  // prunes and run rollbacks write them, only while no run holds the thread (setup() creates the
  // tables when the gateway boots first).
  const checkpointer = MySQLSaver.fromConnString(config.MYSQL_URL, { pool: { connectionLimit: 4 } });
  await checkpointer.setup();
  // With tracing on, a span per store query, job enqueue and event-stream call.
  const app = await createGatewayApp({
    store: tracedMethods(store, 'store'),
    runs: tracedMethods(runs, 'queue.runs'),
    events: tracedMethods(events, 'events'),
    logger,
    config,
    bus,
    rateLimitRedis,
    scheduler,
    checkpoints: createThreadCheckpoints(checkpointer),
    rewinder: mysqlCheckpointRewinder(checkpointer),
  });
  const hooks = await startWebhookWorker({ webhooks, logger, config, store, redact: app.agentloop.redact });
  await app.listen({ port: config.PORT, host: config.HOST });
  // Threads waiting for a person, on this process's /metrics (every replica reads the same MySQL).
  const unobserve = observePendingApprovals(() => store.countThreadsByTenant('interrupted'));
  const grpcServer = config.GRPC_ENABLED ? await startGrpcServer({ context: app.agentloop, host: config.HOST, port: config.GRPC_PORT, logger }) : undefined;

  exitOnSignals(logger, async () => {
    unobserve();
    await grpcServer?.close();
    await app.close();
    await hooks.close(10_000);
    await Promise.allSettled([runs.close(), webhooks.close(), scheduler.close(), events.close(), store.close(), checkpointer.end()]);
    rateLimitRedis.disconnect();
    await bus.close();
    await telemetry.shutdown();
  });
});
