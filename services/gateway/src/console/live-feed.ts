import { errorMessage, type Logger } from '@agentloop/core';
import { TERMINAL_RUN_STATUSES, type RunRecord, type Store } from '@agentloop/store';
import { threadApprovals, type PendingApproval } from './pending-approvals.js';

/** What the console is told, as SSE events of the same names. */
export type ConsoleChange =
  | { type: 'run'; tenant_id: string; run: { run_id: string; thread_id: string; assistant_id: string; status: string; updated_at: string } }
  | { type: 'approval_pending'; tenant_id: string; approvals: PendingApproval[] }
  | { type: 'approval_answered'; tenant_id: string; thread_id: string; run_id: string };

type Listener = { tenantId: string | undefined; send: (c: ConsoleChange) => void };

export interface ConsoleFeedOptions {
  store: Store;
  logger: Logger;
  /** How often the runs table is read while a console listens (default 1000 ms). */
  pollMs?: number;
}

/** Changes are read again this far back: two writers' clocks and commit order may differ by that much. */
const OVERLAP_MS = 2_000;
const BATCH = 500;

/**
 * The console's live updates (`GET /console/events`). The store is the one place every replica and
 * both modes record run status and pending approvals (an interrupted thread), so the feed reads it:
 * one query for the runs changed since its last look, once a second, and only while at least one
 * console listens. (The run event stream was the other candidate: it carries every step's full
 * state, which each gateway would have to take in for every run of every tenant.)
 */
export class ConsoleFeed {
  private readonly listeners = new Set<Listener>();
  /** run id → `status|updated_at` last reported, for the overlap window's re-reads. */
  private readonly seen = new Map<string, { key: string; at: number }>();
  private timer: NodeJS.Timeout | undefined;
  private since = 0;
  private polling: Promise<void> | undefined;
  private readonly pollMs: number;
  private readonly log: Logger;

  constructor(private readonly opts: ConsoleFeedOptions) {
    this.pollMs = opts.pollMs ?? 1_000;
    this.log = opts.logger.child({ component: 'console-feed' });
  }

  /** Adds a listener for one tenant's changes (`undefined`: every tenant's); returns its removal. */
  listen(tenantId: string | undefined, send: (c: ConsoleChange) => void): () => void {
    const l: Listener = { tenantId, send };
    this.listeners.add(l);
    if (!this.timer) {
      this.since = Date.now();
      this.timer = setInterval(() => void this.tick(), this.pollMs);
      this.timer.unref();
    }
    return () => {
      this.listeners.delete(l);
      if (this.listeners.size === 0) this.stop();
    };
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.seen.clear();
  }

  /** One look at the store (exposed for tests; ticks never overlap). */
  tick(): Promise<void> {
    this.polling ??= this.poll()
      .catch((err: unknown) => this.log.warn({ err: errorMessage(err) }, 'console feed: reading the changed runs failed'))
      .finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async poll(): Promise<void> {
    const runs = await this.opts.store.listRunsChangedSince(this.since - OVERLAP_MS, BATCH);
    for (const run of runs) {
      const at = run.updatedAt.getTime();
      this.since = Math.max(this.since, at);
      const key = `${run.status}|${at}`;
      const before = this.seen.get(run.runId);
      if (before?.key === key) continue;
      this.seen.set(run.runId, { key, at });
      await this.report(run, before === undefined ? undefined : before.key.split('|')[0]);
    }
    for (const [id, s] of this.seen) if (s.at < this.since - 2 * OVERLAP_MS) this.seen.delete(id);
  }

  private async report(run: RunRecord, previousStatus: string | undefined): Promise<void> {
    const tenant = run.tenantId;
    this.emit(tenant, {
      type: 'run',
      tenant_id: tenant,
      run: { run_id: run.runId, thread_id: run.threadId, assistant_id: run.assistantId, status: run.status, updated_at: run.updatedAt.toISOString() },
    });
    const command = run.kwargs.command as { resume?: unknown } | undefined;
    // A resume is the answer: reported when its run first shows up, whatever status it has reached by then.
    if (previousStatus === undefined && command?.resume !== undefined) {
      this.emit(tenant, { type: 'approval_answered', tenant_id: tenant, thread_id: run.threadId, run_id: run.runId });
    }
    if (TERMINAL_RUN_STATUSES.includes(run.status)) {
      const thread = await this.opts.store.getThread(tenant, run.threadId);
      const approvals = thread ? threadApprovals(thread, run) : [];
      if (approvals.length > 0) this.emit(tenant, { type: 'approval_pending', tenant_id: tenant, approvals });
    }
  }

  private emit(tenantId: string, change: ConsoleChange): void {
    for (const l of this.listeners) {
      if (l.tenantId !== undefined && l.tenantId !== tenantId) continue;
      try {
        l.send(change);
      } catch (err) {
        this.log.warn({ err: errorMessage(err) }, 'console feed: a listener failed');
      }
    }
  }
}
