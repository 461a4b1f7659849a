import { metrics, type ObservableResult } from '@opentelemetry/api';

/**
 * Gauges read at collection time (a Prometheus scrape, an OTLP export), from the queues and the
 * store: what is waiting, for how long, and on whom. Register them after initTelemetry (they bind
 * to the meter provider registered then); each returns a function that unregisters it.
 */

const SCOPE = 'agentloop';

/** What a queue reports (JobQueue.stats of @agentloop/queue, which this lib does not depend on). */
export interface ObservedQueue {
  readonly name: string;
  stats(): Promise<{ waiting: number; delayed: number; active: number; oldestWaitingMs: number }>;
}

/**
 * `agentloop.queue.depth` (jobs by queue and state: waiting, delayed, active) and
 * `agentloop.queue.oldest_age` (seconds the oldest waiting job of a queue has waited).
 * A queue that cannot answer (its Redis is down) is left out of that collection.
 */
export function observeQueues(queues: ObservedQueue[]): () => void {
  const meter = metrics.getMeterProvider().getMeter(SCOPE);
  const depth = meter.createObservableGauge('agentloop.queue.depth', { description: 'Jobs in a queue, by state (waiting, delayed, active)' });
  const age = meter.createObservableGauge('agentloop.queue.oldest_age', { description: 'How long the oldest waiting job of a queue has waited', unit: 's' });
  const callback = async (result: { observe(instrument: typeof depth, value: number, attributes: Record<string, string>): void }) => {
    await Promise.all(
      queues.map(async (q) => {
        const s = await q.stats().catch(() => undefined);
        if (!s) return;
        for (const state of ['waiting', 'delayed', 'active'] as const) result.observe(depth, s[state], { queue: q.name, state });
        result.observe(age, s.oldestWaitingMs / 1000, { queue: q.name });
      }),
    );
  };
  meter.addBatchObservableCallback(callback, [depth, age]);
  return () => meter.removeBatchObservableCallback(callback, [depth, age]);
}

/** Threads of one tenant waiting for a person. */
export interface PendingCount {
  tenantId: string;
  count: number;
}

/**
 * `agentloop.approvals.pending`: threads stopped for a person (a tool approval or an `ask_human`
 * question: the thread is `interrupted`), by tenant, from `count` (the store).
 */
export function observePendingApprovals(count: () => Promise<PendingCount[]>): () => void {
  const meter = metrics.getMeterProvider().getMeter(SCOPE);
  const gauge = meter.createObservableGauge('agentloop.approvals.pending', { description: 'Threads waiting for a human decision, by tenant' });
  // A tenant whose last waiting thread was answered reads 0 (not a vanished series, which an
  // alert on the value would take for "no data").
  const seen = new Set<string>();
  const callback = async (result: ObservableResult) => {
    const groups = await count().catch(() => undefined);
    if (!groups) return;
    const now = new Map(groups.map((g) => [g.tenantId, g.count]));
    for (const tenant of now.keys()) seen.add(tenant);
    for (const tenant of seen) result.observe(now.get(tenant) ?? 0, { 'agentloop.tenant': tenant });
  };
  gauge.addCallback(callback);
  return () => gauge.removeCallback(callback);
}
