import { afterEach, describe, expect, it, vi } from 'vitest';
import { Annotation, END, START, StateGraph, getStore } from '@langchain/langgraph';
import { AsyncBatchedStore, InMemoryStore, type BaseStore, type Operation } from '@langchain/langgraph-checkpoint';
import { installEventDrivenStoreBatching } from './store-batching.js';

const realSetTimeout = globalThis.setTimeout;
const sleep = (ms: number) => new Promise<void>((resolve) => realSetTimeout(resolve, ms));

/** Counts the timers armed while `body` runs (the spy calls through). */
async function timersArmedDuring(body: () => Promise<void>): Promise<number> {
  const spy = vi.spyOn(globalThis, 'setTimeout');
  try {
    await body();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

/** An InMemoryStore whose batch calls are recorded (and can be made to fail). */
function recordingStore(delayMs = 0): { store: BaseStore; batches: Operation[][]; failNext: () => void } {
  const inner = new InMemoryStore();
  const batches: Operation[][] = [];
  let fail = false;
  const store = Object.assign(Object.create(inner) as BaseStore, {
    batch: async (ops: Operation[]) => {
      batches.push(ops);
      if (delayMs > 0) await sleep(delayMs);
      if (fail) {
        fail = false;
        throw new Error('store down');
      }
      return inner.batch(ops);
    },
  });
  return { store, batches, failNext: () => (fail = true) };
}

afterEach(() => vi.restoreAllMocks());

describe("LangGraph's store batching without a polling timer", () => {
  it('installs on the class LangGraph uses (a LangGraph upgrade that changes its shape fails here)', () => {
    expect(installEventDrivenStoreBatching()).toBe(true);
    expect(installEventDrivenStoreBatching()).toBe(true);
  });

  it('arms no timer while started and idle (LangGraph polls about once a millisecond)', async () => {
    installEventDrivenStoreBatching();
    const batched = new AsyncBatchedStore(new InMemoryStore());
    const armed = await timersArmedDuring(async () => {
      batched.start();
      await sleep(40);
    });
    await batched.stop();
    expect(armed).toBe(0);
  });

  it('sends the operations of one tick in one batch, in order, each result to its caller', async () => {
    installEventDrivenStoreBatching();
    const { store, batches } = recordingStore();
    const batched = new AsyncBatchedStore(store);
    batched.start();
    await Promise.all([batched.put(['ns'], 'a', { v: 1 }), batched.put(['ns'], 'b', { v: 2 })]);
    const [a, missing, b] = await Promise.all([batched.get(['ns'], 'a'), batched.get(['ns'], 'nope'), batched.get(['ns'], 'b')]);
    const found = await batched.search(['ns']);
    await batched.stop();
    expect(a?.value).toEqual({ v: 1 });
    expect(missing).toBeNull();
    expect(b?.value).toEqual({ v: 2 });
    expect(found.map((item) => item.key).sort()).toEqual(['a', 'b']);
    expect(batches.map((ops) => ops.length)).toEqual([2, 3, 1]);
  });

  it('a failed batch rejects its own operations only; the next batch is served', async () => {
    installEventDrivenStoreBatching();
    const { store, failNext } = recordingStore();
    const batched = new AsyncBatchedStore(store);
    batched.start();
    failNext();
    const failed = await Promise.allSettled([batched.put(['ns'], 'a', { v: 1 }), batched.get(['ns'], 'a')]);
    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await batched.put(['ns'], 'a', { v: 3 });
    expect((await batched.get(['ns'], 'a'))?.value).toEqual({ v: 3 });
    await batched.stop();
  });

  it('operations queued before start wait for it; an operation queued during a batch goes in the next', async () => {
    installEventDrivenStoreBatching();
    const { store, batches } = recordingStore(20);
    const batched = new AsyncBatchedStore(store);
    let settled = false;
    const early = batched.put(['ns'], 'early', { v: 0 }).then(() => (settled = true));
    await sleep(10);
    expect(settled).toBe(false);
    batched.start();
    await early;
    const first = batched.get(['ns'], 'early');
    await vi.waitFor(() => expect(batches).toHaveLength(2)); // the first get's batch is at the store
    const second = batched.get(['ns'], 'early');
    expect((await first)?.value).toEqual({ v: 0 });
    expect((await second)?.value).toEqual({ v: 0 });
    await batched.stop();
    expect(batched.isRunning).toBe(false);
    expect(batches.map((ops) => ops.length)).toEqual([1, 1, 1]);
  });

  it("a graph node's store calls are served, and a waiting node costs no timers", async () => {
    installEventDrivenStoreBatching();
    const State = Annotation.Root({ seen: Annotation<unknown>() });
    const graph = new StateGraph(State)
      .addNode('remember', async () => {
        const store = getStore()!;
        await store.put(['memories'], 'k', { text: 'hello' });
        await sleep(40); // a node waiting (on a model, a tool): LangGraph's loop would poll ~40 times
        return { seen: (await store.get(['memories'], 'k'))?.value };
      })
      .addEdge(START, 'remember')
      .addEdge('remember', END)
      .compile({ store: new InMemoryStore() });
    let result: { seen: unknown } | undefined;
    const armed = await timersArmedDuring(async () => {
      result = await graph.invoke({ seen: null });
    });
    expect(result?.seen).toEqual({ text: 'hello' });
    expect(armed).toBeLessThan(10);
  });
});
