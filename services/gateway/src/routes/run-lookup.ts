import type { RunRecord, Store } from '@agentloop/store';
import { notFound } from '../errors.js';

/** The tenant's run on that thread; another tenant's run, or one of another thread, is not found. */
export async function requireRun(store: Pick<Store, 'getRun'>, tenantId: string, threadId: string, runId: string): Promise<RunRecord> {
  const run = await store.getRun(tenantId, runId);
  if (!run || run.threadId !== threadId) throw notFound(`Run ${runId} not found on thread ${threadId}.`);
  return run;
}

export const runPath = (run: RunRecord): string => `/threads/${run.threadId}/runs/${run.runId}`;
