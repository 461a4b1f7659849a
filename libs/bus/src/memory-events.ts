import { UnavailableError } from '@agentloop/core';
import { assertRunId, END_EVENT } from './run-id.js';
import type { RunEndWatch, RunEndWatchResult, RunEventStream, RunEventSubscribeOptions, StoredRunEvent } from './types.js';

export interface MemoryRunEventStreamOptions {
  /** Events kept per run; the oldest are dropped beyond it (default 10 000). */
  maxEventsPerRun?: number;
  /** A run's log is dropped this long after its last event (default 24 h). */
  maxAgeMs?: number;
  /**
   * Bytes of event data kept for all runs together (default 64 MiB). Past it the logs of ended
   * runs go first (least recently active first), then the oldest events of runs still going —
   * never a run's latest event, which its live subscribers have yet to read. A values event
   * carries the whole state, so without this bound a tenant sending large messages fills the
   * process's memory for the whole retention period (issue 18).
   */
  maxBytes?: number;
}

/** MemoryRunEventStream's default byte budget (see maxBytes). */
export const DEFAULT_EVENT_STREAM_MAX_BYTES = 64 * 1024 * 1024;

interface RunLog {
  events: StoredRunEvent[];
  /** Sum of the kept events' sizes (see eventBytes). */
  bytes: number;
  ended: boolean;
  /** The data of the run's latest `error` event: what an end watch reports with the end. */
  errorJson: string | undefined;
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
  private readonly maxBytes: number;
  /** Sum of every log's bytes. */
  private bytes = 0;
  private seq = 0;
  private closed = false;
  private lastSweep = Date.now();
  private readonly closing = new AbortController();
  /** Live end watches by run (watchEnd); kept apart from the logs, which purge and eviction drop. */
  private readonly endWatches = new Map<string, Set<(r: RunEndWatchResult) => void>>();

  constructor(opts: MemoryRunEventStreamOptions = {}) {
    this.maxEvents = opts.maxEventsPerRun ?? 10_000;
    this.maxAgeMs = opts.maxAgeMs ?? 24 * 60 * 60 * 1000;
    this.maxBytes = opts.maxBytes ?? DEFAULT_EVENT_STREAM_MAX_BYTES;
  }

  /** Bytes of event data kept now (for tests and metrics). */
  get retainedBytes(): number {
    return this.bytes;
  }

  async publish(runId: string, threadId: string, event: string, data: unknown): Promise<number> {
    return this.publishJson(runId, threadId, event, JSON.stringify(data ?? null));
  }

  /** publish() with the data already JSON text (a PortRunEventStream serializes it in its own thread). */
  async publishJson(runId: string, _threadId: string, event: string, dataJson: string): Promise<number> {
    if (this.closed) throw new UnavailableError('The run event stream is closed');
    assertRunId(runId);
    const now = Date.now();
    this.sweep(now);
    const log = this.log(runId);
    const stored: StoredRunEvent = { id: ++this.seq, runId, event, dataJson, tsMs: now };
    log.events.push(stored);
    this.account(log, eventBytes(stored));
    if (event === 'error') log.errorJson = dataJson;
    if (event === END_EVENT) log.ended = true;
    if (log.events.length > this.maxEvents) this.dropOldest(log, log.events.length - this.maxEvents);
    log.lastTs = now;
    if (this.bytes > this.maxBytes) this.evict(runId);
    for (const wake of log.waiters) wake();
    log.waiters.clear();
    if (event === END_EVENT) this.endWatches.get(runId)?.forEach((settle) => settle(endOf(log)));
    return stored.id;
  }

  /**
   * The run's end without following its log: `runs.wait` learns that a run ended from the one
   * `end` event instead of being woken, and handed a copy, for each of the run's events (issue 9:
   * a 3-step run publishes a dozen). The log is in this process, so the watch is live at once
   * (`ready` already resolved) and an end already in the log is reported straight away, with the
   * latest `error` event the run published before it (kept apart from the events, so that also
   * when maxEventsPerRun or maxBytes dropped the event itself).
   */
  watchEnd(runId: string, signal: AbortSignal): RunEndWatch {
    assertRunId(runId);
    let settle: (r: RunEndWatchResult) => void = () => undefined;
    const done = new Promise<RunEndWatchResult>((resolve) => (settle = resolve));
    const ready = Promise.resolve();
    const log = this.runs.get(runId);
    if (signal.aborted) settle({ kind: 'aborted' });
    else if (this.closed) settle({ kind: 'lost' });
    else if (log?.ended) settle(endOf(log));
    else {
      let watches = this.endWatches.get(runId);
      if (!watches) this.endWatches.set(runId, (watches = new Set()));
      const set = watches;
      const onAbort = () => finish({ kind: 'aborted' });
      const onClose = () => finish({ kind: 'lost' });
      const finish = (r: RunEndWatchResult) => {
        if (!set.delete(finish)) return;
        if (set.size === 0 && this.endWatches.get(runId) === set) this.endWatches.delete(runId);
        signal.removeEventListener('abort', onAbort);
        this.closing.signal.removeEventListener('abort', onClose);
        settle(r);
      };
      set.add(finish);
      signal.addEventListener('abort', onAbort, { once: true });
      this.closing.signal.addEventListener('abort', onClose, { once: true });
      // Closing the watch settles nothing new: whoever closes it has stopped waiting on `done`.
      return { ready, done, close: () => void finish({ kind: 'aborted' }) };
    }
    return { ready, done, close: () => undefined };
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
    this.account(log, -log.bytes);
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
      log = { events: [], bytes: 0, ended: false, errorJson: undefined, lastTs: Date.now(), waiters: new Set() };
      this.runs.set(runId, log);
    }
    return log;
  }

  /** Drops runs idle for longer than maxAgeMs (at most once a minute). */
  private sweep(now: number): void {
    if (now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [id, log] of this.runs) {
      if (now - log.lastTs > this.maxAgeMs && log.waiters.size === 0) this.forget(id, log);
    }
  }

  private account(log: RunLog, delta: number): void {
    log.bytes += delta;
    this.bytes += delta;
  }

  private dropOldest(log: RunLog, count: number): void {
    for (const e of log.events.splice(0, count)) this.account(log, -eventBytes(e));
  }

  private forget(id: string, log: RunLog): void {
    this.account(log, -log.bytes);
    this.runs.delete(id);
  }

  /** Brings the kept bytes back under maxBytes (see MemoryRunEventStreamOptions.maxBytes). */
  private evict(publishing: string): void {
    // Map order is insertion order: older runs first. Ended runs without live readers go whole.
    const byActivity = [...this.runs].sort((a, b) => a[1].lastTs - b[1].lastTs);
    for (const [id, log] of byActivity) {
      if (this.bytes <= this.maxBytes) return;
      if (log.ended && log.waiters.size === 0 && id !== publishing) this.forget(id, log);
    }
    // Then the oldest events of every run, keeping each run's latest event.
    for (const [, log] of byActivity) {
      while (this.bytes > this.maxBytes && log.events.length > 1) this.dropOldest(log, 1);
      if (this.bytes <= this.maxBytes) return;
    }
  }
}

const endOf = (log: RunLog): RunEndWatchResult => (log.errorJson !== undefined ? { kind: 'end', errorJson: log.errorJson } : { kind: 'end' });

/** What an event costs to keep: its data (UTF-16 code units, an upper bound of V8's one-byte strings) and a fixed overhead. */
const eventBytes = (e: StoredRunEvent): number => e.dataJson.length + e.event.length + 64;
