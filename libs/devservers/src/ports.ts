/**
 * Shared plumbing for the dev servers: free ports, binary lookup, Docker
 * detection, readiness polling and child-process lifecycle. Only `freePort`
 * and `hasBinary` are part of the package's public index; the rest is used by
 * the server starters in this package.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants as fsConstants } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DevServer } from './types.js';

/** Asks the OS for a free TCP port on 127.0.0.1 (binds port 0, then releases it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const addr = srv.address();
      if (addr === null || typeof addr === 'string') {
        srv.close();
        reject(new Error('could not determine a free port'));
        return;
      }
      const { port } = addr;
      srv.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}

// Server binaries often live in sbin directories that are not on a regular user's PATH.
const EXTRA_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin', '/usr/local/bin', '/usr/bin'];

/** Absolute path of an executable found on PATH (or a usual sbin directory), or undefined. */
export function findBinary(name: string): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...EXTRA_DIRS].map((d) => path.join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, fsConstants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** True when an executable with this name is installed (PATH or a usual sbin directory). */
export function hasBinary(name: string): boolean {
  return findBinary(name) !== undefined;
}

export type DevServerMode = 'auto' | 'docker' | 'binary';

/** Pings the Docker engine on a unix socket (GET /_ping), false on any failure. */
function pingDockerSocket(socketPath: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.createConnection({ path: socketPath });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => done(false));
    sock.once('error', () => done(false));
    sock.once('connect', () => sock.write('GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n'));
    let buf = '';
    sock.on('data', (chunk: Buffer) => {
      buf += chunk.toString('latin1');
      if (buf.includes('\r\n')) done(/^HTTP\/1\.[01] 200/.test(buf));
    });
    sock.once('end', () => done(/^HTTP\/1\.[01] 200/.test(buf)));
  });
}

/**
 * Whether the starters should use testcontainers: `DEVSERVERS_MODE` (or the
 * `mode` option) forces a choice; in `auto`, Docker is used when DOCKER_HOST is
 * set or /var/run/docker.sock answers a ping.
 */
export async function useDocker(mode: DevServerMode | undefined): Promise<boolean> {
  const m = mode ?? (process.env.DEVSERVERS_MODE as DevServerMode | undefined) ?? 'auto';
  if (m === 'docker') return true;
  if (m === 'binary') return false;
  if (process.env.DOCKER_HOST) return true;
  return pingDockerSocket('/var/run/docker.sock', 1_000);
}

/** Polls `check` until it returns true; fails with the last error after timeoutMs or when `abort` rejects. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  opts: { timeoutMs: number; intervalMs?: number; abort?: Promise<never> },
): Promise<void> {
  const until = Date.now() + opts.timeoutMs;
  let last: unknown;
  let aborted: unknown;
  let isAborted = false;
  opts.abort?.catch((err: unknown) => {
    isAborted = true;
    aborted = err;
  });
  for (;;) {
    if (isAborted) throw aborted;
    try {
      if (await check()) return;
      last = undefined;
    } catch (err) {
      last = err;
    }
    if (isAborted) throw aborted;
    if (Date.now() >= until) {
      const why = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`${what} was not ready after ${opts.timeoutMs} ms${why}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}

/**
 * Opens a TCP connection, optionally writes `send`, and resolves true once the
 * bytes received satisfy `accept`. Rejects on connection errors.
 */
export function probeTcp(host: string, port: number, accept: (received: string) => boolean, send?: string, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection({ host, port });
    let buf = '';
    let settled = false;
    const finish = (ok: boolean, err?: Error) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      if (err) reject(err);
      else resolve(ok);
    };
    sock.setTimeout(timeoutMs, () => finish(false));
    sock.once('error', (err) => finish(false, err));
    sock.once('connect', () => {
      if (send !== undefined) sock.write(send);
    });
    sock.on('data', (chunk: Buffer) => {
      buf += chunk.toString('utf8');
      if (accept(buf)) finish(true);
    });
    sock.once('end', () => finish(accept(buf)));
  });
}

/** A spawned server process with the tail of its output kept for error messages. */
export interface ServerProcess {
  readonly child: ChildProcess;
  /** Resolves with the exit code (or the signal name) when the process ends. */
  readonly exited: Promise<number | string>;
  /** Rejects as soon as the process exits: race it against readiness checks. */
  readonly failed: Promise<never>;
  /** Last few KB of stdout+stderr. */
  output(): string;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test worker that dies must not leave servers behind.
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

/**
 * A killed test worker (SIGKILL, or a signal vitest sends) never runs 'exit'
 * hooks, which would orphan its servers. This tiny shell reads a pipe from us:
 * when we die the pipe closes, `read` returns, and it kills the server. It is
 * killed itself as soon as the server exits.
 */
function spawnWatchdog(pid: number): ChildProcess | undefined {
  try {
    const w = spawn('/bin/sh', ['-c', `read _; kill -KILL ${pid} 2>/dev/null`], { stdio: ['pipe', 'ignore', 'ignore'] });
    w.on('error', () => undefined);
    w.stdin?.on('error', () => undefined);
    // Neither the watchdog nor its pipe may keep the event loop alive.
    w.unref();
    (w.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    return w;
  } catch {
    return undefined;
  }
}

/** Spawns a server binary; stdout/stderr are captured (bounded), never inherited. */
export function spawnServer(binary: string, args: string[], opts: { cwd: string; name: string }): ServerProcess {
  installExitHook();
  const child = spawn(binary, args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const watchdog = child.pid === undefined ? undefined : spawnWatchdog(child.pid);
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-8_192);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | string>((resolve) => {
    child.once('error', (err) => {
      keep(Buffer.from(`\n${err.message}\n`));
      live.delete(child);
      resolve('spawn-error');
    });
    child.once('exit', (code, signal) => {
      live.delete(child);
      watchdog?.kill('SIGKILL');
      resolve(code ?? signal ?? 'unknown');
    });
  });
  const failed = exited.then((code): never => {
    throw new Error(`${opts.name} exited (${code}) before it was ready:\n${out.trim()}`);
  });
  failed.catch(() => undefined);
  return { child, exited, failed, output: () => out };
}

/** SIGTERM, then SIGKILL after graceMs; resolves when the process is gone. */
export async function stopProcess(p: ServerProcess, graceMs = 5_000): Promise<void> {
  const { child } = p;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, graceMs);
  });
  await Promise.race([p.exited, killed]);
  clearTimeout(timer);
  await p.exited;
}

const LOCALHOST = '127.0.0.1';

/** How to run one kind of server from its local binary. */
export interface BinaryServerSpec {
  /** Binary name, e.g. `nats-server`. */
  binary: string;
  /** Error message when the binary is missing. */
  missing: string;
  /** Command-line arguments for a server on `port` keeping its data in `dataDir`. */
  args(port: number, dataDir: string): string[];
  /** True once the server accepts clients on host:port. */
  ready(host: string, port: number): Promise<boolean>;
  url(host: string, port: number): string;
  /** Asks the server to shut down cleanly before a restart (e.g. redis `SHUTDOWN SAVE`). */
  shutdownForRestart?(host: string, port: number): Promise<void>;
  /** Use this data dir (kept on stop) instead of a fresh temp dir. */
  dataDir?: string;
  /** Keep the temp dir on stop. */
  keepData?: boolean;
  /** Listen on this port instead of a free one. */
  port?: number;
  startTimeoutMs?: number;
}

/**
 * Starts a server binary on a free port in a fresh temp dir and wraps it as a
 * DevServer. A bind race on the port (another process took it between
 * `freePort` and the server's bind) is retried with a new port.
 */
export async function startBinaryServer(spec: BinaryServerSpec): Promise<DevServer & { readonly dataDir: string }> {
  const bin = findBinary(spec.binary);
  if (!bin) throw new Error(spec.missing);
  const dir = spec.dataDir ?? (await mkdtemp(path.join(tmpdir(), `agentloop-${spec.binary}-`)));
  await mkdir(dir, { recursive: true });
  const removeDir = spec.dataDir === undefined && !spec.keepData;
  const timeoutMs = spec.startTimeoutMs ?? 20_000;

  const launch = async (port: number): Promise<ServerProcess> => {
    const p = spawnServer(bin, spec.args(port, dir), { cwd: dir, name: spec.binary });
    try {
      await waitUntil(`${spec.binary} on port ${port}`, () => spec.ready(LOCALHOST, port), { timeoutMs, abort: p.failed });
      return p;
    } catch (err) {
      await stopProcess(p, 1_000);
      throw err;
    }
  };

  let port = 0;
  let proc: ServerProcess | undefined;
  for (let attempt = 1; proc === undefined; attempt++) {
    port = spec.port ?? (await freePort());
    try {
      proc = await launch(port);
    } catch (err) {
      if (attempt >= 3 || spec.port !== undefined) {
        if (removeDir) await rm(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }

  let current: ServerProcess | undefined = proc;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    if (current) await stopProcess(current);
    current = undefined;
    if (removeDir) await rm(dir, { recursive: true, force: true });
  };
  return {
    url: spec.url(LOCALHOST, port),
    port,
    dataDir: dir,
    stop,
    async restart(): Promise<void> {
      if (stopped) throw new Error(`${spec.binary} on port ${port} was stopped; it cannot be restarted`);
      const p = current;
      current = undefined;
      if (p) {
        if (spec.shutdownForRestart) {
          await spec.shutdownForRestart(LOCALHOST, port).catch(() => undefined);
          await Promise.race([p.exited, new Promise((r) => setTimeout(r, 5_000))]);
        }
        await stopProcess(p);
      }
      current = await launch(port);
    },
    [Symbol.asyncDispose]: stop,
  };
}

/** How to run one kind of server as a container (testcontainers). */
export interface ContainerServerSpec {
  image: string;
  containerPort: number;
  command: string[];
  ready(host: string, port: number): Promise<boolean>;
  url(host: string, port: number): string;
  /** Runs before a restart (e.g. redis `SAVE`, so the data survives it). */
  beforeRestart?(host: string, port: number): Promise<void>;
  /** Publish on this host port instead of a free one. */
  port?: number;
  startTimeoutMs?: number;
}

/**
 * Starts a container whose port is published on a fixed free host port, so a
 * restart keeps the URL. The container's own filesystem holds the data, which
 * survives `restart()` (same container) and goes away on `stop()`.
 */
export async function startContainerServer(spec: ContainerServerSpec): Promise<DevServer> {
  const { GenericContainer } = await import('testcontainers');
  const port = spec.port ?? (await freePort());
  const container = await new GenericContainer(spec.image).withCommand(spec.command).withExposedPorts({ container: spec.containerPort, host: port }).start();
  const host = container.getHost();
  const timeoutMs = spec.startTimeoutMs ?? 30_000;
  const ready = () => waitUntil(`${spec.image} container on ${host}:${port}`, () => spec.ready(host, port), { timeoutMs });
  try {
    await ready();
  } catch (err) {
    await container.stop().catch(() => undefined);
    throw err;
  }
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await container.stop({ timeout: 5_000 });
  };
  return {
    url: spec.url(host, port),
    port,
    stop,
    async restart(): Promise<void> {
      if (stopped) throw new Error(`${spec.image} container was stopped; it cannot be restarted`);
      if (spec.beforeRestart) await spec.beforeRestart(host, port);
      await container.restart({ timeout: 5_000 });
      await ready();
    },
    [Symbol.asyncDispose]: stop,
  };
}
