/**
 * Store reads of a long wait (`runs.wait`, `join`) carried through a database outage: a join may
 * span a MariaDB restart, and the run it waits for keeps going (the orchestrator retries its own
 * writes), so a read that finds the database down for now is tried again until the wait's own
 * signal (client gone, wait limit, shutdown) ends it, instead of failing the wait.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isTransientInfraError } from '@agentloop/core';
import type { Store } from '@agentloop/store';

const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 2_000;

type WaitReads = Pick<Store, 'getRunWithThreadValues'>;

/** `store` whose reads retry through transient outages (isTransientInfraError) until `signal` aborts. */
export function readsThroughOutages(store: WaitReads, signal: AbortSignal): WaitReads {
  return { getRunWithThreadValues: (tenantId, runId) => retryTransient(() => store.getRunWithThreadValues(tenantId, runId), signal) };
}

async function retryTransient<T>(read: () => Promise<T>, signal: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (!isTransientInfraError(err) || signal.aborted) throw err;
      // An abort during the pause ends the wait with the outage's error (the gateway answers 503).
      await sleep(Math.min(MAX_PAUSE_MS, FIRST_PAUSE_MS * 2 ** attempt), undefined, { signal }).catch(() => {
        throw err;
      });
    }
  }
}
