/** Admission checks and side effects of a new run besides the lifecycle's transaction. */
import type { JsonObject, Store } from '@agentloop/store';
import { errorMessage, type Logger } from '@agentloop/core';
import type { GatewayConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { GRAPH_ID } from '../serialize.js';

/**
 * Admission quota: the tenant's pending and running runs (TENANT_MAX_ACTIVE_RUNS, per-tenant
 * TENANT_RUN_QUOTAS). Counted from the records, so it holds across gateway replicas (two
 * admissions racing on the last slot may both pass). `adding`: the runs about to be created (a batch).
 */
export async function checkQuota(
  store: Pick<Store, 'countActiveRuns'>,
  config: Partial<Pick<GatewayConfig, 'TENANT_MAX_ACTIVE_RUNS' | 'TENANT_RUN_QUOTAS'>>,
  tenantId: string,
  adding = 1,
): Promise<void> {
  const limit = config.TENANT_RUN_QUOTAS?.get(tenantId) ?? config.TENANT_MAX_ACTIVE_RUNS ?? 0;
  if (limit <= 0) return;
  const active = await store.countActiveRuns(tenantId);
  if (active + adding > limit) {
    throw new ApiError(
      'RESOURCE_EXHAUSTED',
      `Tenant ${tenantId} has ${active} runs pending or running, ${adding > 1 ? `${adding} more would exceed` : 'at'} its limit of ${limit} (TENANT_MAX_ACTIVE_RUNS / TENANT_RUN_QUOTAS); retry when some have finished.`,
    );
  }
}

/**
 * As LangGraph does, a run stamps its graph and assistant into its thread's metadata, so
 * `threads.search({metadata: {graph_id}})` finds threads made with a bare `POST /threads`
 * (agent-chat-ui's history). The metadata to write, or undefined when it has them already.
 */
export function stampedMetadata(metadata: JsonObject, assistantId: string): JsonObject | undefined {
  if (metadata.graph_id === GRAPH_ID && metadata.assistant_id === assistantId) return undefined;
  return { ...metadata, graph_id: GRAPH_ID, assistant_id: assistantId };
}

/**
 * Writes the stamp (`stampedMetadata`) on its own, for a run that did not take its thread at
 * admission (deferred, or a retried request): the admission of a run that takes it writes the
 * stamp in the same statement (`AdmitRequest.threadMetadata`). Best effort (the run is admitted).
 */
export async function stampThread(
  store: Pick<Store, 'updateThread'>,
  log: Logger,
  t: { tenantId: string; threadId: string; metadata: JsonObject | undefined },
): Promise<void> {
  if (!t.metadata) return;
  await store
    .updateThread(t.tenantId, t.threadId, { metadata: t.metadata })
    .catch((err: unknown) => log.warn({ thread_id: t.threadId, err: errorMessage(err) }, 'graph_id/assistant_id not stamped into the thread metadata'));
}
