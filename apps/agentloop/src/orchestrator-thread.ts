/**
 * EMBEDDED_THREADS=orchestrator (issue 9, bench/throughput/README.md "The orchestrator in a worker
 * thread"): the main thread keeps HTTP, the gateway, webhook delivery and the crons' scheduler;
 * the services that execute runs start in a `worker_threads` Worker (orchestrator-worker.ts).
 * Between them: the bus (a PortBus in the worker bridged into the main thread's MemoryBus), the
 * run events (a PortRunEventStream writing into the main thread's MemoryRunEventStream) and the
 * queue wake-ups (queue-wake.ts), over MessagePorts.
 *
 * A failure of the thread — an uncaught error, or its exit while not asked to stop — is reported
 * through `failed`: the embedded server then stops the process rather than keep accepting runs
 * nobody executes.
 */
import { randomUUID } from 'node:crypto';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { bridgeBus, bridgeRunEvents, type MemoryBus, type MemoryRunEventStream } from '@agentloop/bus';
import { adoptLiveOwner, type SqliteQueue } from '@agentloop/queue';
import { receiveThreadTelemetry, threadTelemetryConfig, type ThreadTelemetryConfig, type ThreadTelemetryReceiver } from '@agentloop/telemetry';
import { wakeOnAnnouncement, type WakePort } from './queue-wake.js';

/** Main thread ↔ orchestrator thread, on the worker's own port (besides the queue wake-ups). */
export type ThreadControl = { t: 'ready' } | { t: 'stop' } | { t: 'stopped' } | { t: 'log'; line: string };

export interface OrchestratorThreadData {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  /** The worker's queue database owner id, adopted as alive by the main thread before the worker starts. */
  queueOwner: string;
  /** The queue owners of the process's other threads (the main thread's, the sibling workers'), adopted as alive by the worker. */
  liveQueueOwners: string[];
  busPort: MessagePort;
  eventsPort: MessagePort;
  /** What the main thread exports: the worker records that much and posts it to the main thread (telemetry's threads.ts). */
  telemetry: ThreadTelemetryConfig;
  /** Post every log line to the main thread (`ThreadControl` `log`) instead of writing it to stdout, at this level. */
  forwardLogs: { level: string } | undefined;
}

export interface OrchestratorThreadDeps {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  bus: MemoryBus;
  events: MemoryRunEventStream;
  /** The main thread's queues the worker's jobs land in (webhooks), woken when the worker announces one. */
  wakeQueues: SqliteQueue[];
  /**
   * Where the thread's log lines go when the embedding application gave a logger of its own
   * (EmbeddedOptions.logger): each JSON line the thread logged. Default: the thread writes them to
   * standard output itself.
   */
  logLines?: { level: string; write(line: string): void };
  /** This worker's queue owner id (default: a new one). */
  queueOwner?: string;
  /**
   * The queue owners of the process's other threads — the main thread's and, with several
   * orchestrator threads, the siblings' (orchestrator-pool.ts). The worker counts their active
   * jobs as held by a live owner; any it did not know would count as a dead previous life of the
   * process and be taken back from under them.
   */
  liveQueueOwners: string[];
}

export interface OrchestratorThread {
  threadId: number;
  /** Where the main thread's wake-ups go (queue-wake.ts announcingQueue). */
  port: WakePort;
  /** The thread's spans, metrics and log records, exported by this thread's telemetry. */
  telemetry: ThreadTelemetryReceiver;
  /** Rejects when the thread fails; never resolves. */
  failed: Promise<never>;
  /** Asks the thread to stop its services and waits for it to end (terminated after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** How long a stopping thread gets beyond the orchestrator's own drain before it is terminated. */
const STOP_GRACE_MS = 60_000;

export async function startOrchestratorThread(d: OrchestratorThreadDeps): Promise<OrchestratorThread> {
  const busChannel = new MessageChannel();
  const eventsChannel = new MessageChannel();
  // The thread's ThreadBus delivers its own events to its own subscribers (thread-bus.ts).
  const busBridge = bridgeBus(busChannel.port1, d.bus, { noEcho: true });
  const eventsBridge = bridgeRunEvents(eventsChannel.port1, d.events);
  const queueOwner = d.queueOwner ?? randomUUID();
  const forgetOwner = adoptLiveOwner(queueOwner);
  const workerData: OrchestratorThreadData = {
    env: { ...d.env },
    dataDir: d.dataDir,
    queueOwner,
    liveQueueOwners: d.liveQueueOwners,
    busPort: busChannel.port2,
    eventsPort: eventsChannel.port2,
    telemetry: threadTelemetryConfig(),
    forwardLogs: d.logLines ? { level: d.logLines.level } : undefined,
  };
  const worker = spawnWorker(new URL('./orchestrator-worker.js', import.meta.url), workerData, [busChannel.port2, eventsChannel.port2]);
  wakeOnAnnouncement(worker, d.wakeQueues);
  // On the worker's own port: what it recorded arrives before its `stopped`.
  const telemetry = receiveThreadTelemetry(worker);
  const logLines = d.logLines;
  if (logLines) worker.on('message', (m: ThreadControl) => m.t === 'log' && logLines.write(m.line));

  let stopping = false;
  let exited = false;
  const exit = new Promise<number>((resolve) =>
    worker.once('exit', (code) => {
      exited = true;
      forgetOwner();
      telemetry.close();
      void busBridge.close();
      void eventsBridge.close();
      resolve(code);
    }),
  );
  const failed = new Promise<never>((_, reject) => {
    worker.once('error', (err) => reject(new Error(`the orchestrator thread failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err })));
    void exit.then((code) => {
      if (!stopping) reject(new Error(`the orchestrator thread exited (code ${code}) while the server was running`));
    });
  });
  failed.catch(() => undefined);
  await Promise.race([failed, new Promise<void>((resolve) => worker.on('message', (m: ThreadControl) => m.t === 'ready' && resolve()))]);

  return {
    threadId: worker.threadId,
    port: worker,
    telemetry,
    failed,
    async stop(graceMs = STOP_GRACE_MS) {
      if (stopping) return void (await exit);
      stopping = true;
      if (exited) return;
      // Everything of the thread is closed once it says so; terminating it then only ends its event loop.
      worker.on('message', (m: ThreadControl) => m.t === 'stopped' && void worker.terminate());
      worker.postMessage({ t: 'stop' } satisfies ThreadControl);
      const timer = setTimeout(() => void worker.terminate(), graceMs);
      await exit;
      clearTimeout(timer);
    },
  };
}

/**
 * From the built JavaScript the worker is the compiled file; from the TypeScript sources (tsx,
 * vitest) it is the .ts file, which a new thread can load only after registering tsx's loader
 * itself: loaders registered in the main thread do not reach a worker's entry module.
 */
function spawnWorker(jsUrl: URL, workerData: OrchestratorThreadData, transferList: MessagePort[]): Worker {
  const fromSource = import.meta.url.endsWith('.ts');
  if (!fromSource) return new Worker(jsUrl, { workerData, transferList });
  const tsUrl = jsUrl.href.replace(/\.js$/, '.ts');
  // tsx's ESM API resolved from here, not from the working directory (where an eval'd worker resolves from).
  const tsxApi = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsxApi)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(tsUrl)}); })`;
  return new Worker(bootstrap, { eval: true, workerData, transferList, execArgv: ['--conditions=@agentloop/source'] });
}
