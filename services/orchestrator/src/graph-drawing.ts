/**
 * The drawing of the agent graph as LangGraph Platform's `GET /assistants/{id}/graph` returns it
 * (the compiled graph's `getGraphAsync().toJSON()`): the real nodes and edges, so a change to the
 * graph shows there without anyone updating a copy.
 */
import { MemorySaver } from '@langchain/langgraph';
import { buildAgentGraph, type AgentGraph } from './graph.js';

/** Compiled once per process, only to be drawn: it never runs a node. */
let drawable: AgentGraph | undefined;

/** `xray`: draw subgraphs (true, or how many levels deep). */
export async function agentGraphDrawing(xray?: boolean | number): Promise<Record<string, unknown>> {
  drawable ??= buildAgentGraph({
    checkpointer: new MemorySaver(),
    tools: { listTools: () => Promise.resolve([]), execute: () => Promise.reject(new Error('a graph compiled for drawing runs no tools')) },
    runContext: () => undefined,
  });
  const graph = await drawable.getGraphAsync(xray !== undefined ? { xray } : {});
  return graph.toJSON() as Record<string, unknown>;
}
