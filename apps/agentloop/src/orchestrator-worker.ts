/**
 * Entry of embedded mode's orchestrator thread (EMBEDDED_THREADS=orchestrator, issue 9; the main
 * thread's side is orchestrator-thread.ts). It runs the services that execute runs
 * (run-services.ts) on connections of its own to the same SQLite files as the main thread —
 * records, checkpoints, queues; WAL lets the two threads read and write them side by side — and
 * talks to the main thread's gateway only through the bus and run-event ports, as the cluster's
 * orchestrator talks to its gateway only through NATS.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { createLogger, type Logger } from '@agentloop/core';
import { initThreadTelemetry, logTelemetry } from '@agentloop/telemetry';
import { MemoryBus, PortBus, PortRunEventStream, ThreadBus } from '@agentloop/bus';
import { adoptLiveOwner, SqliteQueueDatabase, SqliteScheduler } from '@agentloop/queue';
import { createSqliteStore } from '@agentloop/store';
import { loadGatewayConfig } from '@agentloop/gateway';
import { announcingQueue, wakeOnAnnouncement } from './queue-wake.js';
import { openEmbeddedCheckpointer } from './sqlite-checkpointer.js';
import { embeddedSqliteFiles, writerAutocheckpointPages } from './wal-checkpoints.js';
import { startRunServices } from './run-services.js';
import type { ThreadControl, OrchestratorThreadData } from './orchestrator-thread.js';

const data = workerData as OrchestratorThreadData;
const control = parentPort!;
const post = (m: ThreadControl) => control.postMessage(m);

const { env, dataDir } = data;
const gatewayConfig = loadGatewayConfig(env);
// The embedding application's own logger (EmbeddedOptions.logger) is the main thread's: lines go there.
const forward = data.forwardLogs;
const loggerFor = (service: string): Logger =>
  forward
    ? createLogger({ service, level: forward.level, ...logTelemetry, destination: { write: (line: string) => post({ t: 'log', line }) } })
    : createLogger({ service, level: gatewayConfig.LOG_LEVEL, ...logTelemetry });
// Spans, metrics and log records go to the main thread, which exports them with its own: one
// /metrics endpoint and one set of exporters per process (telemetry's threads.ts).
const telemetry = initThreadTelemetry(control, data.telemetry, env);

// The other threads' queue owners are alive: the main thread's active jobs (webhooks, cron ticks)
// and the runs a sibling orchestrator thread holds are not stalled ones.
for (const owner of data.liveQueueOwners) adoptLiveOwner(owner);
// The services of this thread call each other here; the gateway's calls and all events cross the port.
const bus = new ThreadBus(new MemoryBus({ logger: loggerFor('bus') }), new PortBus(data.busPort as MessagePort, { logger: loggerFor('bus') }));
const events = new PortRunEventStream(data.eventsPort as MessagePort);
// The main thread's WalCheckpointer checkpoints these files; this thread's connections as its own do (wal-checkpoints.ts).
const files = embeddedSqliteFiles(dataDir, gatewayConfig.SQLITE_PATH);
const walAutocheckpointPages = writerAutocheckpointPages(env);
const queues = new SqliteQueueDatabase({
  path: files.queue,
  owner: data.queueOwner,
  ...(walAutocheckpointPages !== undefined ? { walAutocheckpointPages } : {}),
});
const runs = queues.queue('runs', { logger: loggerFor('orchestrator'), fairness: { weights: gatewayConfig.TENANT_WEIGHTS } });
const webhookQueue = queues.queue('webhooks', { logger: loggerFor('orchestrator') });
wakeOnAnnouncement(control, [runs]);
const scheduler = new SqliteScheduler('crons', { database: queues, logger: loggerFor('orchestrator') });
const store = createSqliteStore({ path: files.records, ...(walAutocheckpointPages !== undefined ? { walAutocheckpointPages } : {}) });
const checkpointer = openEmbeddedCheckpointer(files.checkpoints, undefined, walAutocheckpointPages);

const services = await startRunServices({
  env,
  bus,
  store,
  events,
  runs,
  // The webhook worker is the main thread's: it hears of each webhook the orchestrator adds.
  webhooks: announcingQueue(webhookQueue, control),
  checkpointer,
  scheduler,
  loggerFor,
});

control.on('message', (m: ThreadControl) => {
  if (m.t !== 'stop') return;
  void (async () => {
    await services.stop();
    await Promise.allSettled([runs.close(), webhookQueue.close(), scheduler.close(), events.close()]);
    await queues.close();
    await store.close();
    checkpointer.db.close();
    await bus.close();
    await telemetry.shutdown();
    post({ t: 'stopped' });
    control.close();
  })();
});
post({ t: 'ready' });
