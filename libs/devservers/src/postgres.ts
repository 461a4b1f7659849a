/**
 * A throwaway PostgreSQL for tests and benchmarks, from the local binaries
 * (Debian: /usr/lib/postgresql/<major>/bin). Each start runs `initdb` into a
 * fresh temp dir (trust auth, superuser `postgres`, ~0.8 s with --no-sync on a
 * 2-core VM), then `postgres` on a free 127.0.0.1 port with its unix socket in
 * the same temp dir, waits for `pg_isready` and creates the database.
 *
 * PostgreSQL refuses to run as root: when we are root, initdb and the server
 * run as the `postgres` OS user (or `osUser`) through `setpriv`, which execs in
 * place, so the pid we hold is the postmaster's own.
 *
 * Durability matches the MariaDB dev server (innodb-flush-log-at-trx-commit=2,
 * doublewrite off): `fsync=off` and `full_page_writes=off`, so a commit reaches
 * the OS cache and survives a killed server, not a killed machine.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentLoopError, UnavailableError, errorMessage, silentLogger, sleep, type Logger } from '@agentloop/core';
import { findBinary, freePort, spawnServer, stopProcess, waitUntil, type ServerProcess } from './ports.js';
import type { DevServer } from './types.js';

export interface PostgresServerOptions {
  /** Database created once the server is up (default `agentloop`); it is the path of `url`. */
  database?: string;
  /** Port to listen on (default: a free port). */
  port?: number;
  /**
   * Directory holding `initdb`, `postgres`, `pg_isready` and `createdb`.
   * Default: `PG_BINDIR`, else the newest /usr/lib/postgresql/<major>/bin,
   * else the directory of `postgres` on PATH.
   */
  binDir?: string;
  /** OS user that runs initdb and the server when this process is root (default `postgres`). */
  osUser?: string;
  /** Extra server settings, passed as `-c name=value` (e.g. `{ shared_buffers: '256MB' }`). */
  settings?: Record<string, string | number>;
  /** Keep the data dir on stop(); its path is logged. */
  keepData?: boolean;
  /** Give up when the server does not accept connections within this time (default 60 s). */
  startTimeoutMs?: number;
  logger?: Logger;
}

const SUPERUSER = 'postgres';
const STOP_GRACE_MS = 5_000;
const TOOLS = ['initdb', 'postgres', 'pg_isready', 'createdb'] as const;
type Tool = (typeof TOOLS)[number];

/** Settings for a small, fast, loopback-only server; `settings` override them. */
const DEFAULT_SETTINGS: Record<string, string | number> = {
  fsync: 'off',
  full_page_writes: 'off',
  max_connections: 200,
  shared_buffers: '128MB',
  log_min_messages: 'warning',
};

function checkDatabaseName(name: string): string {
  if (!/^[A-Za-z0-9_]{1,63}$/.test(name)) {
    throw new AgentLoopError('INVALID_ARGUMENT', `Invalid PostgreSQL database name "${name}": use letters, digits and _ only (at most 63)`);
  }
  return name;
}

/** The newest /usr/lib/postgresql/<major>/bin holding a `postgres` binary (Debian/Ubuntu layout). */
function debianBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  let majors: string[];
  try {
    majors = readdirSync(root);
  } catch {
    return undefined;
  }
  return majors
    .filter((m) => /^\d+(\.\d+)?$/.test(m) && existsSync(path.join(root, m, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a))
    .map((m) => path.join(root, m, 'bin'))[0];
}

function resolveTools(binDir: string | undefined): Record<Tool, string> {
  const dir = binDir ?? process.env.PG_BINDIR ?? debianBinDir() ?? (findBinary('postgres') ? path.dirname(findBinary('postgres')!) : undefined);
  const where = dir ?? '/usr/lib/postgresql/<major>/bin or PATH';
  const tools = {} as Record<Tool, string>;
  for (const tool of TOOLS) {
    const found = dir ? findBinary(path.join(dir, tool)) : undefined;
    if (!found) {
      throw new UnavailableError(
        `PostgreSQL binary "${tool}" not found in ${where}. Install the server (Debian/Ubuntu: apt-get install postgresql), pass binDir, or set PG_BINDIR.`,
      );
    }
    tools[tool] = found;
  }
  return tools;
}

interface RunAs {
  uid: number;
  gid: number;
  name: string;
}

/** The non-root user to run as when we are root; undefined when we are not root. */
function runAsUser(name: string): RunAs | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    // handled below
  }
  const line = passwd.split('\n').find((l) => l.split(':')[0] === name);
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined || Number(uid) === 0) {
    throw new UnavailableError(
      `PostgreSQL refuses to run as root and OS user "${name}" does not exist (or is root). Create it (apt-get install postgresql creates "postgres") or pass osUser with an existing non-root user.`,
    );
  }
  return { uid: Number(uid), gid: Number(gid), name };
}

/** Argv that runs `binary` as `user` in place (same pid), or as ourselves. */
function asUser(user: RunAs | undefined, binary: string, args: string[]): [string, string[]] {
  if (!user) return [binary, args];
  const setpriv = findBinary('setpriv');
  if (!setpriv) throw new UnavailableError('setpriv (util-linux) is needed to run PostgreSQL as a non-root user when running as root; install util-linux.');
  return [setpriv, [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', binary, ...args]];
}

function execTool(file: string, args: string[], timeoutMs: number): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, output: `${stdout}${stderr}`.trim() || (err ? errorMessage(err) : '') });
    });
  });
}

/** Starts PostgreSQL and resolves once it accepts connections and `database` exists. */
export async function startPostgres(opts: PostgresServerOptions = {}): Promise<DevServer> {
  const database = checkDatabaseName(opts.database ?? 'agentloop');
  const tools = resolveTools(opts.binDir);
  const user = runAsUser(opts.osUser ?? SUPERUSER);
  const logger = opts.logger ?? silentLogger();
  const timeoutMs = opts.startTimeoutMs ?? 60_000;
  const started = Date.now();

  const dir = await mkdtemp(path.join(os.tmpdir(), 'agentloop-postgres-'));
  const dataDir = path.join(dir, 'data');
  const removeDir = () => {
    if (!opts.keepData) rmSync(dir, { recursive: true, force: true });
  };
  // A crashed run must not leave the temp dir behind (the server itself is killed by ports.ts).
  process.once('exit', removeDir);
  let port = opts.port ?? 0;
  let proc: ServerProcess | undefined;
  let stopped: Promise<void> | undefined;

  const launch = async (): Promise<void> => {
    const settings = { ...DEFAULT_SETTINGS, ...opts.settings };
    const args = ['-D', dataDir, '-p', String(port), '-h', '127.0.0.1', '-k', dir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
    const [file, argv] = asUser(user, tools.postgres, args);
    const p = spawnServer(file, argv, { cwd: dir, name: 'postgres' });
    proc = p;
    try {
      await waitUntil(
        `postgres on port ${port}`,
        async () => (await execTool(tools.pg_isready, ['-q', '-h', '127.0.0.1', '-p', String(port), '-U', SUPERUSER, '-d', 'postgres'], 5_000)).code === 0,
        { timeoutMs, intervalMs: 30, abort: p.failed },
      );
    } catch (err) {
      await stopProcess(p, 1_000);
      throw new UnavailableError(`PostgreSQL did not start on 127.0.0.1:${port}: ${errorMessage(err)}\n${p.output().slice(-1500)}`, { cause: err });
    }
  };

  const terminate = async (): Promise<void> => {
    const p = proc;
    proc = undefined;
    if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
    // SIGINT is the "fast" shutdown: SIGTERM ("smart") would wait for every client to disconnect.
    p.child.kill('SIGINT');
    await Promise.race([p.exited, sleep(STOP_GRACE_MS)]);
    await stopProcess(p, 1_000);
  };

  try {
    if (user) chownSync(dir, user.uid, user.gid);
    const [initFile, initArgs] = asUser(user, tools.initdb, [
      '-D',
      dataDir,
      '-A',
      'trust',
      '-U',
      SUPERUSER,
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
      '--no-instructions',
    ]);
    const init = spawnSync(initFile, initArgs, { encoding: 'utf8', timeout: 120_000, cwd: dir, env: { ...process.env, LC_ALL: 'C' } });
    if (init.status !== 0) {
      throw new AgentLoopError(
        'INTERNAL',
        `initdb failed (exit ${init.status ?? init.signal}): ${(init.stderr || init.stdout || errorMessage(init.error)).slice(-2000)}`,
      );
    }
    // A fixed port is used as given; a picked one may be taken in the meantime, so retry with another.
    for (let attempt = 1; ; attempt++) {
      if (!opts.port) port = await freePort();
      try {
        await launch();
        break;
      } catch (err) {
        const inUse = /could not bind|Address already in use|could not create any TCP\/IP sockets/i.test(errorMessage(err));
        if (opts.port || !inUse || attempt >= 3) throw err;
      }
    }
    if (database !== 'postgres') {
      const res = await execTool(tools.createdb, ['-h', '127.0.0.1', '-p', String(port), '-U', SUPERUSER, '-E', 'UTF8', database], 30_000);
      if (res.code !== 0) throw new AgentLoopError('INTERNAL', `createdb ${database} failed: ${res.output}`);
    }
  } catch (err) {
    await terminate();
    process.off('exit', removeDir);
    removeDir();
    throw err;
  }

  logger.info({ port, dir, ms: Date.now() - started }, 'postgres started');
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await terminate();
      process.off('exit', removeDir);
      if (opts.keepData) logger.info({ dir }, 'postgres data kept');
      else await rm(dir, { recursive: true, force: true });
    })());
  return {
    url: `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`,
    port,
    stop,
    async restart(): Promise<void> {
      if (stopped) throw new AgentLoopError('INVALID_ARGUMENT', `PostgreSQL on port ${port} was stopped; it cannot be restarted`);
      await terminate();
      await launch();
    },
    [Symbol.asyncDispose]: stop,
  };
}
