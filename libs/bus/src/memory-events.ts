import { UnavailableError } from '@agentloop/core';
import { assertRunId, END_EVENT } from './run-id.js';
import type { RunEventStream, RunEventSubscribeOptions, StoredRunEvent } from './types.js';

export interface MemoryRunEventStreamOptions {
  /** Events kept per run; the oldest are dropped beyond it (default 10 000). */
  maxEventsPerRun?: number;
  /** A run's log is dropped this long after its last event (default 24 h). */
  maxAgeMs?: number;
}

interface RunLog {
  events: StoredRunEvent[];
  lastTs: number;
  /** Wakes the subscribers waiting for the next event. */
  waiters: Set<() => void>;
}

/**
 * In-process RunEventStream for the embedded mode: a bounded log per run, ids
 * monotonic across all runs (like a JetStream stream sequence), replay after
 * `afterId` and a live tail.
 */
export class MemoryRunEventStream implements RunEventStream {
  private readonly runs = new Map<string, RunLog>();
  private readonly maxEvents: number;
  private readonly maxAgeMs: number;
  private seq = 0;
  private closed = false;
  private lastSweep = Date.now();
  private readonly closing = new AbortController();

  constructor(opts: MemoryRunEventStreamOptions = {}) {
    this.maxEvents = opts.maxEventsPerRun ?? 10_000;
    this.maxAgeMs = opts.maxAgeMs ?? 24 * 60 * 60 * 1000;
  }

  async publish(runId: string, _threadId: string, event: string, data: unknown): Promise<number> {
    if (this.closed) throw new UnavailableError('The run event stream is closed');
    assertRunId(runId);
    const now = Date.now();
    this.sweep(now);
    const log = this.log(runId);
    const stored: StoredRunEvent = { id: ++this.seq, runId, event, dataJson: JSON.stringify(data ?? null), tsMs: now };
    log.events.push(stored);
    if (log.events.length > this.maxEvents) log.events.splice(0, log.events.length - this.maxEvents);
    log.lastTs = now;
    for (const wake of log.waiters) wake();
    log.waiters.clear();
    return stored.id;
  }

  async *subscribe(runId: string, opts: RunEventSubscribeOptions = {}): AsyncGenerator<StoredRunEvent> {
    assertRunId(runId);
    let after = opts.afterId ?? 0;
    const signal = opts.signal;
    for (;;) {
      if (signal?.aborted || this.closed) return;
      const log = this.log(runId);
      const next = log.events.filter((e) => e.id > after);
      for (const e of next) {
        after = e.id;
        yield { ...e };
        if (e.event === END_EVENT) return;
        if (signal?.aborted || this.closed) return;
      }
      if (next.length > 0) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          log.waiters.delete(done);
          signal?.removeEventListener('abort', done);
          this.closing.signal.removeEventListener('abort', done);
          resolve();
        };
        log.waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
        this.closing.signal.addEventListener('abort', done, { once: true });
      });
    }
  }

  async purge(runId: string): Promise<void> {
    const log = this.runs.get(runId);
    if (!log) return;
    if (log.waiters.size === 0) this.runs.delete(runId);
    else log.events = [];
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
  }

  private log(runId: string): RunLog {
    let log = this.runs.get(runId);
    if (!log) {
      log = { events: [], lastTs: Date.now(), waiters: new Set() };
      this.runs.set(runId, log);
    }
    return log;
  }

  /** Drops runs idle for longer than maxAgeMs (at most once a minute). */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, log] of this.runs) {
      if (now - log.lastTs > this.maxAgeMs && log.waiters.size === 0) this.runs.delete(id);
    }
  }
}
