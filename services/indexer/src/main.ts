/**
 * Indexer process (cluster mode): serves agentloop.indexer.* on NATS.
 * The embedded mode runs createIndexer() in-process instead.
 */
import { connectNatsBus } from '@agentloop/bus';
import { ConfigError, createLogger, exitOnSignals, runMain } from '@agentloop/core';
import { initTelemetry, logTelemetry } from '@agentloop/telemetry';
import { loadIndexerConfig } from './config.js';
import { createIndexer } from './service.js';

await runMain('indexer', async () => {
  const config = loadIndexerConfig();
  const logger = createLogger({ service: 'indexer', level: config.LOG_LEVEL, ...logTelemetry });
  // Traces and metrics per the OTEL_* environment (no-op when none is set).
  const telemetry = await initTelemetry({ serviceName: 'indexer', logger });
  if (!config.NATS_URL) {
    throw new ConfigError('Invalid configuration:\n  NATS_URL is required for the indexer service (use `npm start` for the embedded mode)');
  }
  const bus = await connectNatsBus({ url: config.NATS_URL, name: 'indexer', logger });
  const indexer = createIndexer({ bus, logger, config });
  await indexer.start();

  exitOnSignals(logger, async () => {
    await indexer.stop();
    await bus.close();
    await telemetry.shutdown();
  });
});
