/**
 * Child process of the bench: AgentLoop embedded on a free port, as `npm start` runs it but
 * with its data under a fresh directory. Tells the parent its URL over IPC and shuts down
 * cleanly on SIGTERM/SIGINT or a `stop` message.
 *
 * `profile-start` / `profile-stop` messages drive V8's CPU profiler (the sampler behind
 * `node --cpu-prof`) through the inspector, so a profile covers the measured load only, not
 * start-up (module loading, tsx compiling) or shutdown. The profile is written to the path the
 * parent gives, then `profile-written` is sent back. With orchestrator threads (EMBEDDED_THREADS),
 * each of them is profiled too, through the inspector's NodeWorker domain, into `<file>.thread-<i>`
 * (`worker` in the reply names them).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { startEmbedded } from '@agentloop/agentloop-app';

type Message = { type: 'stop' } | { type: 'profile-start'; intervalUs?: number } | { type: 'profile-stop'; file: string };

const server = await startEmbedded({ port: 0 });
process.send?.({ type: 'ready', url: server.url, pid: process.pid });

let session: Session | undefined;
/** Inspector sessions of the worker threads, by NodeWorker session id. */
let workers: WorkerSessions | undefined;

/** Profiles every worker thread alongside the main thread, over the main thread's inspector session. */
class WorkerSessions {
  private readonly ids: string[] = [];
  private readonly pending = new Map<number, (r: { result?: { profile?: unknown }; error?: unknown }) => void>();
  private nextId = 0;
  constructor(private readonly main: Session) {
    main.on('NodeWorker.attachedToWorker', (m: { params: { sessionId: string } }) => void this.ids.push(m.params.sessionId));
    main.on('NodeWorker.receivedMessageFromWorker', (m: { params: { message: string } }) => {
      const r = JSON.parse(m.params.message) as { id?: number; result?: { profile?: unknown }; error?: unknown };
      if (r.id !== undefined) this.pending.get(r.id)?.(r);
    });
  }
  async attach(): Promise<void> {
    await this.main.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await new Promise((r) => setTimeout(r, 200)); // the attachedToWorker events of the running workers
  }
  /** Sends `method` to every worker; resolves with their results in attach order. */
  all(method: string, params: object = {}): Promise<Array<{ profile?: unknown }>> {
    return Promise.all(
      this.ids.map(
        (sessionId) =>
          new Promise<{ profile?: unknown }>((resolve, reject) => {
            const id = ++this.nextId;
            this.pending.set(id, (r) => (r.error ? reject(new Error(JSON.stringify(r.error))) : resolve(r.result ?? {})));
            void this.main.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method, params }) });
          }),
      ),
    );
  }
}
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await server.close().catch((err: unknown) => console.error('close failed', err));
  process.exit(0);
}

async function onMessage(m: Message): Promise<void> {
  switch (m.type) {
    case 'stop':
      return stop();
    case 'profile-start':
      session = new Session();
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: m.intervalUs ?? 1000 });
      await session.post('Profiler.start');
      workers = new WorkerSessions(session);
      await workers.attach();
      for (const method of ['Profiler.enable', 'Profiler.setSamplingInterval', 'Profiler.start'])
        await workers.all(method, method === 'Profiler.setSamplingInterval' ? { interval: m.intervalUs ?? 1000 } : {});
      process.send?.({ type: 'profile-started' });
      return;
    case 'profile-stop': {
      if (!session) throw new Error('profile-stop without profile-start');
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(m.file, JSON.stringify(profile));
      const threads = (await workers?.all('Profiler.stop')) ?? [];
      threads.forEach((r, i) => writeFileSync(`${m.file}.thread-${i + 1}`, JSON.stringify(r.profile)));
      session.disconnect();
      session = undefined;
      process.send?.({ type: 'profile-written', file: m.file, threads: threads.length });
      return;
    }
  }
}

process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.on('message', (m: Message) => void onMessage(m).catch((err: unknown) => console.error('bench message failed', err)));
process.on('disconnect', () => void stop());
