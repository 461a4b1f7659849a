/**
 * Skill sandbox process (cluster mode): serves agentloop.skills.* on NATS.
 * The embedded mode runs createSkillSandbox() in-process instead.
 */
import { connectNatsBus } from '@agentloop/bus';
import { ConfigError, createLogger, exitOnSignals, runMain } from '@agentloop/core';
import { initTelemetry, logTelemetry } from '@agentloop/telemetry';
import { loadSkillSandboxConfig } from './config.js';
import { createSkillSandbox } from './service.js';

await runMain('skill-sandbox', async () => {
  const config = loadSkillSandboxConfig();
  const logger = createLogger({ service: 'skill-sandbox', level: config.LOG_LEVEL, ...logTelemetry });
  // Traces and metrics per the OTEL_* environment (no-op when none is set).
  const telemetry = await initTelemetry({ serviceName: 'skill-sandbox', logger });
  if (!config.NATS_URL) {
    throw new ConfigError('Invalid configuration:\n  NATS_URL is required for the skill sandbox (use `npm start` for the embedded mode)');
  }
  const bus = await connectNatsBus({ url: config.NATS_URL, name: 'skill-sandbox', logger });
  const sandbox = createSkillSandbox({ bus, logger, config });
  await sandbox.start();

  exitOnSignals(logger, async () => {
    await sandbox.stop();
    await bus.close();
    await telemetry.shutdown();
  });
});
