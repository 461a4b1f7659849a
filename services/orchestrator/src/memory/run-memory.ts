import type { Store, StoreItems } from '@agentloop/store';
import type { RunMemory } from '../graph/state.js';
import { TenantMemoryStore } from './tenant-store.js';
import { runUserId } from './memory-tools.js';

/**
 * A run's memory: the store bound to the run's tenant, and its user — from the run config, else
 * the thread's metadata, read only when a memory tool first asks (most runs never do).
 */
export function runMemory(
  items: StoreItems,
  store: Pick<Store, 'getThread'>,
  job: { tenantId: string; threadId: string },
  configurable: Record<string, unknown>,
): RunMemory {
  let user: Promise<string | null> | undefined;
  const resolve = async (): Promise<string | null> => {
    const fromConfig = runUserId(configurable, undefined);
    if (fromConfig !== null) return fromConfig;
    const thread = await store.getThread(job.tenantId, job.threadId);
    return runUserId(undefined, thread?.metadata);
  };
  return {
    store: new TenantMemoryStore(items, job.tenantId),
    userId: () => {
      // A failed lookup is not kept: the next call asks again.
      user ??= resolve().catch((err: unknown) => {
        user = undefined;
        throw err;
      });
      return user;
    },
  };
}
