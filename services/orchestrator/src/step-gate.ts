import { ReleaseJobError } from '@agentloop/queue';

/**
 * The CPU gate of one orchestrator process (issue 9, in-flight capacity; README "Capacity").
 *
 * An agent run alternates between CPU-bound work on this process's one event loop (LangGraph's
 * ticks, checkpoints, the effect ledger, tool calls, events) and waiting on its model — seconds
 * per call with a real provider, during which it needs nothing but a pending promise. So the
 * worker's two limits are separate:
 *
 * - `RUN_CONCURRENCY` (the queue worker's concurrency): runs in flight in this process, most of
 *   them waiting on a model. Thousands: what one of them costs while it waits is its memory.
 * - `RUN_STEP_CONCURRENCY` (this gate's slots): runs executing their CPU-bound part at once. A
 *   run holds a slot from its start until it ends, except while it waits on its model
 *   (`StepLease.idle`), so a run waiting on a model holds no slot.
 *
 * Back-pressure: when more runs are ready to compute than there are slots, they wait here, in
 * two classes — a run coming back from its model call goes before a run that has not started
 * (finishing runs that are under way keeps latency bounded instead of slowing every run down
 * equally) — and within a class, tenants take turns (round robin), so one tenant's burst cannot
 * make another tenant's run wait behind all of it. Tool calls stay inside the slot: the
 * tool-runner has no concurrency limit of its own, so the gate is what bounds them.
 */
export class StepGate {
  private inUse = 0;
  private readonly queues = { resume: new TenantTurns<Waiter>(), start: new TenantTurns<Waiter>() };

  /** @param slots runs computing at once (RUN_STEP_CONCURRENCY), at least 1 */
  constructor(readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`StepGate needs at least one slot, got ${slots}`);
  }

  /**
   * Waits for a slot for a run that starts (or resumes from the queue). Rejects with the signal's
   * reason when the worker gives up the job first (shutdown), and with ReleaseJobError when the
   * gate is drained while it waits, so the job goes back to the queue untouched.
   */
  async enter(tenantId: string, signal?: AbortSignal): Promise<StepLease> {
    await this.acquire('start', tenantId, signal);
    return new StepLease(this, tenantId);
  }

  /** Runs computing now (slots taken). */
  get busy(): number {
    return this.inUse;
  }

  /** Runs waiting for a slot, both classes. */
  get waiting(): number {
    return this.queues.resume.size + this.queues.start.size;
  }

  /**
   * Shutdown: runs that have not started yet are handed back to the queue (ReleaseJobError);
   * runs under way keep their turn, so each reaches its next checkpoint.
   */
  drain(): void {
    for (let w = this.queues.start.shift(); w; w = this.queues.start.shift()) w.reject(new ReleaseJobError('worker is shutting down; the run was not started'));
  }

  /** @internal used by StepLease */
  acquire(cls: 'resume' | 'start', tenantId: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.inUse < this.slots && this.waiting === 0) {
      this.inUse++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      const onAbort = (): void => {
        if (this.queues[cls].remove(tenantId, waiter)) waiter.reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queues[cls].push(tenantId, waiter);
      this.pump();
    });
  }

  /** @internal used by StepLease: a slot is given back; the next waiter, if any, takes it. */
  releaseSlot(): void {
    this.inUse--;
    this.pump();
  }

  private pump(): void {
    while (this.inUse < this.slots) {
      const next = this.queues.resume.shift() ?? this.queues.start.shift();
      if (!next) return;
      this.inUse++;
      next.resolve();
    }
  }
}

/** A run's hold on the gate, from `StepGate.enter` until `release`. */
export class StepLease {
  /** Nested `idle` calls (e.g. a model call inside a compaction inside a node) give the slot back once. */
  private idleDepth = 0;
  private released = false;

  constructor(
    private readonly gate: StepGate,
    private readonly tenantId: string,
  ) {}

  /**
   * Runs `wait` (a model call) without holding the slot, then takes a slot again before the run
   * goes on, ahead of runs that have not started. Returns what `wait` returns or throws.
   */
  async idle<T>(wait: () => Promise<T>): Promise<T> {
    if (this.released) return wait();
    if (this.idleDepth++ === 0) this.gate.releaseSlot();
    try {
      return await wait();
    } finally {
      // Not abortable: a cancelled run still needs its turn to record its end.
      if (--this.idleDepth === 0 && !this.released) await this.gate.acquire('resume', this.tenantId);
    }
  }

  /** Gives the slot back for good (the run ended here). Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.idleDepth === 0) this.gate.releaseSlot();
  }
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * FIFO queues per tenant, served in turns: each `shift` takes the oldest waiter of the tenant
 * whose turn it is, then that tenant goes to the back of the line. O(1) per operation (a
 * removal on abort is O(queue of that tenant)).
 */
export class TenantTurns<T> {
  /** Map order is the turn order: the first key is next. */
  private readonly byTenant = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(tenantId: string, item: T): void {
    const q = this.byTenant.get(tenantId);
    if (q) q.push(item);
    else this.byTenant.set(tenantId, [item]);
    this.count++;
  }

  shift(): T | undefined {
    const first = this.byTenant.entries().next();
    if (first.done) return undefined;
    const [tenantId, q] = first.value;
    const item = q.shift() as T;
    this.count--;
    // To the back of the line (or out of it when it has nobody waiting).
    this.byTenant.delete(tenantId);
    if (q.length > 0) this.byTenant.set(tenantId, q);
    return item;
  }

  remove(tenantId: string, item: T): boolean {
    const q = this.byTenant.get(tenantId);
    const i = q ? q.indexOf(item) : -1;
    if (!q || i < 0) return false;
    q.splice(i, 1);
    this.count--;
    if (q.length === 0) this.byTenant.delete(tenantId);
    return true;
  }
}
