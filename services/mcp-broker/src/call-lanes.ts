/**
 * How many calls one MCP server gets at once (issue 14): a server's tools share its state, and
 * reference servers such as server-memory lose writes when a turn's parallel calls reach them
 * together (each call reads the store, changes it and writes it back). So calls to one server are
 * serialized — `max_concurrent_calls` (default 1) at a time — except tools annotated read-only,
 * which cannot interfere and run at once. Per server, not per connection: a reconnect does not
 * reset the lane.
 */
export class CallLanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly limitOf: (server: string) => number) {}

  /** Runs `fn` when the server's lane has room (read-only calls: at once). */
  async run<T>(server: string, readOnly: boolean, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (readOnly) return fn();
    let lane = this.lanes.get(server);
    if (!lane) {
      lane = new Lane(Math.max(1, this.limitOf(server)));
      this.lanes.set(server, lane);
    }
    await lane.acquire(signal);
    try {
      return await fn();
    } finally {
      lane.release();
    }
  }

  /** Calls waiting for a lane, by server (status). */
  waiting(server: string): number {
    return this.lanes.get(server)?.queued ?? 0;
  }
}

class Lane {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  get queued(): number {
    return this.queue.length;
  }

  acquire(signal?: AbortSignal): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort);
        this.active++;
        resolve();
      };
      const onAbort = () => {
        const i = this.queue.indexOf(grant);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal?.reason instanceof Error ? signal.reason : new Error('aborted while waiting for the server'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(grant);
    });
  }

  release(): void {
    this.active--;
    this.queue.shift()?.();
  }
}
