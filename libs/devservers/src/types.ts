/** A real server process (or container) started for tests or for `npm run start:cluster`. */
export interface DevServer extends AsyncDisposable {
  /** Connection URL, e.g. nats://127.0.0.1:41234, redis://127.0.0.1:41235, mysql://root@127.0.0.1:41236/agentloop */
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGTERM, then SIGKILL) and removes its temp dir unless `keepData`. */
  stop(): Promise<void>;
  /** Stops and starts the server again on the same port with the same data dir. */
  restart(): Promise<void>;
}
