/**
 * Per-tenant concurrency cap of one orchestrator process (`TENANT_MAX_CONCURRENT_RUNS`): how many
 * of one tenant's runs this worker executes at once. Without it, one tenant's burst of queued runs
 * takes every worker slot and another tenant's single run waits behind all of them (issue 18). A
 * job over the cap is deferred (put back on the queue for a moment, no attempt counted) so the
 * worker takes the jobs queued behind it.
 *
 * Counted in memory, per process, like RUN_CONCURRENCY: exact, free of races and of store round
 * trips, and a suspended parent run (waiting on its delegated agents) holds no slot, so children
 * can never be starved by their own parent. Across replicas a tenant may run
 * cap × replicas runs at once — the cap is a share of each worker, not a cluster-wide quota
 * (that one is TENANT_MAX_ACTIVE_RUNS at admission).
 */
export class TenantSlots {
  private readonly running = new Map<string, number>();

  /** @param cap runs of one tenant at once; 0 = no cap */
  constructor(private readonly cap: number) {}

  /** Takes a slot for the tenant; false when it is at its cap (nothing taken). */
  tryTake(tenantId: string): boolean {
    const n = this.running.get(tenantId) ?? 0;
    if (this.cap > 0 && n >= this.cap) return false;
    this.running.set(tenantId, n + 1);
    return true;
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

/** How long a job over its tenant's cap waits before it is offered again: 200–400 ms, jittered so deferred jobs do not come back in lockstep. */
export const deferDelayMs = (): number => 200 + Math.floor(Math.random() * 200);
