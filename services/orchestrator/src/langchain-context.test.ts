import { describe, expect, it } from 'vitest';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { RunnableLambda } from '@langchain/core/runnables';
import { Annotation, Command, END, INTERRUPT, MemorySaver, START, StateGraph, interrupt, isInterrupted } from '@langchain/langgraph';
import { installLightRunContext, tracingRequested } from './langchain-context.js';

describe('light LangChain run context (no RunTree per call while tracing is off)', () => {
  it('is installed when no tracing switch is set, and not when one is', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ LANGSMITH_TRACING: 'false' })).toBe(false);
    expect(tracingRequested({ LANGSMITH_TRACING: 'true' })).toBe(true);
    expect(tracingRequested({ LANGCHAIN_TRACING_V2: 'true' })).toBe(true);
    expect(installLightRunContext({})).toBe(true);
  });

  it('stores no RunTree, and nested runnables still read the config they were called with', async () => {
    installLightRunContext({});
    const seen: unknown[] = [];
    const inner = RunnableLambda.from(async (x: number) => {
      const store = AsyncLocalStorageProviderSingleton.getInstance().getStore() as Record<string, unknown>;
      seen.push(typeof (store as { createChild?: unknown }).createChild, AsyncLocalStorageProviderSingleton.getRunnableConfig()?.metadata?.who);
      return x + 1;
    });
    const outer = RunnableLambda.from(async (x: number) => inner.invoke(x));
    expect(await outer.invoke(1, { metadata: { who: 'caller' } })).toBe(2);
    expect(seen).toEqual(['undefined', 'caller']);
  });

  it('a graph that interrupts and resumes behaves as with the original context (interrupt() reads it)', async () => {
    installLightRunContext({});
    const State = Annotation.Root({ answer: Annotation<string>() });
    const graph = new StateGraph(State)
      .addNode('ask', () => ({ answer: interrupt<string, string>('approve?') }))
      .addEdge(START, 'ask')
      .addEdge('ask', END)
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 't1' } };
    const first = await graph.invoke({ answer: '' }, config);
    expect(isInterrupted(first)).toBe(true);
    expect((first as unknown as Record<string, Array<{ value: unknown }>>)[INTERRUPT]![0]!.value).toBe('approve?');
    const second = await graph.invoke(new Command({ resume: 'yes' }), config);
    expect(second.answer).toBe('yes');
  });
});
