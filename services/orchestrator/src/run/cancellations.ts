/**
 * The cancel switches of the runs executing in this process, by run id: a client's cancel (the
 * record already says `interrupted`) aborts the run where it is.
 */

/** Abort reason of a run a client cancelled. */
export class RunCancelledError extends Error {
  override name = 'RunCancelledError';
}

export class CancelRegistry {
  private readonly switches = new Map<string, AbortController>();

  /**
   * A cancel switch for a run about to be taken. Registered before the take, so a cancel recorded
   * from then on either stops the take (the run is no longer pending/running) or reaches it.
   */
  register(runId: string): AbortController {
    const c = new AbortController();
    this.switches.set(runId, c);
    return c;
  }

  /** Forgets the switch, unless a newer execution of the same run registered its own since. */
  release(runId: string, c: AbortController): void {
    if (this.switches.get(runId) === c) this.switches.delete(runId);
  }

  /** Aborts the run with a RunCancelledError; false when it is not executing here. */
  cancel(runId: string, reason: string): boolean {
    const c = this.switches.get(runId);
    if (!c) return false;
    c.abort(new RunCancelledError(reason));
    return true;
  }
}
