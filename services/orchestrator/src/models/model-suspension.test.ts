import { describe, expect, it } from 'vitest';
import { AIMessage } from '@langchain/core/messages';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { MemorySaver } from '@langchain/langgraph';
import { InGraphModelWaits, ModelCallSuspendedError, ModelSuspension } from './model-suspension.js';

// LangGraph installs LangChain's global AsyncLocalStorage when it is imported.
void MemorySaver;

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('ModelSuspension', () => {
  it('returns an answer given within the grace period without suspending', async () => {
    const s = new ModelSuspension(60_000);
    const answer = new AIMessage('hi');
    await expect(s.call('0:1', async () => answer)).resolves.toBe(answer);
    expect(s.waitingOn).toBeUndefined();
  });

  it('suspends a late call, then gives its answer to the same step once, without calling again', async () => {
    const s = new ModelSuspension(1);
    const late = deferred<AIMessage>();
    let calls = 0;
    const request = () => {
      calls++;
      return late.promise;
    };
    await expect(s.call('2:5', request)).rejects.toBeInstanceOf(ModelCallSuspendedError);
    expect(s.waitingOn).toBeDefined();
    const answer = new AIMessage('late');
    late.resolve(answer);
    await expect(s.call('2:5', request)).resolves.toBe(answer);
    expect(calls).toBe(1);
    expect(s.waitingOn).toBeUndefined();
  });

  it('while the process has an in-graph wait free, a late call waits for its answer; beyond the allowance it suspends', async () => {
    const waits = new InGraphModelWaits(1);
    const first = new ModelSuspension(1, waits);
    const second = new ModelSuspension(1, waits);
    const lateFirst = deferred<AIMessage>();
    const idled: string[] = [];
    const idle = <T>(wait: () => Promise<T>) => {
      idled.push('idle');
      return wait();
    };
    const waiting = first.call('0:1', () => lateFirst.promise, idle);
    await new Promise((r) => setTimeout(r, 20));
    expect(waits.count).toBe(1);
    expect(first.waitingOn).toBeUndefined(); // not suspended: nothing kept for a restart
    // The allowance is taken: the other run's late call suspends.
    await expect(second.call('0:1', () => new Promise<AIMessage>(() => undefined))).rejects.toBeInstanceOf(ModelCallSuspendedError);
    const answer = new AIMessage('late');
    lateFirst.resolve(answer);
    await expect(waiting).resolves.toBe(answer);
    expect(waits.count).toBe(0);
    // The grace period and the wait after it were both spent without the CPU slot.
    expect(idled).toEqual(['idle', 'idle']);
    // The place is free again; a failing call in it releases it too.
    const failing = deferred<AIMessage>();
    const third = new ModelSuspension(1, waits).call('1:3', () => failing.promise.then(() => Promise.reject(new Error('provider down'))));
    await new Promise((r) => setTimeout(r, 20));
    expect(waits.count).toBe(1);
    failing.resolve(new AIMessage('x'));
    await expect(third).rejects.toThrow('provider down');
    expect(waits.count).toBe(0);
  });

  it('a different step does not take a pending answer: it calls the model itself', async () => {
    const s = new ModelSuspension(1);
    await expect(s.call('2:5', () => new Promise<AIMessage>(() => undefined))).rejects.toBeInstanceOf(ModelCallSuspendedError);
    const own = new AIMessage('own');
    await expect(s.call('3:7', async () => own)).resolves.toBe(own);
  });

  it('a pending call that fails fails the step when it runs again', async () => {
    const s = new ModelSuspension(1);
    const late = deferred<AIMessage>();
    await expect(s.call('0:1', () => late.promise.then(() => Promise.reject(new Error('provider down'))))).rejects.toBeInstanceOf(ModelCallSuspendedError);
    late.resolve(new AIMessage('x'));
    await expect(s.call('0:1', async () => new AIMessage('not called'))).rejects.toThrow('provider down');
  });

  it('makes the call outside the graph node context, so a pending call does not keep the graph invocation reachable', async () => {
    const s = new ModelSuspension(60_000);
    let seen: unknown = 'unset';
    await AsyncLocalStorageProviderSingleton.runWithConfig({ configurable: { node: 'agent' } }, () =>
      s.call('0:1', async () => {
        seen = AsyncLocalStorageProviderSingleton.getRunnableConfig();
        return new AIMessage('hi');
      }),
    );
    expect(AsyncLocalStorageProviderSingleton.getInstance()).not.toBeUndefined();
    expect(seen).toBeUndefined();
  });

  it('its control-flow error carries no stack frames (they would keep the frames receivers, the graph loop, alive)', () => {
    const err = new ModelCallSuspendedError('x');
    expect(err.stack ?? '').not.toMatch(/\n\s+at /);
  });
});
