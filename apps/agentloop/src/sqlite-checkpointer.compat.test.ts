/**
 * A checkpoints.sqlite written by EmbeddedSqliteSaver reads the same through LangGraph's own
 * SqliteSaver (its serializer included), and one written by SqliteSaver — an existing data
 * directory — reads the same through EmbeddedSqliteSaver.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import { INTERRUPT, emptyCheckpoint, type Checkpoint } from '@langchain/langgraph-checkpoint';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { openCheckpointSqlite } from '@agentloop/store';
import { openEmbeddedCheckpointer } from './sqlite-checkpointer.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const thread = { configurable: { thread_id: 'th1', checkpoint_ns: '' } };

/** Two steps of a thread: a checkpoint with messages and writes, and the next one with an interrupt pending. */
async function writeThread(saver: SqliteSaver) {
  const first: Checkpoint = {
    ...emptyCheckpoint(),
    id: '1ef00000-0000-6000-8000-000000000001',
    channel_values: { messages: [new HumanMessage({ content: 'hi', id: 'h1' })], loops: 0, approvals: new Map([['c1', 'allow']]), todos: undefined },
    channel_versions: { messages: 1, loops: 1, approvals: 1 },
  };
  const c1 = await saver.put(thread, first, { source: 'loop', step: 0, parents: {} });
  await saver.putWrites(
    c1,
    [
      ['messages', [new AIMessage({ content: '', tool_calls: [{ name: 'now', args: {}, id: 'c1', type: 'tool_call' }] })]],
      ['loops', 1],
    ],
    'task-agent',
  );
  const second: Checkpoint = {
    ...first,
    id: '1ef00000-0000-6000-8000-000000000002',
    channel_values: { ...first.channel_values, messages: [new HumanMessage('hi'), new ToolMessage({ content: 'now', tool_call_id: 'c1' })], at: new Date(0) },
    channel_versions: { messages: 2, loops: 2, approvals: 1, at: 1 },
  };
  const c2 = await saver.put(c1, second, { source: 'loop', step: 1, parents: {} });
  await saver.putWrites(c2, [[INTERRUPT, [{ value: { type: 'tool_approval', tool: 'rm' }, id: 'i1' }]]], 'task-tools');
}

async function readThread(saver: SqliteSaver) {
  const tuples = [];
  for await (const t of saver.list(thread)) tuples.push(t);
  return { latest: await saver.getTuple(thread), tuples };
}

function twoSavers() {
  const dir = mkdtempSync(path.join(tmpdir(), 'agentloop-ckpt-'));
  dirs.push(dir);
  const file = path.join(dir, 'checkpoints.sqlite');
  return { ours: openEmbeddedCheckpointer(file), stock: new SqliteSaver(openCheckpointSqlite(file)) };
}

describe('checkpoints.sqlite between EmbeddedSqliteSaver and SqliteSaver', () => {
  it('what EmbeddedSqliteSaver writes, SqliteSaver reads as EmbeddedSqliteSaver does', async () => {
    const { ours, stock } = twoSavers();
    await writeThread(ours);
    const read = await readThread(stock);
    expect(read.tuples).toHaveLength(2);
    expect(read.latest?.pendingWrites).toHaveLength(1);
    expect(read).toStrictEqual(await readThread(ours));
  });

  it('what SqliteSaver wrote, EmbeddedSqliteSaver reads as SqliteSaver does', async () => {
    const { ours, stock } = twoSavers();
    await writeThread(stock);
    const read = await readThread(ours);
    expect((read.latest?.checkpoint.channel_values.messages as unknown[])[1]).toBeInstanceOf(ToolMessage);
    expect(read).toStrictEqual(await readThread(stock));
  });
});
