import path from 'node:path';
import type { DevServer } from './types.js';
import { probeTcp, startBinaryServer, startContainerServer, useDocker, type DevServerMode } from './ports.js';

export interface NatsServerOptions {
  /** Enable JetStream (default true); its store lives in the server's data dir. */
  jetstream?: boolean;
  /** `docker` (testcontainers, image nats:2), `binary` (local nats-server) or `auto` (default; env DEVSERVERS_MODE). */
  mode?: DevServerMode;
  /** Binary mode: keep data here instead of a fresh temp dir (never removed). */
  dataDir?: string;
  /** Binary mode: keep the temp dir on stop. */
  keepData?: boolean;
  /** Listen on this port instead of a free one. */
  port?: number;
}

const MISSING = 'nats-server not found: install it (apt-get install nats-server) or set NATS_URL';

/** Ready once a client connection receives the server's `INFO {...}` line. */
const natsReady = (host: string, port: number) => probeTcp(host, port, (s) => /^INFO \{.*\}\s*\r\n/.test(s));

/**
 * Starts a NATS server for tests or a local cluster: a container when a Docker
 * engine is reachable, otherwise the local `nats-server` binary on a free port.
 */
export async function startNats(opts: NatsServerOptions = {}): Promise<DevServer> {
  const jetstream = opts.jetstream ?? true;
  const url = (host: string, port: number) => `nats://${host}:${port}`;
  if (await useDocker(opts.mode)) {
    return startContainerServer({
      image: 'nats:2',
      containerPort: 4222,
      command: jetstream ? ['-js', '-sd', '/data'] : [],
      ready: natsReady,
      url,
      ...(opts.port !== undefined ? { port: opts.port } : {}),
    });
  }
  return startBinaryServer({
    binary: 'nats-server',
    missing: MISSING,
    args: (port, dir) => [
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-n',
      `agentloop-dev-${port}`,
      ...(jetstream ? ['-js', '-sd', path.join(dir, 'jetstream')] : []),
    ],
    ready: natsReady,
    url,
    ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : {}),
    ...(opts.keepData !== undefined ? { keepData: opts.keepData } : {}),
    ...(opts.port !== undefined ? { port: opts.port } : {}),
  });
}
