/**
 * Tool-runner process (cluster mode): serves agentloop.tools.* on NATS.
 * The embedded mode runs createToolRunner() in-process instead.
 */
import { connectNatsBus } from '@agentloop/bus';
import { ConfigError, createLogger, exitOnSignals, runMain } from '@agentloop/core';
import { initTelemetry, logTelemetry } from '@agentloop/telemetry';
import { loadToolRunnerConfig } from './config.js';
import { createToolRunner } from './service.js';
import { readToolsConfig } from './tool-loader.js';

await runMain('tool-runner', async () => {
  const config = loadToolRunnerConfig();
  const logger = createLogger({ service: 'tool-runner', level: config.LOG_LEVEL, ...logTelemetry });
  // Traces and metrics per the OTEL_* environment (no-op when none is set).
  const telemetry = await initTelemetry({ serviceName: 'tool-runner', logger });
  if (!config.NATS_URL) {
    throw new ConfigError('Invalid configuration:\n  NATS_URL is required for the tool-runner service (use `npm start` for the embedded mode)');
  }
  // A bad tools.yaml stops the process before it touches the network (start() reads it again).
  await readToolsConfig(config.TOOLS_CONFIG);
  const bus = await connectNatsBus({ url: config.NATS_URL, name: 'tool-runner', logger });
  const runner = createToolRunner({ bus, logger, config, useIndexer: true });
  await runner.start();

  exitOnSignals(logger, async () => {
    await runner.stop();
    await bus.close();
    await telemetry.shutdown();
  });
});
