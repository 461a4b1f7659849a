/**
 * Gateway process (cluster mode): the HTTP API on MySQL records, BullMQ
 * queues (Redis) and JetStream run events (NATS), plus the webhook worker.
 */
import { ConfigError, UnavailableError, createLogger, runMain } from '@agentloop/core';
import { connectNatsBus, createJetStreamRunEventStream, Headers, ORCHESTRATOR_SUBJECTS, type Bus } from '@agentloop/bus';
import { create, fromBinary, toBinary, WorkspaceRequest_Action, WorkspaceRequestSchema, WorkspaceResponseSchema } from '@agentloop/proto';
import { createBullMqQueue } from '@agentloop/queue';
import { createMysqlStore, type Store } from '@agentloop/store';
import { createGatewayApp } from './app.js';
import { loadGatewayConfig } from './config.js';
import { startWebhookWorker } from './webhooks.js';

await runMain('gateway', async () => {
  const config = loadGatewayConfig();
  const logger = createLogger({ service: 'gateway', level: config.LOG_LEVEL });
  if (!config.NATS_URL || !config.REDIS_URL || !config.MYSQL_URL) {
    throw new ConfigError('Invalid configuration:\n  NATS_URL, REDIS_URL and MYSQL_URL are all required for the gateway service (use `npm start` for the embedded mode)');
  }
  const bus = await connectNatsBus({ url: config.NATS_URL, name: 'gateway', logger });
  const events = await createJetStreamRunEventStream({ bus, logger });
  // Deleting a thread also deletes its checkpoints and workspace, which the orchestrator owns.
  const store = withThreadResourceDeletion(createMysqlStore({ url: config.MYSQL_URL }), bus);
  await store.migrate();
  const runs = createBullMqQueue({ name: 'runs', redisUrl: config.REDIS_URL, logger });
  const webhooks = createBullMqQueue({ name: 'webhooks', redisUrl: config.REDIS_URL, logger });

  const app = await createGatewayApp({ store, runs, events, logger, config });
  const hooks = await startWebhookWorker({ webhooks, logger, config });
  await app.listen({ port: config.PORT, host: config.HOST });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    await app.close();
    await hooks.close(10_000);
    await Promise.allSettled([runs.close(), webhooks.close(), events.close(), store.close()]);
    await bus.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
});

/**
 * The store, except that `deleteThread` first asks an orchestrator (over the bus) to delete the
 * thread's checkpoints and workspace: the gateway cannot load LangGraph or reach the workspace
 * volume. When no orchestrator answers, the deletion fails (503) and the records stay, so a retry
 * deletes everything rather than leaving orphaned checkpoints.
 */
function withThreadResourceDeletion(store: Store, bus: Bus): Store {
  const deleteThread = async (tenantId: string, threadId: string): Promise<boolean> => {
    const req = create(WorkspaceRequestSchema, { tenantId, threadId, action: WorkspaceRequest_Action.DELETE });
    const reply = await bus.request(ORCHESTRATOR_SUBJECTS.deleteThread, toBinary(WorkspaceRequestSchema, req), {
      timeoutMs: 30_000,
      headers: { [Headers.tenant]: tenantId },
    });
    const res = fromBinary(WorkspaceResponseSchema, reply.data);
    if (res.error) throw new UnavailableError(`Could not delete the checkpoints and workspace of thread ${threadId}: ${res.error.message}`);
    return store.deleteThread(tenantId, threadId);
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'deleteThread') return deleteThread;
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
