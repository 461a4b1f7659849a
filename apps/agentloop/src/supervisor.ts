import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { existsSync } from 'node:fs';

export const SERVICES = ['tool-runner', 'indexer', 'approval', 'skill-sandbox', 'mcp-broker', 'orchestrator', 'gateway'] as const;
export type ServiceName = (typeof SERVICES)[number];

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/**
 * How to start a service process: from its build (dist/main.js) when present
 * and `fromSource` is not forced, else from TypeScript sources through tsx
 * (tests, development) with the `@agentloop/source` export condition.
 */
export function serviceCommand(name: ServiceName, fromSource = false): { cmd: string; args: string[] } {
  const dist = path.join(repoRoot, 'services', name, 'dist', 'main.js');
  if (!fromSource && existsSync(dist)) return { cmd: process.execPath, args: [dist] };
  const src = path.join(repoRoot, 'services', name, 'src', 'main.ts');
  return { cmd: process.execPath, args: ['--conditions=@agentloop/source', '--import', 'tsx', src] };
}

export interface ServiceProcess {
  readonly name: ServiceName;
  readonly instance: number;
  readonly child: ChildProcess;
  /** Resolves with the exit code (or signal) when the process ends. */
  readonly exited: Promise<number | NodeJS.Signals | null>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface StartServiceOptions {
  env: NodeJS.ProcessEnv;
  instance?: number;
  fromSource?: boolean;
  /** Receives each output line, prefixed; defaults to the parent's stdout/stderr. */
  onLine?: (line: string) => void;
}

/** Spawns one service as its own OS process. */
export function startService(name: ServiceName, opts: StartServiceOptions): ServiceProcess {
  const { cmd, args } = serviceCommand(name, opts.fromSource);
  const instance = opts.instance ?? 1;
  const child = spawn(cmd, args, { cwd: repoRoot, env: { ...opts.env, SERVICE_INSTANCE: String(instance) }, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = `[${name}#${instance}] `;
  const sink = opts.onLine ?? ((l: string) => process.stdout.write(prefix + l + '\n'));
  for (const stream of [child.stdout, child.stderr]) {
    let buf = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (d: string) => {
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        sink(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
  }
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | NodeJS.Signals | null);
  return {
    name,
    instance,
    child,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
