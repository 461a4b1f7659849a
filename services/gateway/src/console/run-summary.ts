import type { RunRecord, Store, ThreadRecord } from '@agentloop/store';

/** A run as the console lists it: who, what, how long, how much. */
export interface ConsoleRun {
  run_id: string;
  thread_id: string;
  tenant_id: string;
  assistant_id: string;
  status: string;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  /** Start (or creation, while pending) to end, or to now while it runs. */
  duration_ms: number;
  /** Tokens and model calls; null when not known (only the thread's latest run keeps them in the thread's values). */
  tokens: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  model_calls: number | null;
  error: string | null;
  dead_letter: { reason: string; at: string } | null;
  parent_run_id: string | null;
}

type Usage = { input_tokens?: unknown; output_tokens?: unknown; total_tokens?: unknown; model_calls?: unknown };
const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** The run's usage as the orchestrator left it in the values (`token_usage.run`), when the values are this run's. */
export function runUsageFromValues(values: Record<string, unknown> | null | undefined): Pick<ConsoleRun, 'tokens' | 'model_calls'> {
  const run = (values?.token_usage as { run?: Usage } | undefined)?.run;
  if (!run) return { tokens: null, model_calls: null };
  return {
    tokens: { input_tokens: count(run.input_tokens), output_tokens: count(run.output_tokens), total_tokens: count(run.total_tokens) },
    model_calls: count(run.model_calls),
  };
}

export function toConsoleRun(r: RunRecord, usage: Pick<ConsoleRun, 'tokens' | 'model_calls'>, now = Date.now()): ConsoleRun {
  const from = (r.startedAt ?? r.createdAt).getTime();
  const to = r.endedAt?.getTime() ?? now;
  const parent = r.metadata.parent_run_id;
  return {
    run_id: r.runId,
    thread_id: r.threadId,
    tenant_id: r.tenantId,
    assistant_id: r.assistantId,
    status: r.status,
    created_at: r.createdAt.toISOString(),
    started_at: r.startedAt?.toISOString() ?? null,
    ended_at: r.endedAt?.toISOString() ?? null,
    duration_ms: Math.max(0, to - from),
    ...usage,
    error: r.error,
    dead_letter: r.deadLetter ? { reason: r.deadLetter.reason, at: r.deadLetter.at.toISOString() } : null,
    parent_run_id: typeof parent === 'string' ? parent : null,
  };
}

/**
 * The runs with their usage: a thread's values hold the usage of its latest run only, so a run
 * gets tokens when it is the latest of its thread (the run's timeline has them for any run still
 * in the event log). One read of each thread and of its latest run.
 */
export async function summarizeRuns(store: Store, runs: readonly RunRecord[]): Promise<ConsoleRun[]> {
  const threads = new Map<string, Promise<{ thread: ThreadRecord | undefined; latest: string | undefined }>>();
  const lookup = (r: RunRecord) => {
    const key = `${r.tenantId}\u0000${r.threadId}`;
    let p = threads.get(key);
    if (!p) {
      p = Promise.all([store.getThread(r.tenantId, r.threadId), store.listRuns(r.tenantId, r.threadId, { limit: 1 })]).then(([thread, [latest]]) => ({
        thread,
        latest: latest?.runId,
      }));
      threads.set(key, p);
    }
    return p;
  };
  const now = Date.now();
  return Promise.all(
    runs.map(async (r) => {
      const { thread, latest } = await lookup(r);
      const usage = latest === r.runId ? runUsageFromValues(thread?.values) : { tokens: null, model_calls: null };
      return toConsoleRun(r, usage, now);
    }),
  );
}
