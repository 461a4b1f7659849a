/**
 * Per-tenant concurrency cap of one orchestrator process (`TENANT_MAX_CONCURRENT_RUNS`, per-tenant
 * `TENANT_CONCURRENT_RUNS`): how many of one tenant's runs this worker executes at once (issue 18).
 * The order among tenants is the queue's fair scheduling (docs/adr/0008-fair-scheduling.md); the
 * cap keeps one tenant from filling a worker's slots meanwhile. A job over the cap is *parked*:
 * put back as delayed (no attempt counted) under its tenant, and woken when a run of that tenant
 * ends (`wakeParked`), so a capped tenant's backlog is not offered over and over while it is at
 * its cap. The park delay (PARK_MS) is only the safety net of a wake that went to a worker where
 * the tenant is at its cap too. On a queue without parking (MemoryQueue) the job is deferred for
 * a moment instead (deferDelayMs).
 *
 * Counted in memory, per process, like RUN_CONCURRENCY: exact, free of races and of store round
 * trips, and a suspended parent run (waiting on its delegated agents) holds no slot, so children
 * can never be starved by their own parent. Across replicas a tenant may run
 * cap × replicas runs at once — the cap is a share of each worker, not a cluster-wide quota
 * (that one is TENANT_MAX_ACTIVE_RUNS at admission).
 */
export class TenantSlots {
  private readonly running = new Map<string, number>();
  /** Tenants this process parked jobs of, and not woken since: a run of theirs ending wakes one. */
  private readonly parked = new Set<string>();

  /**
   * @param cap runs of one tenant at once; 0 = no cap
   * @param caps per-tenant caps overriding `cap` (0 = no cap for that tenant)
   */
  constructor(
    private readonly cap: number,
    private readonly caps: ReadonlyMap<string, number> = new Map(),
  ) {}

  capOf(tenantId: string): number {
    return this.caps.get(tenantId) ?? this.cap;
  }

  /** Takes a slot for the tenant; false when it is at its cap (nothing taken). */
  tryTake(tenantId: string): boolean {
    const n = this.running.get(tenantId) ?? 0;
    const cap = this.capOf(tenantId);
    if (cap > 0 && n >= cap) return false;
    this.running.set(tenantId, n + 1);
    return true;
  }

  /** A job of the tenant was parked here. */
  notePark(tenantId: string): void {
    this.parked.add(tenantId);
  }

  /** True when the tenant has jobs parked by this process (perhaps woken elsewhere since). */
  hasParked(tenantId: string): boolean {
    return this.parked.has(tenantId);
  }

  /** The queue had no parked job of the tenant left to wake. */
  clearParked(tenantId: string): void {
    this.parked.delete(tenantId);
  }

  release(tenantId: string): void {
    const n = (this.running.get(tenantId) ?? 0) - 1;
    if (n > 0) this.running.set(tenantId, n);
    else this.running.delete(tenantId);
  }

  /** Runs of the tenant executing here now. */
  count(tenantId: string): number {
    return this.running.get(tenantId) ?? 0;
  }
}

/** How long a job over its tenant's cap waits, on a queue without parking, before it is offered again: 200–400 ms, jittered so deferred jobs do not come back in lockstep. */
export const deferDelayMs = (): number => 200 + Math.floor(Math.random() * 200);

/**
 * The safety delay of a parked job: a job parked over its tenant's cap comes back after it even
 * when no wake reached it (30–40 s, jittered). It bounds the churn of a capped backlog to one offer
 * per job per PARK_MS, and the wait of a job whose wake was taken by a capped worker.
 */
export const PARK_MS = 30_000;
export const parkDelayMs = (): number => PARK_MS + Math.floor(Math.random() * 10_000);
