import { AsyncBatchedStore, type BaseStore } from '@langchain/langgraph-checkpoint';

/**
 * LangGraph's batching of store operations without a timer while no operation waits (issue 9:
 * "nothing built per call that can be built once"; in flight, a waiting run should cost almost no
 * CPU).
 *
 * Every graph invocation that is given a store (the run's `config.store`, README "Long-term
 * memory") wraps it in an `AsyncBatchedStore`, whose `start()` begins a loop that awaits
 * `setTimeout(0)` and checks its queue, over and over, until the invocation ends. A run spends
 * most of its invocation waiting — on a model call in its grace period (MODEL_SUSPEND_AFTER_MS,
 * 250 ms a turn), on a tool, on an approval — and meanwhile its loop makes a timer, a promise and
 * their async-hook records about once a millisecond: ~750 wake-ups per run of three suspended
 * turns, the largest allocator of the in-flight workload (bench/throughput README).
 *
 * The replacement keeps what the loop provides — operations enqueued within one timer tick go to
 * the wrapped store in one `batch` call, one batch at a time, in order, each result to its caller
 * and a failed batch rejecting its own operations only — but arms the timer when an operation is
 * enqueued, not in a loop. `start`, `stop` and `isRunning` keep their meaning: operations queued
 * before `start` wait for it, and `stop` waits for the batch in progress. Installed once per process
 * on the class LangGraph itself imports; if that class no longer has the shape this relies on (a
 * LangGraph upgrade), nothing is replaced and LangGraph's own loop runs. Tested in
 * store-batching.test.ts.
 */

const INSTALLED = Symbol.for('agentloop:event-driven-store-batching');
const FLUSH_ARMED = Symbol('agentloop:store-flush-armed');

interface QueuedOperation {
  operation: unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** The instance fields of LangGraph's AsyncBatchedStore this module reads and writes. */
interface BatchedStoreFields {
  store: BaseStore;
  queue: Map<number, QueuedOperation>;
  nextKey: number;
  running: boolean;
  processingTask: Promise<void> | null;
  [FLUSH_ARMED]?: boolean;
}

type Operations = Parameters<BaseStore['batch']>[0];

/** Sends every operation queued now to the wrapped store in one batch. */
async function flush(self: BatchedStoreFields): Promise<void> {
  self[FLUSH_ARMED] = false;
  if (self.queue.size === 0) return;
  const batch = [...self.queue.values()];
  self.queue.clear();
  try {
    const results = await self.store.batch(batch.map((queued) => queued.operation) as Operations);
    batch.forEach((queued, i) => queued.resolve(results[i]));
  } catch (err) {
    for (const queued of batch) queued.reject(err);
  }
}

function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Arms one flush one timer tick from now, after the batch in progress (if any). */
function armFlush(self: BatchedStoreFields): void {
  if (!self.running || self[FLUSH_ARMED]) return;
  self[FLUSH_ARMED] = true;
  const previous = self.processingTask;
  self.processingTask = (async () => {
    if (previous) await previous;
    await tick();
    await flush(self);
  })();
}

/** Whether `probe` has the fields of the AsyncBatchedStore this module was written against. */
function hasExpectedShape(probe: Partial<BatchedStoreFields>): boolean {
  const proto = AsyncBatchedStore.prototype as unknown as Record<string, unknown>;
  return (
    probe.queue instanceof Map &&
    typeof probe.nextKey === 'number' &&
    probe.running === false &&
    'processingTask' in probe &&
    typeof proto.enqueueOperation === 'function' &&
    typeof proto.start === 'function' &&
    typeof proto.processBatchQueue === 'function'
  );
}

/**
 * Replaces the polling loop of LangGraph's AsyncBatchedStore (once per process; later calls are
 * no-ops). Returns whether the replacement is in place.
 */
export function installEventDrivenStoreBatching(): boolean {
  const proto = AsyncBatchedStore.prototype as unknown as Record<PropertyKey, unknown>;
  if (proto[INSTALLED]) return true;
  const probe = new AsyncBatchedStore({} as BaseStore) as unknown as Partial<BatchedStoreFields>;
  if (!hasExpectedShape(probe)) return false;
  proto.enqueueOperation = function enqueueOperation(this: BatchedStoreFields, operation: unknown) {
    return new Promise((resolve, reject) => {
      this.queue.set(this.nextKey++, { operation, resolve, reject });
      armFlush(this);
    });
  };
  proto.start = function start(this: BatchedStoreFields) {
    if (this.running) return;
    this.running = true;
    if (this.queue.size > 0) armFlush(this);
  };
  proto[INSTALLED] = true;
  return true;
}
