/**
 * AgentLoop embedded as its own OS process, as `npm start` runs it (apps/agentloop/src/embedded.ts,
 * from the TypeScript sources through tsx): for tests that SIGKILL it and start it again on the
 * same DATA_DIR.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { poll } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ENTRY = path.join(REPO_ROOT, 'apps', 'agentloop', 'src', 'embedded.ts');

export interface EmbeddedProcess {
  url: string;
  child: ChildProcess;
  /** Every output line of this process (JSON log lines). */
  logs: string[];
  exited: Promise<number | NodeJS.Signals | null>;
  /** SIGKILLs the process and waits until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a graceful stop), SIGKILL after graceMs. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts the embedded server on `port` with its data in `dataDir`; resolves once it answers /ok. */
export async function startEmbeddedProcess(opts: { dataDir: string; port: number; env?: NodeJS.ProcessEnv }): Promise<EmbeddedProcess> {
  const child = spawn(process.execPath, ['--conditions=@agentloop/source', '--import', 'tsx', ENTRY], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: opts.dataDir,
      HOST: '127.0.0.1',
      PORT: String(opts.port),
      GRPC_ENABLED: 'false',
      LOG_LEVEL: 'info',
      EMBEDDED_THREADS: EMBEDDED_TEST_THREADS,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (d: string) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        logs.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
  }
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | NodeJS.Signals | null);
  const url = `http://127.0.0.1:${opts.port}`;
  let gone = false;
  void exited.then(() => (gone = true));
  try {
    await poll(
      async () => {
        if (gone) throw new Error(`the embedded server exited before listening:\n${logs.slice(-30).join('\n')}`);
        return (await fetch(`${url}/ok`).catch(() => undefined))?.ok ? true : undefined;
      },
      90_000,
      100,
    );
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    url,
    child,
    logs,
    exited,
    async kill() {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
    async stop(graceMs = 15_000) {
      if (gone) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
