import { afterEach, describe, expect, it, vi } from 'vitest';
import { Annotation, END, MemorySaver, START, StateGraph } from '@langchain/langgraph';
import { RunnableLambda } from '@langchain/core/runnables';
import { hasCallbackHandlers } from '../langchain-context.js';
import { router } from './router.js';

const State = Annotation.Root({ n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });
type S = typeof State.State;

/** START → inc; inc → inc while n < 3, then END: the path reads the state the node just wrote. */
function build(path: (s: S) => 'inc' | typeof END, asRouter: boolean) {
  return new StateGraph(State)
    .addNode('inc', () => ({ n: 1 }))
    .addEdge(START, 'inc')
    .addConditionalEdges('inc', asRouter ? router(path) : path, ['inc', END])
    .compile({ checkpointer: new MemorySaver() });
}
const loop = (s: S): 'inc' | typeof END => (s.n < 3 ? 'inc' : END);

afterEach(() => vi.restoreAllMocks());

describe('router', () => {
  it('routes on the fresh state without a RunnableLambda call when nobody listens', async () => {
    const spy = vi.spyOn(RunnableLambda.prototype, 'invoke');
    const seen: number[] = [];
    const g = build((s) => (seen.push(s.n), loop(s)), true);
    const out = await g.invoke({ n: 0 }, { configurable: { thread_id: 't1' } });
    expect(out.n).toBe(3);
    expect(seen).toEqual([1, 2, 3]);
    expect(spy).not.toHaveBeenCalled();
  });

  it('leaves the compiled graph and its checkpoints as a plain function does', async () => {
    const plain = build(loop, false);
    const routed = build(loop, true);
    expect(Object.keys(routed.builder.branches.inc!)).toEqual(Object.keys(plain.builder.branches.inc!));
    expect(routed.getGraph().toJSON().edges).toEqual(plain.getGraph().toJSON().edges);
    const history = async (g: ReturnType<typeof build>, thread: string) => {
      await g.invoke({ n: 0 }, { configurable: { thread_id: thread } });
      const out = [];
      for await (const s of g.getStateHistory({ configurable: { thread_id: thread } })) out.push({ values: s.values, next: s.next, step: s.metadata?.step });
      return out;
    };
    expect(await history(routed, 'a')).toEqual(await history(plain, 'b'));
  });

  it('reports to callback handlers as the RunnableLambda does (the events stream mode)', async () => {
    const events = async (g: ReturnType<typeof build>, thread: string) => {
      const out: string[] = [];
      for await (const e of g.streamEvents({ n: 0 }, { version: 'v2', configurable: { thread_id: thread } })) out.push(`${e.event}:${e.name}`);
      return out;
    };
    const plain = await events(build(loop, false), 'a');
    expect(plain.filter((e) => e.includes('RunnableLambda')).length).toBeGreaterThan(0);
    expect(await events(build(loop, true), 'b')).toEqual(plain);
  });

  it('propagates what the path throws', async () => {
    const g = build(() => {
      throw new Error('no route');
    }, true);
    await expect(g.invoke({ n: 0 }, { configurable: { thread_id: 't' } })).rejects.toThrow('no route');
  });

  it('tells handler lists and managers with handlers from empty ones', () => {
    expect(hasCallbackHandlers(undefined)).toBe(false);
    expect(hasCallbackHandlers([])).toBe(false);
    expect(hasCallbackHandlers({ handlers: [] } as never)).toBe(false);
    expect(hasCallbackHandlers([{ name: 'h' }] as never)).toBe(true);
    expect(hasCallbackHandlers({ handlers: [{}] } as never)).toBe(true);
  });
});
