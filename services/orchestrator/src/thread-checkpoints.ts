/**
 * A thread's checkpoints as the gateway serves them: read (history, state at a checkpoint) and
 * edited (update state, metadata, copy, keep the latest only), over one checkpoint saver and one
 * compiled agent graph. Embedded mode passes the orchestrator's SqliteSaver, the cluster gateway a
 * MySQLSaver on the orchestrators' tables.
 */
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { compileCheckpointGraph, cpThreadId, createThreadCheckpointReader, type ThreadCheckpointReader } from './checkpoint-reader.js';
import { createThreadCheckpointWriter, type ThreadCheckpointWriter } from './checkpoint-writer.js';

export type ThreadCheckpointStore = ThreadCheckpointReader & ThreadCheckpointWriter;

export function createThreadCheckpoints(checkpointer: BaseCheckpointSaver): ThreadCheckpointStore {
  const graph = compileCheckpointGraph(checkpointer);
  return { ...createThreadCheckpointReader(checkpointer, graph), ...createThreadCheckpointWriter(checkpointer, graph, cpThreadId) };
}
