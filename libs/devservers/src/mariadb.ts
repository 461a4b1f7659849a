/**
 * A throwaway MariaDB for tests and `npm run start:cluster`.
 *
 * With a reachable Docker engine it runs `mariadb:10.11` through testcontainers;
 * otherwise it runs the local `mariadbd` binary on a free loopback port with a
 * fresh data dir. The data dir is copied from a template initialised once per
 * machine (by `mariadb-install-db`), so a start costs one `cp` of ~26 MB plus
 * the server boot: measured ~0.2–0.3 s warm and ~1.7 s cold (template build) on a
 * 2-core VM; restart ~0.15 s, stop ~0.04 s.
 *
 * Root has an empty password; the server listens on 127.0.0.1 only.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, rmSync, statSync } from 'node:fs';
import { cp, mkdtemp, mkdir, readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentLoopError, UnavailableError, errorMessage, silentLogger, sleep, type Logger } from '@agentloop/core';
import { findBinary, freePort, useDocker, type DevServerMode } from './ports.js';
import type { DevServer } from './types.js';

export interface MariaDbServerOptions {
  /** Database created once the server is up (default `agentloop`); it is the path of `url`. */
  database?: string;
  /** Host port to listen on (default: a free port). */
  port?: number;
  /**
   * `auto` (default, or `DEVSERVERS_MODE`): a container when a Docker engine is
   * reachable (DOCKER_HOST set or /var/run/docker.sock answers), the local
   * binary otherwise. `docker` / `binary` force one.
   */
  mode?: DevServerMode;
  /** Container image (default `mariadb:10.11`). */
  image?: string;
  /** Path of `mariadbd` (default: `mariadbd` on PATH or in /usr/sbin, /usr/local/sbin). */
  binary?: string;
  /** Keep the data dir on stop() (binary mode); its path is logged. */
  keepData?: boolean;
  /** Give up when the server does not accept connections within this time (default 60 s). */
  startTimeoutMs?: number;
  logger?: Logger;
}

const DEFAULT_IMAGE = 'mariadb:10.11';
const STOP_GRACE_MS = 10_000;

/** Starts MariaDB and resolves once it accepts connections and `database` exists. */
export async function startMariaDb(opts: MariaDbServerOptions = {}): Promise<DevServer> {
  return (await useDocker(opts.mode)) ? startContainer(opts) : startBinary(opts);
}

// ---------------------------------------------------------------------------
// Shared helpers

function checkDatabaseName(name: string): string {
  if (!/^[A-Za-z0-9_]{1,64}$/.test(name)) {
    throw new AgentLoopError('INVALID_ARGUMENT', `Invalid MariaDB database name "${name}": use letters, digits and _ only`);
  }
  return name;
}

/**
 * Polls until the server accepts a connection, then creates the database.
 * `aborted` reports why waiting is pointless (e.g. the process exited).
 */
async function waitReady(host: string, port: number, database: string, timeoutMs: number, aborted: () => string | undefined): Promise<void> {
  const { createConnection } = await import('mysql2/promise');
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const why = aborted();
    if (why) throw new UnavailableError(why, { cause: lastError });
    try {
      const conn = await createConnection({ host, port, user: 'root', connectTimeout: 2000 });
      try {
        await conn.query(`CREATE DATABASE IF NOT EXISTS \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
      } finally {
        await conn.end().catch(() => undefined);
      }
      return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new UnavailableError(`MariaDB on ${host}:${port} did not accept connections within ${timeoutMs} ms: ${errorMessage(lastError)}`, {
        cause: lastError,
      });
    }
    await sleep(40);
  }
}

function makeServer(url: string, port: number, stop: () => Promise<void>, restart: () => Promise<void>): DevServer {
  let stopped: Promise<void> | undefined;
  const stopOnce = () => (stopped ??= stop());
  return {
    url,
    port,
    stop: stopOnce,
    restart,
    [Symbol.asyncDispose]: stopOnce,
  };
}

// ---------------------------------------------------------------------------
// Container mode

async function startContainer(opts: MariaDbServerOptions): Promise<DevServer> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const database = checkDatabaseName(opts.database ?? 'agentloop');
  const hostPort = opts.port ?? (await freePort());
  const logger = opts.logger ?? silentLogger();
  // A fixed host port binding keeps the URL valid across restart().
  const container = await new GenericContainer(opts.image ?? DEFAULT_IMAGE)
    .withEnvironment({ MARIADB_ALLOW_EMPTY_ROOT_PASSWORD: '1', MARIADB_ROOT_HOST: '%', MARIADB_DATABASE: database })
    .withCommand(['--character-set-server=utf8mb4', '--collation-server=utf8mb4_unicode_ci', '--innodb-flush-log-at-trx-commit=2', '--skip-log-bin'])
    .withExposedPorts({ container: 3306, host: hostPort })
    .withTmpFs({ '/tmp': 'rw' })
    .withWaitStrategy(Wait.forLogMessage(/ready for connections/, 2))
    .withStartupTimeout(opts.startTimeoutMs ?? 120_000)
    .start();
  const host = container.getHost();
  const port = container.getMappedPort(3306);
  await waitReady(host, port, database, opts.startTimeoutMs ?? 60_000, () => undefined);
  logger.info({ port, image: opts.image ?? DEFAULT_IMAGE }, 'mariadb container started');
  return makeServer(
    `mysql://root@${host}:${port}/${database}`,
    port,
    async () => {
      await container.stop({ timeout: STOP_GRACE_MS });
    },
    async () => {
      await container.restart({ timeout: STOP_GRACE_MS });
      await waitReady(host, port, database, opts.startTimeoutMs ?? 60_000, () => undefined);
    },
  );
}

// ---------------------------------------------------------------------------
// Binary mode

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Server flags tuned for a small, fast, loopback-only test server. */
function serverArgs(dir: string, port: number): string[] {
  return [
    '--no-defaults', // must come first
    `--datadir=${path.join(dir, 'data')}`,
    `--socket=${path.join(dir, 'mariadb.sock')}`,
    `--pid-file=${path.join(dir, 'mariadb.pid')}`,
    `--log-error=${path.join(dir, 'mariadb.err')}`,
    `--tmpdir=${dir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    '--skip-name-resolve',
    '--skip-log-bin',
    '--character-set-server=utf8mb4',
    '--collation-server=utf8mb4_unicode_ci',
    '--innodb-buffer-pool-size=64M',
    '--innodb-log-file-size=8M',
    // Commit to the OS cache, not the disk: survives a killed server (restart tests), not a killed machine.
    '--innodb-flush-log-at-trx-commit=2',
    '--innodb-doublewrite=0',
    '--max-connections=500',
    ...(isRoot() ? ['--user=root'] : []),
  ];
}

/** Same InnoDB geometry as the server, so it starts without resizing the redo log. */
function installArgs(datadir: string): string[] {
  return [
    '--no-defaults',
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve',
    `--datadir=${datadir}`,
    `--user=${os.userInfo().username}`,
    '--innodb-log-file-size=8M',
    '--innodb-buffer-pool-size=32M',
  ];
}

/**
 * A fully initialised data dir, built once per machine and binary version and
 * then copied: `mariadb-install-db` costs ~0.8–1 s, a copy ~0.1 s. Built in a
 * private dir and renamed into place, so concurrent first starts are safe.
 */
async function templateDataDir(mariadbd: string, installDb: string): Promise<string> {
  const st = statSync(mariadbd);
  const key = createHash('sha256')
    .update([mariadbd, st.size, st.mtimeMs, installDb, ...installArgs('')].join('\0'))
    .update(String(process.getuid?.() ?? ''))
    .digest('hex')
    .slice(0, 16);
  const template = path.join(os.tmpdir(), `agentloop-mariadb-template-${key}`);
  if (existsSync(path.join(template, 'data', 'mysql'))) return template;
  const building = await mkdtemp(path.join(os.tmpdir(), 'agentloop-mariadb-building-'));
  try {
    const res = spawnSync(installDb, installArgs(path.join(building, 'data')), { encoding: 'utf8', timeout: 120_000 });
    if (res.status !== 0) {
      throw new AgentLoopError(
        'INTERNAL',
        `mariadb-install-db failed (exit ${res.status ?? res.signal}): ${(res.stderr || res.stdout || errorMessage(res.error)).slice(-2000)}`,
      );
    }
    try {
      await rename(building, template);
    } catch (err) {
      // Another process won the race: its template is as good as ours.
      if (!existsSync(path.join(template, 'data', 'mysql'))) throw err;
    }
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return template;
}

async function tailOfLog(file: string): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return (
      text
        .split('\n')
        .filter((l) => l.includes('[ERROR]') || l.includes('Aborting'))
        .slice(-8)
        .join('\n') || text.slice(-1500)
    );
  } catch {
    return '(no error log)';
  }
}

async function startBinary(opts: MariaDbServerOptions): Promise<DevServer> {
  const mariadbd = findBinary(opts.binary ?? 'mariadbd');
  if (!mariadbd) {
    throw new UnavailableError(
      `MariaDB server binary not found (${opts.binary ?? '/usr/sbin/mariadbd or mariadbd on PATH'}). Install it (Debian/Ubuntu: apt-get install mariadb-server), start a Docker engine, or set MYSQL_URL to an existing server.`,
    );
  }
  const installDb =
    findBinary(path.join(path.dirname(mariadbd), '..', 'bin', 'mariadb-install-db')) ?? findBinary('mariadb-install-db') ?? findBinary('mysql_install_db');
  if (!installDb) {
    throw new UnavailableError(
      'mariadb-install-db not found next to mariadbd; it is needed to initialise a data dir (Debian/Ubuntu: apt-get install mariadb-server).',
    );
  }
  const database = checkDatabaseName(opts.database ?? 'agentloop');
  const logger = opts.logger ?? silentLogger();
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  const started = Date.now();

  const template = await templateDataDir(mariadbd, installDb);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agentloop-mariadb-'));
  let child: ChildProcess | undefined;
  let port = opts.port ?? 0;
  let stopped = false;

  const removeDir = () => {
    if (!opts.keepData) rmSync(dir, { recursive: true, force: true });
  };
  // A crashed or interrupted test run must not leave servers behind.
  const onExit = () => {
    child?.kill('SIGKILL');
    removeDir();
  };
  process.once('exit', onExit);

  const launch = async (): Promise<void> => {
    const proc = spawn(mariadbd, serverArgs(dir, port), { stdio: 'ignore' });
    child = proc;
    let exited: string | undefined;
    proc.once('error', (err) => (exited = `could not run ${mariadbd}: ${err.message}`));
    proc.once('exit', (code, signal) => (exited ??= `mariadbd exited early (${signal ?? `code ${code}`})`));
    try {
      await waitReady('127.0.0.1', port, database, timeoutMs, () => exited);
    } catch (err) {
      proc.kill('SIGKILL');
      const log = await tailOfLog(path.join(dir, 'mariadb.err'));
      throw new UnavailableError(`${errorMessage(err)}\n${log}`, { cause: err });
    }
  };

  const terminate = async (): Promise<void> => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), STOP_GRACE_MS);
    await gone;
    clearTimeout(timer);
  };

  try {
    await mkdir(path.join(dir, 'data'));
    await cp(path.join(template, 'data'), path.join(dir, 'data'), { recursive: true });
    // A fixed port is used as given; a picked one may be taken in the meantime, so retry with another.
    for (let attempt = 1; ; attempt++) {
      if (!opts.port) port = await freePort();
      try {
        await launch();
        break;
      } catch (err) {
        const inUse = /Address already in use|Do you already have another/i.test(errorMessage(err));
        if (opts.port || !inUse || attempt >= 3) throw err;
      }
    }
  } catch (err) {
    process.off('exit', onExit);
    await terminate();
    removeDir();
    throw err;
  }

  logger.info({ port, dir, ms: Date.now() - started }, 'mariadb started');
  return makeServer(
    `mysql://root@127.0.0.1:${port}/${database}`,
    port,
    async () => {
      stopped = true;
      await terminate();
      process.off('exit', onExit);
      if (opts.keepData) logger.info({ dir }, 'mariadb data kept');
      else await rm(dir, { recursive: true, force: true });
    },
    async () => {
      if (stopped) throw new AgentLoopError('INVALID_ARGUMENT', `MariaDB on port ${port} was stopped; it cannot be restarted`);
      await terminate();
      await launch();
    },
  );
}
