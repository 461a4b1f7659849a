/**
 * MCP broker process (cluster mode): serves agentloop.mcp.* on NATS.
 * The embedded mode runs createMcpBroker() in-process instead.
 */
import { connectNatsBus } from '@agentloop/bus';
import { ConfigError, createLogger, exitOnSignals, runMain } from '@agentloop/core';
import { createMysqlStore, SqlStore } from '@agentloop/store';
import { initTelemetry, logTelemetry } from '@agentloop/telemetry';
import { loadMcpBrokerConfig } from './config.js';
import { createMcpBroker } from './service.js';

await runMain('mcp-broker', async () => {
  const config = loadMcpBrokerConfig();
  const logger = createLogger({ service: 'mcp-broker', level: config.LOG_LEVEL, ...logTelemetry });
  const telemetry = await initTelemetry({ serviceName: 'mcp-broker', logger });
  if (!config.NATS_URL) throw new ConfigError('Invalid configuration:\n  NATS_URL is required for the MCP broker (use `npm start` for the embedded mode)');
  const bus = await connectNatsBus({ url: config.NATS_URL, name: 'mcp-broker', logger });
  // Tenants' OAuth tokens (authorization code servers); without MYSQL_URL those servers are unavailable.
  const store = config.MYSQL_URL ? createMysqlStore({ url: config.MYSQL_URL }) : undefined;
  if (store) await store.migrate();
  const oauthStore = store instanceof SqlStore ? store.mcpOAuth : undefined;
  const broker = await createMcpBroker({ bus, logger, config, ...(oauthStore ? { oauthStore } : {}) });
  await broker.start();
  exitOnSignals(logger, async () => {
    await broker.stop();
    await store?.close();
    await bus.close();
    await telemetry.shutdown();
  });
});
