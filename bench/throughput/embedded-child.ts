/**
 * Child process of the bench: AgentLoop embedded on a free port, as `npm start` runs it but
 * with its data under a fresh directory. Tells the parent its URL over IPC and shuts down
 * cleanly on SIGTERM/SIGINT or a `stop` message.
 *
 * `profile-start` / `profile-stop` messages drive V8's CPU profiler (the sampler behind
 * `node --cpu-prof`) through the inspector, so a profile covers the measured load only, not
 * start-up (module loading, tsx compiling) or shutdown. The profile is written to the path the
 * parent gives, then `profile-written` is sent back.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { startEmbedded } from '@agentloop/agentloop-app';

type Message = { type: 'stop' } | { type: 'profile-start'; intervalUs?: number } | { type: 'profile-stop'; file: string };

const server = await startEmbedded({ port: 0 });
process.send?.({ type: 'ready', url: server.url, pid: process.pid });

let session: Session | undefined;
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
      process.send?.({ type: 'profile-started' });
      return;
    case 'profile-stop': {
      if (!session) throw new Error('profile-stop without profile-start');
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(m.file, JSON.stringify(profile));
      session.disconnect();
      session = undefined;
      process.send?.({ type: 'profile-written', file: m.file });
      return;
    }
  }
}

process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
process.on('message', (m: Message) => void onMessage(m).catch((err: unknown) => console.error('bench message failed', err)));
process.on('disconnect', () => void stop());
