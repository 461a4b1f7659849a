/**
 * Cancelling runs (LangGraph `action=interrupt`): one run, the runs in flight on a thread
 * (multitask_strategy "interrupt"), and many at once (`POST /runs/cancel`).
 */
import { CancelRunSchema, create, toBinary } from '@agentloop/proto';
import { ORCHESTRATOR_SUBJECTS, type Bus } from '@agentloop/bus';
import { TERMINAL_RUN_STATUSES, type RunLifecycle, type RunRecord, type RunStatusName, type Store } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';

export const isTerminal = (s: RunStatusName): boolean => TERMINAL_RUN_STATUSES.includes(s);

/** Which runs `POST /runs/cancel` cancels: listed runs of one thread, or every run of the tenant in a status. */
export type CancelSelection = { threadId: string; runIds: string[] } | { status: 'pending' | 'running' | 'all'; threadId?: string };

/** Most runs one `POST /runs/cancel` by status cancels (the rest stay for a next call). */
export const CANCEL_MANY_LIMIT = 1000;

export interface CancellationDeps {
  store: Store;
  lifecycle: RunLifecycle;
  log: Logger;
  /** Where cancels are broadcast to the orchestrators; without it a running run is only marked. */
  bus?: Bus | undefined;
}

export class RunCancellation {
  constructor(private readonly deps: CancellationDeps) {}

  /**
   * Cancels a run (action interrupt): the record becomes `interrupted` first — the source of truth
   * every worker checks — then the orchestrators are told, and the one executing the run aborts it
   * where it is (its checkpoints stay; the thread stays usable). A run that had not started never
   * will. Delegated children of the run are cancelled too. Returns the run as recorded afterwards
   * (a finished run: unchanged).
   */
  async cancel(tenantId: string, run: RunRecord, reason = 'cancelled by the client'): Promise<RunRecord> {
    if (isTerminal(run.status)) return run;
    const res = await this.deps.lifecycle.cancel(tenantId, run.runId);
    if (res.kind === 'missing') return run;
    if (res.kind === 'already_ended') return res.run;
    this.deps.log.info({ run_id: run.runId, thread_id: run.threadId, was: run.status }, 'run cancelled');
    if (this.deps.bus) {
      const msg = create(CancelRunSchema, { tenantId, threadId: run.threadId, runId: run.runId, reason });
      await this.deps.bus
        .publish(ORCHESTRATOR_SUBJECTS.cancelRun, toBinary(CancelRunSchema, msg))
        .catch((err: unknown) => this.deps.log.warn({ run_id: run.runId, err: errorMessage(err) }, 'cancel not broadcast; the run stops at its end'));
    }
    // Delegated agents the run started (each on its own thread, metadata parent_run_id).
    const childThreads = await this.deps.store.searchThreads(tenantId, { limit: 1000, offset: 0, metadata: { parent_run_id: run.runId } });
    for (const t of childThreads) {
      for (const child of await this.deps.store.listRuns(tenantId, t.threadId, { limit: 100 })) {
        if (child.metadata.parent_run_id === run.runId && !isTerminal(child.status)) await this.cancel(tenantId, child, `parent run ${run.runId} cancelled`);
      }
    }
    return res.run;
  }

  /**
   * The thread's pending and running runs in the order they are stopped: the deferred ones first
   * (so none is promoted when the holder ends), then the run holding the thread.
   */
  async inflight(tenantId: string, threadId: string): Promise<RunRecord[]> {
    const [pending, running] = await Promise.all([
      this.deps.store.listRuns(tenantId, threadId, { status: 'pending', limit: 1000 }),
      this.deps.store.listRuns(tenantId, threadId, { status: 'running', limit: 1000 }),
    ]);
    const all = [...running, ...pending];
    return [...all.filter((r) => r.deferred).reverse(), ...all.filter((r) => !r.deferred)];
  }

  /** multitask_strategy "interrupt": cancels the thread's deferred runs, then the run holding it. */
  async interruptThread(tenantId: string, threadId: string, reason: string): Promise<void> {
    for (const r of await this.inflight(tenantId, threadId)) await this.cancel(tenantId, r, reason);
  }

  /**
   * The runs `POST /runs/cancel` applies to, tenant-scoped: the listed runs of the thread (a run
   * of another thread or tenant is not found), or the tenant's runs in the status.
   */
  async select(tenantId: string, selection: CancelSelection): Promise<{ runs: RunRecord[]; missing: string[] }> {
    if ('runIds' in selection) {
      const found = await Promise.all(selection.runIds.map((id) => this.deps.store.getRun(tenantId, id)));
      const runs = found.filter((r): r is RunRecord => r !== undefined && r.threadId === selection.threadId);
      const missing = selection.runIds.filter((id) => !runs.some((r) => r.runId === id));
      return { runs, missing };
    }
    const statuses: RunStatusName[] = selection.status === 'all' ? ['pending', 'running'] : [selection.status];
    const { threadId } = selection;
    if (threadId !== undefined) {
      const perStatus = await Promise.all(statuses.map((status) => this.deps.store.listRuns(tenantId, threadId, { status, limit: CANCEL_MANY_LIMIT })));
      return { runs: perStatus.flat(), missing: [] };
    }
    return { runs: await this.deps.store.listTenantRunsInStatus(tenantId, statuses, CANCEL_MANY_LIMIT), missing: [] };
  }
}
