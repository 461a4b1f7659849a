import { describe, expect, it } from 'vitest';
import { Annotation, END, MemorySaver, MessagesAnnotation, Overwrite, START, StateGraph } from '@langchain/langgraph';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { router } from './router.js';
import { routed, routeInNodes, stateAfter } from './routed.js';

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  label: Annotation<string | null>({ reducer: (_a, b) => b, default: () => null }),
});
type S = typeof State.State;

/**
 * START → step; step → step while n < 3, then END. The step appends an AI message and adds 1 to
 * n; the path reads both, as the agent graph's routers read messages and counters.
 */
function build(inNodes: boolean, calls: number[] = []) {
  const path = router((s: S): 'step' | typeof END => {
    calls.push(s.n);
    return s.n < 3 && s.messages.length === s.n + 1 ? 'step' : END;
  });
  const step = (s: S) => ({ messages: [new AIMessage(`turn ${s.n}`)], n: 1 });
  const builder = new StateGraph(State)
    .addNode('step', inNodes ? routed(State.spec, step, path) : step)
    .addEdge(START, 'step')
    .addConditionalEdges('step', path, ['step', END]);
  if (inNodes) routeInNodes(builder, ['step']);
  return builder.compile({ checkpointer: new MemorySaver() });
}

type G = ReturnType<typeof build>;
const cfg = (thread: string) => ({ configurable: { thread_id: thread } });

async function history(g: G, thread: string) {
  const out = [];
  for await (const s of g.getStateHistory(cfg(thread))) {
    const values = { ...s.values, messages: (s.values.messages as BaseMessage[]).map((m) => `${m.getType()}:${String(m.content)}`) };
    out.push({ values, next: s.next, step: s.metadata?.step, source: s.metadata?.source });
  }
  return out;
}

describe('routed nodes', () => {
  it('route on the state their update leaves, with the path run once per step', async () => {
    const calls: number[] = [];
    const out = await build(true, calls).invoke({ messages: [new HumanMessage('go')] }, cfg('t'));
    expect(out.n).toBe(3);
    expect((out.messages as BaseMessage[]).map((m) => m.content)).toEqual(['go', 'turn 0', 'turn 1', 'turn 2']);
    // The node's call only: were the conditional edge still routing, every step would call it twice.
    expect(calls).toEqual([1, 2, 3]);
  });

  it('leave the same checkpoints as the conditional edge alone', async () => {
    const input = { messages: [new HumanMessage('go')] };
    const edge = build(false);
    const nodes = build(true);
    await edge.invoke(input, cfg('a'));
    await nodes.invoke(input, cfg('b'));
    const a = await history(edge, 'a');
    expect(a.length).toBe(5);
    expect(await history(nodes, 'b')).toEqual(a);
    expect(nodes.getGraph().toJSON().edges).toEqual(edge.getGraph().toJSON().edges);
  });

  it('leave a client update as the node to the conditional edge (updateState with as_node)', async () => {
    for (const inNodes of [false, true]) {
      const g = build(inNodes);
      const thread = `u-${inNodes}`;
      await g.updateState(cfg(thread), { messages: [new HumanMessage('go')], n: 0 }, 'step');
      // n = 0 and one message: the path routes to step again, as LangGraph's edge does.
      expect((await g.getState(cfg(thread))).next).toEqual(['step']);
      await g.updateState(cfg(thread), { n: 5 }, 'step');
      expect((await g.getState(cfg(thread))).next).toEqual([]);
    }
  });

  it('refuse a node without exactly one conditional edge', () => {
    const builder = new StateGraph(State)
      .addNode('step', () => ({}))
      .addEdge(START, 'step')
      .addEdge('step', END);
    expect(() => routeInNodes(builder, ['step'])).toThrow('node "step" has 0 conditional edges, expected 1');
  });
});

describe('stateAfter', () => {
  const base: S = { messages: [new HumanMessage({ content: 'hi', id: 'h1' })], n: 2, label: 'x' };

  it('applies each written key through its channel: reducers, replacement, Overwrite', () => {
    const after = stateAfter(State.spec, base, { messages: [new AIMessage({ content: 'yo', id: 'a1' })], n: 3, label: undefined });
    expect(after.messages.map((m) => m.id)).toEqual(['h1', 'a1']);
    expect(after.n).toBe(5);
    // An undefined value is written as LangGraph writes it: the replacing reducer takes it, and the
    // key, left empty, is left out of the state as LangGraph's read leaves it out.
    expect('label' in after).toBe(false);
    expect(stateAfter(State.spec, base, { n: new Overwrite(7) }).n).toBe(7);
    // A message with the id of one in history replaces it (messagesStateReducer), as in LangGraph.
    expect(stateAfter(State.spec, base, { messages: [new HumanMessage({ content: 'edited', id: 'h1' })] }).messages.map((m) => m.content)).toEqual(['edited']);
  });

  it('reads [key, value] lists, ignores undeclared keys and leaves the given state as it was', () => {
    const after = stateAfter(State.spec, base, [
      ['n', 1],
      ['n', 1],
      ['nope', 1],
    ]);
    expect(after.n).toBe(4);
    expect('nope' in after).toBe(false);
    expect(base.n).toBe(2);
    expect(base.messages.length).toBe(1);
    expect(stateAfter(State.spec, base, undefined)).toBe(base);
  });
});
