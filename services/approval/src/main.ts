/**
 * Approval process (cluster mode): serves agentloop.approval.* on NATS with the
 * audit trail in MySQL. The embedded mode runs createApprovalService() in-process.
 */
import { connectNatsBus } from '@agentloop/bus';
import { ConfigError, createLogger, errorMessage, exitOnSignals, runMain } from '@agentloop/core';
import { createMysqlStore } from '@agentloop/store';
import { initTelemetry, logTelemetry } from '@agentloop/telemetry';
import { loadApprovalConfig } from './config.js';
import { createApprovalService } from './service.js';

await runMain('approval', async () => {
  const config = loadApprovalConfig();
  const logger = createLogger({ service: 'approval', level: config.LOG_LEVEL, ...logTelemetry });
  const telemetry = await initTelemetry({ serviceName: 'approval', logger });
  if (!config.NATS_URL || !config.MYSQL_URL) {
    throw new ConfigError('Invalid configuration:\n  NATS_URL and MYSQL_URL are required for the approval service (use `npm start` for the embedded mode)');
  }
  const bus = await connectNatsBus({ url: config.NATS_URL, name: 'approval', logger });
  const store = createMysqlStore({ url: config.MYSQL_URL });
  await store.migrate();
  const service = await createApprovalService({ bus, store, logger, config });

  exitOnSignals(logger, async () => {
    await service.stop();
    await bus.close();
    await store.close();
    await telemetry.shutdown();
  });
  // SIGHUP: read the rules file again; a bad file keeps the rules in force.
  process.on('SIGHUP', () => {
    service.reloadRules().catch((err: unknown) => logger.error({ err: errorMessage(err) }, 'approval rules not reloaded; the previous rules stay in force'));
  });
  // Handlers first: a signal right after "approval serving" must not find the default action.
  await service.start();
});
