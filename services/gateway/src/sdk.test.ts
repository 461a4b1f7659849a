import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { startTestGateway, type TestGateway } from './testing/index.js';
import { DEFAULT_ASSISTANT_ID } from './serialize.js';

// The official LangGraph JS SDK, unchanged, against the gateway on a real port.
let gw: TestGateway;
let client: Client;
let apiUrl: string;

beforeAll(async () => {
  gw = await startTestGateway({ env: { AGENTLOOP_API_KEYS: 'sdk-key:acme' } });
  await gw.app.listen({ port: 0, host: '127.0.0.1' });
  apiUrl = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
  client = new Client({ apiUrl, apiKey: 'sdk-key' });
});
afterAll(async () => gw.close());

type Msg = { type: string; content: string };
const input = (text: string) => ({ messages: [{ role: 'user', content: text }] });

describe('@langchain/langgraph-sdk against the gateway', () => {
  it('finds the assistant by search and by graph id', async () => {
    const [found] = await client.assistants.search({ graphId: 'agent' });
    const byGraph = await client.assistants.get('agent');
    expect(found?.assistant_id).toBe(DEFAULT_ASSISTANT_ID);
    expect(byGraph.assistant_id).toBe(DEFAULT_ASSISTANT_ID);
  });

  it('creates a thread and runs.wait returns its final values', async () => {
    const thread = await client.threads.create({ metadata: { user: 'ada' } });
    const values = (await client.runs.wait(thread.thread_id, 'agent', { input: input('hello') })) as { messages: Msg[] };
    expect(values.messages.map((m) => m.content)).toEqual(['hello', 'echo: hello']);
    const fetched = await client.threads.get(thread.thread_id);
    expect(fetched).toMatchObject({ thread_id: thread.thread_id, status: 'idle', metadata: { user: 'ada' } });
  });

  it('runs.stream yields metadata, the requested modes and end', async () => {
    const thread = await client.threads.create();
    let created: { run_id: string; thread_id?: string | undefined } | undefined;
    const parts: { event: string; data: unknown }[] = [];
    for await (const part of client.runs.stream(thread.thread_id, 'agent', {
      input: input('stream me'),
      streamMode: ['values', 'updates'],
      onRunCreated: (meta) => (created = meta),
    })) {
      parts.push({ event: part.event, data: part.data });
    }
    expect(parts.map((p) => p.event)).toEqual(['metadata', 'values', 'updates', 'values', 'end']);
    expect(parts[0]!.data).toMatchObject({ run_id: created?.run_id });
    expect(created?.thread_id).toBe(thread.thread_id);
    expect((parts[3]!.data as { messages: Msg[] }).messages.at(-1)?.content).toBe('echo: stream me');
  });

  it('runs.create then runs.join returns the values, and runs.get shows success', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', { input: input('later'), metadata: { k: 'v' } });
    expect(run).toMatchObject({ thread_id: thread.thread_id, assistant_id: DEFAULT_ASSISTANT_ID, metadata: { k: 'v' } });
    const values = (await client.runs.join(thread.thread_id, run.run_id)) as unknown as { messages: Msg[] };
    expect(values.messages.at(-1)?.content).toBe('echo: later');
    const after = await client.runs.get(thread.thread_id, run.run_id);
    expect(after.status).toBe('success');
    const list = await client.runs.list(thread.thread_id);
    expect(list.map((r) => r.run_id)).toEqual([run.run_id]);
  });

  it('runs.joinStream replays a finished run', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', { input: input('j'), streamMode: ['updates'] });
    await client.runs.join(thread.thread_id, run.run_id);
    const events: string[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id)) events.push(part.event);
    expect(events).toEqual(['updates', 'end']);
  });

  it('threads.getState returns the values of the last run', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: input('state?') });
    const state = await client.threads.getState<{ messages: Msg[] }>(thread.thread_id);
    expect(state.values.messages.at(-1)?.content).toBe('echo: state?');
    expect(state.next).toEqual([]);
    expect(state.checkpoint.thread_id).toBe(thread.thread_id);
  });

  it('runs.wait without a thread (stateless) returns the values', async () => {
    const values = (await client.runs.wait(null, 'agent', { input: input('no thread') })) as { messages: Msg[] };
    expect(values.messages.at(-1)?.content).toBe('echo: no thread');
  });

  it('threads.search and threads.delete work', async () => {
    const thread = await client.threads.create({ metadata: { tag: 'to-delete' } });
    const found = await client.threads.search({ metadata: { tag: 'to-delete' } });
    await client.threads.delete(thread.thread_id);
    const after = await client.threads.search({ metadata: { tag: 'to-delete' } });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect(after).toEqual([]);
  });

  it('a client with a wrong key gets a 401 error', async () => {
    const bad = new Client({ apiUrl, apiKey: 'wrong' });
    await expect(bad.threads.create()).rejects.toThrow(/401/);
  });
});
