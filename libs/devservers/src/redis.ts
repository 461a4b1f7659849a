import type { DevServer } from './types.js';
import { probeTcp, startBinaryServer, startContainerServer, useDocker, type DevServerMode } from './ports.js';

export interface RedisServerOptions {
  /** `docker` (testcontainers, image redis:7), `binary` (local redis-server) or `auto` (default; env DEVSERVERS_MODE). */
  mode?: DevServerMode;
  /** Binary mode: keep data here instead of a fresh temp dir (never removed). */
  dataDir?: string;
  /** Binary mode: keep the temp dir on stop. */
  keepData?: boolean;
  /** Listen on this port instead of a free one. */
  port?: number;
}

const MISSING = 'redis-server not found: install it (apt-get install redis-server) or set REDIS_URL';

const redisReady = (host: string, port: number) => probeTcp(host, port, (s) => s.startsWith('+PONG'), 'PING\r\n');

/** RESP-encodes one command. */
const resp = (...args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;

/**
 * Starts a Redis server for tests or a local cluster: a container when a Docker
 * engine is reachable, otherwise the local `redis-server` binary on a free port.
 * Snapshots and the AOF are off (`--save '' --appendonly no`); `restart()`
 * writes one snapshot just before stopping so the data survives it.
 */
export async function startRedis(opts: RedisServerOptions = {}): Promise<DevServer> {
  const url = (host: string, port: number) => `redis://${host}:${port}`;
  if (await useDocker(opts.mode)) {
    return startContainerServer({
      image: 'redis:7',
      containerPort: 6379,
      command: ['redis-server', '--save', '', '--appendonly', 'no'],
      ready: redisReady,
      url,
      // The container is restarted with SIGTERM, which does not save when `save` is off.
      beforeRestart: async (host, port) => {
        const ok = await probeTcp(host, port, (s) => s.startsWith('+OK') || s.startsWith('-'), resp('SAVE'), 30_000);
        if (!ok) throw new Error(`redis on ${host}:${port} did not answer SAVE before the restart`);
      },
      ...(opts.port !== undefined ? { port: opts.port } : {}),
    });
  }
  return startBinaryServer({
    binary: 'redis-server',
    missing: MISSING,
    args: (port, dir) => [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--dbfilename',
      'dump.rdb',
      '--save',
      '',
      '--appendonly',
      'no',
      '--protected-mode',
      'no',
      '--daemonize',
      'no',
    ],
    ready: redisReady,
    url,
    // SHUTDOWN SAVE writes dump.rdb and exits; the next start loads it from the same dir.
    shutdownForRestart: async (host, port) => {
      await probeTcp(host, port, () => false, resp('SHUTDOWN', 'SAVE'), 30_000).catch(() => false);
    },
    ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
    ...(opts.keepData !== undefined ? { keepData: opts.keepData } : {}),
    ...(opts.port !== undefined ? { port: opts.port } : {}),
  });
}
