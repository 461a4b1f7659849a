/**
 * Long-term memory across threads (issue 12), embedded and in a cluster (MySQL, semantic recall
 * through a fake embeddings endpoint): a fact a run remembers for user u1 in one
 * thread is recalled by a run of u1 in another thread, and by neither a run of user u2 nor a run
 * of another tenant; the fact is an item of the LangGraph store API of its tenant only.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted, startCluster, useEmbeddedServer, type ClusterHarness } from './helpers.js';

type Values = { messages: Array<{ type: string; name?: string; content: unknown }> };

const withUser = (turns: unknown[], userId?: string) => {
  const config = scripted(turns);
  return userId === undefined ? config : { configurable: { ...config.configurable, user_id: userId } };
};

const API_KEYS = 'key-acme:acme,key-globex:globex';

/** The memory journey against a deployment at `url()` with API_KEYS. */
function memoryJourney(url: () => string): void {
  const acme = () => new Client({ apiUrl: url(), apiKey: 'key-acme' });
  const globex = () => new Client({ apiUrl: url(), apiKey: 'key-globex' });

  /** Runs one scripted tool call on a new thread and returns the tool's JSON result. */
  const runTool = async (client: Client, tool: { name: string; args: Record<string, unknown> }, opts: { userId?: string; threadUser?: string }) => {
    const thread = await client.threads.create(opts.threadUser ? { metadata: { user_id: opts.threadUser } } : {});
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: `please ${tool.name}` }] },
      config: withUser([{ tool_calls: [tool] }, { content: 'done' }], opts.userId),
    })) as Values;
    const message = values.messages.find((m) => m.type === 'tool' && m.name === tool.name);
    if (!message) throw new Error(`no ${tool.name} result in ${JSON.stringify(values.messages)}`);
    return JSON.parse(String(message.content)) as { ok: boolean; key?: string; memories?: Array<{ key: string; fact: string }>; error?: string };
  };
  const recall = { name: 'recall', args: { query: 'green tea' } };
  const memoryNamespaceOf = (userId: string) => ['memories', userId];

  it('recalls in thread B what thread A remembered for the same user, and for no other user or tenant', async () => {
    // Thread A: the user comes from the thread metadata.
    const saved = await runTool(acme(), { name: 'remember', args: { fact: 'The user prefers green tea', key: 'drink' } }, { threadUser: 'u1' });
    expect(saved).toEqual({ ok: true, key: 'drink' });

    // Thread B of u1: the user comes from the run config.
    expect(await runTool(acme(), recall, { userId: 'u1' })).toEqual({ ok: true, memories: [{ key: 'drink', fact: 'The user prefers green tea' }] });
    // Another user of the same tenant, and the same user id in another tenant, recall nothing.
    expect(await runTool(acme(), recall, { userId: 'u2' })).toEqual({ ok: true, memories: [] });
    expect(await runTool(globex(), recall, { userId: 'u1' })).toEqual({ ok: true, memories: [] });

    // The fact is a store item of its tenant, through the store API.
    const items = await acme().store.searchItems(['memories', 'u1']);
    expect(items.items.map((i) => [i.key, i.value])).toEqual([['drink', { fact: 'The user prefers green tea' }]]);
    expect((await globex().store.searchItems(['memories'])).items).toEqual([]);
  });

  it('without a user id, remember says so and stores nothing', async () => {
    const res = await runTool(globex(), { name: 'remember', args: { fact: 'shared by nobody' } }, {});
    expect(res.ok).toBe(false);
    expect(res.error).toMatch(/No user is known for this run/);
    expect((await globex().store.listNamespaces()).namespaces).toEqual([]);
  });

  it('remember of a secret stops for approval (the default rules) and is stored only once a human approves', async () => {
    const client = acme();
    const thread = await client.threads.create();
    const secret = { name: 'remember', args: { fact: 'api_key: sk-proj-abcdefghijklmnopqrstuvwxyz0123', key: 'creds' } };
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'remember my key' }] },
      config: withUser([{ tool_calls: [secret] }, { content: 'done' }], 'u9'),
    })) as Values & { __interrupt__?: Array<{ value: Record<string, unknown> }> };
    expect(values.__interrupt__?.[0]?.value).toMatchObject({ type: 'tool_approval', tool: 'remember', risk_level: 'critical', rule: 'global:critical' });
    expect(await client.store.getItem(memoryNamespaceOf('u9'), 'creds')).toBeNull();

    // Approved by a human: the fact is stored, for that user.
    const approved = (await client.runs.wait(thread.thread_id, 'agent', {
      command: { resume: { decision: 'approve', by: 'alice@example.com' } },
      config: withUser([{ content: 'Saved.' }], 'u9'),
    })) as Values & { __interrupt__?: unknown };
    expect(approved.__interrupt__).toBeUndefined();
    expect((await client.store.getItem(memoryNamespaceOf('u9'), 'creds'))?.value).toEqual({ fact: secret.args.fact });
  });

  it('forget removes the fact from later recalls of the user', async () => {
    await runTool(acme(), { name: 'remember', args: { fact: 'Works on green energy', key: 'job' } }, { userId: 'u5' });
    expect(await runTool(acme(), { name: 'forget', args: { key: 'job' } }, { userId: 'u5' })).toEqual({ ok: true, key: 'job' });
    expect(await runTool(acme(), { name: 'recall', args: { query: 'green' } }, { userId: 'u5' })).toEqual({ ok: true, memories: [] });
  });
}

describe('memory tools across threads (embedded, word match)', () => {
  const server = useEmbeddedServer('agentloop-e2e-memory-', { AGENTLOOP_API_KEYS: API_KEYS, ALLOW_SCRIPTED_MODEL: 'true' });
  memoryJourney(() => server.url);
});

describe('memory tools across threads (cluster, semantic recall)', () => {
  let cluster: ClusterHarness;
  let embeddings: Server;
  const embedded: string[] = [];
  beforeAll(async () => {
    // A fake OpenAI-compatible embeddings endpoint: one dimension per word of a small vocabulary.
    const vocabulary = ['tea', 'green', 'energy', 'key'];
    embeddings = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const { input } = JSON.parse(body) as { input: string[] };
        embedded.push(...input);
        const vector = (t: string) =>
          vocabulary.map(
            (w) =>
              t
                .toLowerCase()
                .split(/\W+/)
                .filter((x) => x === w).length + 0.01,
          );
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: input.map((t, index) => ({ index, embedding: vector(t) })) }));
      });
    });
    await new Promise<void>((r) => embeddings.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`;
    cluster = await startCluster({ env: { AGENTLOOP_API_KEYS: API_KEYS, STORE_EMBEDDINGS_MODEL: 'fake', STORE_EMBEDDINGS_BASE_URL: base } });
  }, 240_000);
  afterAll(async () => {
    await cluster?.stop();
    await new Promise((r) => embeddings?.close(r));
  });

  memoryJourney(() => cluster.url);

  it('embedded the remembered facts and the recall queries through the endpoint', () => {
    expect(embedded).toContain('The user prefers green tea');
    expect(embedded).toContain('green tea');
  });
});
