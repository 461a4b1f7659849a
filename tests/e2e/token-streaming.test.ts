/**
 * Token streaming through the official SDK (issue 11, deliverable 3's streaming part and 5's fake
 * model server): AgentLoop embedded with its `base` model slot pointing at a local fake
 * OpenAI-compatible server that streams (no `configurable.model`: the real provider path),
 * streamed the way agent-chat-ui asks (`["values","messages-tuple","custom"]`): `messages` events
 * carry `[chunk, metadata]`, the answer's chunks concatenate to it, the tool call arrives in
 * chunks, values still come, and no internal (tenant-prefixed) thread id appears. `messages`
 * gives the `messages/metadata|partial|complete` family; a run asked for values only records no tokens.
 * Embedded and as a cluster (JetStream event log, orchestrator and gateway processes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';
import { startCluster, type ClusterHarness } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

type Event = { event: string; data: unknown };
type Chunk = { type: string; id: string; content: string; tool_call_chunks?: Array<{ name?: string; args?: string; id?: string; index?: number }> };
type Meta = Record<string, unknown>;

const ANSWER = 'Your plan is written down: first the draft, then the review, then the release.';
const TOOL = {
  name: 'todo_write',
  args: {
    todos: [
      { content: 'draft', status: 'pending' },
      { content: 'review', status: 'pending' },
    ],
  },
};

async function collect(stream: AsyncIterable<{ event: string; data: unknown }>): Promise<Event[]> {
  const events: Event[] = [];
  for await (const e of stream) events.push({ event: e.event, data: e.data });
  return events;
}

function tokenStreamingTests(env: () => { client: Client; fake: FakeOpenAi }): void {
  it('messages-tuple: [chunk, metadata] events token by token, the tool call in chunks, values too, no internal ids', async () => {
    const { client, fake } = env();
    const thread = await client.threads.create();
    const tid = thread.thread_id;
    const before = fake.requests.length;
    const events = await collect(
      client.runs.stream(tid, 'agent', {
        input: { messages: [{ role: 'user', content: 'plan my release' }] },
        streamMode: ['values', 'messages-tuple', 'custom'],
      }),
    );
    // The provider was asked to stream (the real provider path, no configurable.model).
    const calls = fake.requests.slice(before);
    expect(calls.length).toBe(2);
    expect(calls.every((c) => c.stream === true && c.model === 'fake-model')).toBe(true);

    const values = events.filter((e) => e.event === 'values').map((e) => e.data as { messages: Array<{ type: string; id: string; content: string }> });
    expect(values.length).toBeGreaterThan(1);
    const final = values.at(-1)!.messages.at(-1)!;
    expect(final).toMatchObject({ type: 'ai', content: ANSWER });

    const tuples = events.filter((e) => e.event === 'messages').map((e) => e.data as [Chunk, Meta]);
    const answerChunks = tuples.filter(([m]) => m.id === final.id);
    expect(answerChunks.length).toBeGreaterThanOrEqual(5);
    expect(answerChunks.every(([m]) => m.type === 'AIMessageChunk')).toBe(true);
    expect(answerChunks.map(([m]) => m.content).join('')).toBe(ANSWER);
    const [, meta] = answerChunks[0]!;
    expect(meta).toMatchObject({ langgraph_node: 'agent', langgraph_step: expect.any(Number), thread_id: tid, graph_id: 'agent', run_id: expect.any(String) });
    expect(Object.keys(meta).some((k) => k.startsWith('__'))).toBe(false);

    // The tool call streamed as tool_call_chunks whose argument pieces make the call.
    const toolChunks = tuples.filter(([m, md]) => md.langgraph_node === 'agent' && (m.tool_call_chunks ?? []).length > 0);
    expect(toolChunks.length).toBeGreaterThanOrEqual(3);
    expect(toolChunks[0]![0].tool_call_chunks![0]).toMatchObject({ name: 'todo_write' });
    expect(JSON.parse(toolChunks.map(([m]) => m.tool_call_chunks![0]!.args ?? '').join(''))).toEqual(TOOL.args);
    // The tool's result is a whole message from the tools node.
    expect(tuples.some(([m, md]) => m.type === 'tool' && md.langgraph_node === 'tools')).toBe(true);

    // Never the checkpoint's tenant-prefixed thread id.
    const all = JSON.stringify(events);
    expect(all).not.toContain(`:${tid}`);
    expect(all).not.toContain('__pregel_task_id');
  }, 60_000);

  it('messages: messages/metadata once per message, then messages/partial with the message so far', async () => {
    const { client } = env();
    const thread = await client.threads.create();
    const tid = thread.thread_id;
    const events = await collect(client.runs.stream(tid, 'agent', { input: { messages: [{ role: 'user', content: 'plan again' }] }, streamMode: 'messages' }));
    const names = new Set(events.map((e) => e.event));
    expect(names.has('messages/metadata')).toBe(true);
    expect(names.has('messages/partial')).toBe(true);
    expect(names.has('messages')).toBe(false);
    expect(names.has('values')).toBe(false);
    const partials = events.filter((e) => e.event === 'messages/partial').map((e) => (e.data as Chunk[])[0]!);
    const answer = partials.filter((m) => m.content !== '' && typeof m.content === 'string');
    expect(answer.length).toBeGreaterThanOrEqual(5);
    // Each partial is the whole message so far; the last is the answer.
    expect(answer.at(-1)!.content).toBe(ANSWER);
    expect(answer[0]!.content.length).toBeLessThan(ANSWER.length);
    const metas = events.filter((e) => e.event === 'messages/metadata').map((e) => e.data as Record<string, { metadata: Meta }>);
    expect(metas.some((m) => m[answer.at(-1)!.id]?.metadata.langgraph_node === 'agent')).toBe(true);
    expect(JSON.stringify(events)).not.toContain(`:${tid}`);
  }, 60_000);

  it('a run asked for values only records no token events', async () => {
    const { client } = env();
    const thread = await client.threads.create();
    const tid = thread.thread_id;
    const events = await collect(
      client.runs.stream(tid, 'agent', { input: { messages: [{ role: 'user', content: 'plan once more' }] }, streamMode: ['values'] }),
    );
    const runId = (events.find((e) => e.event === 'metadata')!.data as { run_id: string }).run_id;
    const replay = await collect(client.runs.joinStream(tid, runId, { streamMode: ['values', 'messages-tuple', 'messages'] }));
    expect(replay.some((e) => e.event.startsWith('messages'))).toBe(false);
    expect(replay.some((e) => e.event === 'values')).toBe(true);
  }, 60_000);
}

const modelEnv = (fake: FakeOpenAi) => ({ MODEL_BASE_API_KEY: 'sk-fake', MODEL_BASE_BASE_URL: fake.baseUrl, MODEL_BASE_ID: 'fake-model' });

describe('token streaming from an OpenAI-compatible model (embedded)', () => {
  let server: EmbeddedServer;
  let fake: FakeOpenAi;
  let dataDir: string;
  let client: Client;
  beforeAll(async () => {
    fake = await startFakeOpenAi({ tool: TOOL, answer: ANSWER, pieceSize: 7 });
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-tokens-'));
    server = await startEmbedded({ env: { DATA_DIR: dataDir, EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, LOG_LEVEL: 'warn', ...modelEnv(fake) }, port: 0 });
    client = new Client({ apiUrl: server.url });
  });
  afterAll(async () => {
    await server?.close();
    await fake?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  tokenStreamingTests(() => ({ client, fake }));
});

describe('token streaming from an OpenAI-compatible model (cluster)', () => {
  let cluster: ClusterHarness;
  let fake: FakeOpenAi;
  let client: Client;
  beforeAll(async () => {
    fake = await startFakeOpenAi({ tool: TOOL, answer: ANSWER, pieceSize: 7 });
    cluster = await startCluster({ env: modelEnv(fake) });
    client = new Client({ apiUrl: cluster.url });
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    await fake?.close();
  });
  tokenStreamingTests(() => ({ client, fake }));
});
