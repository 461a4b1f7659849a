/**
 * Nodes that choose the next node themselves (a LangGraph `Command` goto) from the state their own
 * update leaves, where a conditional edge after them would read that state afresh (issue 9:
 * "nothing built per call that can be built once"; bench/throughput README, "Routes chosen by the
 * nodes").
 *
 * Why: a conditional edge reads the state *fresh* — as if the node's writes were already applied —
 * and LangGraph builds that view generically each time (`_localRead`): it copies the written
 * channels into a throwaway checkpoint (with a new uuid6, whose random bytes cost one
 * `crypto.getRandomValues` each, ~6 µs on Node 20, and an ISO timestamp), deep-copies
 * `versions_seen`, and runs its whole `_applyWrites` on the copies. That was ~0.75 ms of the
 * main-thread CPU of a 3-step run in the embedded wait4 profile (~3.5%), for routers that read a
 * few keys. routed() makes the same view by running each written key's own channel (the state's
 * reducer, `Overwrite` included) over the value the node was given — what LangGraph applies next —
 * and nothing else.
 *
 * The conditional edges stay in the graph, for what runs no node: a client's
 * `POST /threads/{id}/state` with `as_node` (LangGraph's updateState runs the node's writers on the
 * client's values, and the edge routes them: the approve node must see a history a client wrote as
 * the agent). routeInNodes() makes those edges stand aside when the node has chosen.
 *
 * What does not change: the writes. A Command goto and a conditional edge write the same
 * `branch:to:<node>` channel with the same value (LangGraph attaches the same branch writer to
 * both; END writes nothing in both), so checkpoints — and threads checkpointed before this
 * change — read the same, and the drawing is the same graph. The router still runs as its
 * `Router` (graph/router.ts), so a run whose callbacks listen still sees the `condition` runnable,
 * now as a child of the node.
 */
import { Command, EmptyChannelError, isCommand } from '@langchain/langgraph';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateGraph } from '@langchain/langgraph';
import type { Router } from './router.js';

/** What routed() needs of a state key's channel: a copy holding a value, which takes writes. */
interface ChannelLike {
  fromCheckpoint(value?: unknown): { update(values: unknown[]): boolean; get(): unknown };
}

type Node<S, C> = (state: S, config: C) => unknown;

/**
 * `node`, returning `Command({update, goto: route(state after update)})`: `route` must be the path
 * of the node's conditional edge (see routeInNodes). A Command the node returns with a goto, a
 * resume or for another graph is returned as it is.
 */
export function routed<S extends object, C extends RunnableConfig, R extends string>(
  channels: Readonly<Record<string, ChannelLike>>,
  node: Node<S, C>,
  route: Router<S, R>,
): (state: S, config: C) => Promise<Command> {
  return async (state, config) => {
    const out = await node(state, config);
    if (isCommand(out)) {
      if (out.graph !== undefined || out.resume !== undefined || (Array.isArray(out.goto) ? out.goto.length > 0 : out.goto !== undefined)) return out;
      return new Command({ update: out.update, goto: await route.invoke(stateAfter(channels, state, out.update), config) });
    }
    const update = out == null ? undefined : (out as Record<string, unknown> | [string, unknown][]);
    return new Command({ update, goto: await route.invoke(stateAfter(channels, state, update), config) });
  };
}

/**
 * `state` with `update` applied as LangGraph applies a node's writes: each written key through a
 * copy of its channel. Keys not written keep their value object (routers only read).
 */
export function stateAfter<S extends object>(channels: Readonly<Record<string, ChannelLike>>, state: S, update: unknown): S {
  const writes = updateTuples(update);
  if (writes.length === 0) return state;
  const byKey = new Map<string, unknown[]>();
  for (const [key, value] of writes) {
    const list = byKey.get(key);
    if (list) list.push(value);
    else byKey.set(key, [value]);
  }
  const after: Record<string, unknown> = { ...(state as Record<string, unknown>) };
  for (const [key, values] of byKey) {
    const channel = channels[key];
    // A key the state does not declare: LangGraph drops that write too.
    if (!channel) continue;
    const copy = channel.fromCheckpoint((state as Record<string, unknown>)[key]);
    copy.update(values);
    try {
      after[key] = copy.get();
    } catch (err) {
      // Left empty (a reducer gave undefined): LangGraph's read leaves such a key out of the state.
      if (!(err instanceof EmptyChannelError)) throw err;
      delete after[key];
    }
  }
  return after as S;
}

/** A node's update as [key, value] writes: an object's own entries, or a list of such pairs. */
function updateTuples(update: unknown): [string, unknown][] {
  if (update == null || typeof update !== 'object') return [];
  if (Array.isArray(update)) return update.filter((t): t is [string, unknown] => Array.isArray(t) && t.length === 2 && typeof t[0] === 'string');
  // Undefined values included: LangGraph writes them too (a reducer then sees undefined).
  return Object.entries(update);
}

/** Whether a node's output is a Command that names where to go (so its conditional edge stands aside). */
function chosenByNode(output: unknown): boolean {
  return isCommand(output) && output.graph === undefined && (Array.isArray(output.goto) ? output.goto.length > 0 : output.goto !== undefined);
}

/**
 * Makes the conditional edges after `nodes` route only what their node did not route itself: a
 * node wrapped in routed() returns a Command goto, and its edge then neither reads the state nor
 * writes; values a client writes `as_node` (no goto) are routed by the edge as before. Call before
 * `compile()`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any StateGraph: only its branches are touched
export function routeInNodes(builder: StateGraph<any, any, any, any, any, any, any, any>, nodes: readonly string[]): void {
  for (const node of nodes) {
    const branches = Object.values(builder.branches[node] ?? {});
    // A node named here without its edge would route twice or never: say so at build time.
    if (branches.length !== 1) throw new Error(`routeInNodes: node "${node}" has ${branches.length} conditional edges, expected 1`);
    for (const branch of branches) {
      const route = branch._route.bind(branch);
      branch._route = (input, config, writer, reader) => (chosenByNode(input) ? Promise.resolve(input) : route(input, config, writer, reader));
    }
  }
}
