/**
 * Orchestrator process (cluster mode): a BullMQ worker on `runs` that runs the
 * agent loop with MySQL checkpoints and calls tools over NATS.
 */
import { ConfigError, createLogger, exitOnSignals, runMain } from '@agentloop/core';
import { initTelemetry, logTelemetry, observeQueues, tracedMethods } from '@agentloop/telemetry';
import { connectNatsBus, createJetStreamRunEventStream } from '@agentloop/bus';
import { BullMqScheduler, createBullMqQueue } from '@agentloop/queue';
import { createMysqlStore } from '@agentloop/store';
import { MySQLSaver } from '@agentloop/checkpoint-mysql';
import { loadOrchestratorConfig } from './config.js';
import { createOrchestrator } from './service.js';

await runMain('orchestrator', async () => {
  const config = loadOrchestratorConfig();
  const logger = createLogger({ service: 'orchestrator', level: config.LOG_LEVEL, ...logTelemetry });
  // Traces and metrics per the OTEL_* environment (no-op when none is set).
  const telemetry = await initTelemetry({ serviceName: 'orchestrator', logger });
  if (!config.NATS_URL || !config.REDIS_URL || !config.MYSQL_URL) {
    throw new ConfigError(
      'Invalid configuration:\n  NATS_URL, REDIS_URL and MYSQL_URL are all required for the orchestrator service (use `npm start` for the embedded mode)',
    );
  }
  const bus = await connectNatsBus({ url: config.NATS_URL, name: 'orchestrator', logger });
  const events = await createJetStreamRunEventStream({ bus, logger, ...(config.RUN_EVENTS_MAX_BYTES ? { maxBytes: config.RUN_EVENTS_MAX_BYTES } : {}) });
  const store = await createMysqlStore({ url: config.MYSQL_URL });
  await store.migrate();
  const checkpointer = MySQLSaver.fromConnString(config.MYSQL_URL);
  await checkpointer.setup();
  // Tenants share the orchestrators by weight (docs/adr/0008-fair-scheduling.md).
  const runs = createBullMqQueue({ name: 'runs', redisUrl: config.REDIS_URL, logger, fairness: { weights: config.TENANT_WEIGHTS } });
  const webhooks = createBullMqQueue({ name: 'webhooks', redisUrl: config.REDIS_URL, logger });
  // The scheduled-task tools write crons; the gateways' worker fires them (this process runs no scheduler worker).
  const scheduler = new BullMqScheduler({ name: 'crons', redisUrl: config.REDIS_URL, logger });
  // With tracing on, a span per store query, checkpoint write, event publish and job enqueue.
  const orchestrator = createOrchestrator({
    bus,
    store: tracedMethods(store, 'store'),
    events: tracedMethods(events, 'events'),
    runs: tracedMethods(runs, 'queue.runs'),
    webhooks,
    checkpointer: tracedMethods(checkpointer, 'checkpoints'),
    logger,
    config,
    durability: 'sync',
    scheduler,
  });
  await orchestrator.start();
  // Queue depth and age on this process's /metrics (every replica reports the same Redis queues).
  const unobserve = observeQueues([runs, webhooks]);

  exitOnSignals(logger, async () => {
    unobserve();
    await orchestrator.stop();
    await Promise.allSettled([runs.close(), webhooks.close(), scheduler.close(), events.close(), store.close(), checkpointer.end()]);
    await bus.close();
    await telemetry.shutdown();
  });
});
