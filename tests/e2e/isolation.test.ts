/**
 * Tenant isolation in cluster mode (seed 004: checkpoints namespaced by
 * tenant, thread ids `<tenant>:<thread>`): with API keys for two tenants,
 * tenant B can neither read nor act on anything of tenant A's through the HTTP
 * API, A's checkpoints are not reachable under B's namespace, and the same
 * thread id used by both tenants holds two separate histories (and workspaces).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@langchain/langgraph-sdk';
import { MySQLSaver } from '@agentloop/checkpoint-mysql';
import { HELLO_TURNS, scripted, startCluster, type ClusterHarness } from './helpers.js';

const KEY_A = 'key-of-acme';
const KEY_B = 'key-of-globex';

type Values = { messages: Array<{ type: string; content: unknown; name?: string }> };

describe('tenant isolation (cluster, two API keys)', () => {
  let cluster: ClusterHarness;
  let a: Client;
  let b: Client;
  let saver: MySQLSaver;
  /** Tenant A's thread with one finished run (it wrote outputs/hello.txt). */
  let threadA: string;
  let runA: string;

  const call = (key: string, method: string, url: string, body?: unknown) =>
    fetch(`${cluster.url}${url}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const checkpoints = async (threadId: string) => {
    const out: Array<{ messages: Array<{ content: unknown }> }> = [];
    for await (const t of saver.list({ configurable: { thread_id: threadId } })) {
      out.push(t.checkpoint.channel_values as { messages: Array<{ content: unknown }> });
    }
    return out;
  };
  const contents = (v: Values) => v.messages.map((m) => m.content);

  beforeAll(async () => {
    cluster = await startCluster({ env: { AGENTLOOP_API_KEYS: `${KEY_A}:acme,${KEY_B}:globex`, TOOL_CALL_TIMEOUT_MS: '10000' } });
    a = new Client({ apiUrl: cluster.url, apiKey: KEY_A });
    b = new Client({ apiUrl: cluster.url, apiKey: KEY_B });
    saver = MySQLSaver.fromConnString(cluster.mysql.url);
    threadA = (await a.threads.create({ metadata: { owner: 'acme' } })).thread_id;
    const run = await a.runs.create(threadA, 'agent', { input: { messages: [{ role: 'user', content: 'acme secret task' }] }, config: scripted(HELLO_TURNS) });
    runA = run.run_id;
    await a.runs.join(threadA, runA);
  }, 240_000);

  afterAll(async () => {
    await saver?.end();
    await cluster?.stop();
  });

  it('rejects requests without a valid API key', async () => {
    expect((await fetch(`${cluster.url}/threads/${threadA}`)).status).toBe(401);
    expect((await call('not-a-key', 'GET', `/threads/${threadA}`)).status).toBe(401);
  });

  it("answers 404 to tenant B for every endpoint that reads or acts on tenant A's thread or run", async () => {
    const input = { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'x' }] }, config: scripted([{ content: 'x' }]) };
    const probes: Array<[string, string, unknown?]> = [
      ['GET', `/threads/${threadA}`],
      ['PATCH', `/threads/${threadA}`, { metadata: { owner: 'globex' } }],
      ['GET', `/threads/${threadA}/state`],
      ['POST', `/threads/${threadA}/history`, {}],
      ['GET', `/threads/${threadA}/runs`],
      ['GET', `/threads/${threadA}/runs/${runA}`],
      ['GET', `/threads/${threadA}/runs/${runA}/join`],
      ['GET', `/threads/${threadA}/runs/${runA}/stream`],
      ['GET', `/runs/${runA}/children`],
      ['POST', `/threads/${threadA}/runs`, input],
      ['POST', `/threads/${threadA}/runs/wait`, input],
      ['POST', `/threads/${threadA}/runs/stream`, input],
      ['DELETE', `/threads/${threadA}`],
    ];
    const statuses: Record<string, number> = {};
    for (const [method, url, body] of probes) statuses[`${method} ${url}`] = (await call(KEY_B, method, url, body)).status;
    expect(statuses).toEqual(Object.fromEntries(probes.map(([m, u]) => [`${m} ${u}`, 404])));

    // Nothing of A's changed, and A still sees it all.
    expect((await b.threads.search({ limit: 100 })).map((t) => t.thread_id)).not.toContain(threadA);
    expect((await a.threads.get(threadA)).metadata).toMatchObject({ owner: 'acme' });
    expect(await a.runs.list(threadA)).toHaveLength(1);
    expect(contents((await a.threads.getState(threadA)).values as Values).at(-1)).toBe('The file says: hello from the e2e test');
  });

  it("keeps tenant A's checkpoints out of tenant B's namespace in the checkpoint saver", async () => {
    const own = await checkpoints(`acme:${threadA}`);
    expect(own.length).toBeGreaterThan(0);
    expect(own[0]!.messages.map((m) => m.content)).toContain('acme secret task');
    expect(await checkpoints(`globex:${threadA}`)).toEqual([]);
    expect(await saver.getTuple({ configurable: { thread_id: `globex:${threadA}` } })).toBeUndefined();
    // The bare id is no namespace of anyone's either.
    expect(await checkpoints(threadA)).toEqual([]);
  });

  it('keeps two separate histories and workspaces when both tenants use the same thread id', async () => {
    // B creates its own thread under A's id and runs on it: it must start empty and see none of A's files.
    expect((await call(KEY_B, 'POST', '/threads', { thread_id: threadA, metadata: { owner: 'globex' } })).status).toBe(200);
    const valuesB = (await b.runs.wait(threadA, 'agent', {
      input: { messages: [{ role: 'user', content: 'globex task' }] },
      config: scripted([{ tool_calls: [{ name: 'read_file', args: { file_path: 'outputs/hello.txt' } }] }, { content: 'globex done' }]),
    })) as Values;
    expect(valuesB.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(contents(valuesB)).not.toContain('acme secret task');
    expect(String(valuesB.messages[2]!.content)).toMatch(/^Error:/);
    expect(existsSync(path.join(cluster.workspaceRoot, 'globex', threadA, 'outputs', 'hello.txt'))).toBe(false);
    expect(existsSync(path.join(cluster.workspaceRoot, 'acme', threadA, 'outputs', 'hello.txt'))).toBe(true);

    // A runs again on its thread: its history continues from its own messages only.
    const valuesA = (await a.runs.wait(threadA, 'agent', {
      input: { messages: [{ role: 'user', content: 'acme again' }] },
      config: scripted([{ content: 'acme done' }]),
    })) as Values;
    expect(contents(valuesA)).toContain('acme secret task');
    expect(contents(valuesA)).not.toContain('globex task');
    expect(contents(valuesA).at(-1)).toBe('acme done');

    // Each tenant sees its own state, runs and metadata under the shared id; the saver keeps two histories.
    expect(contents((await b.threads.getState(threadA)).values as Values).at(-1)).toBe('globex done');
    expect((await b.threads.get(threadA)).metadata).toMatchObject({ owner: 'globex' });
    expect(await a.runs.list(threadA)).toHaveLength(2);
    expect(await b.runs.list(threadA)).toHaveLength(1);
    const latestA = (await checkpoints(`acme:${threadA}`))[0]!.messages.map((m) => m.content);
    const latestB = (await checkpoints(`globex:${threadA}`))[0]!.messages.map((m) => m.content);
    expect(latestA).toContain('acme again');
    expect(latestA).not.toContain('globex task');
    expect(latestB).toContain('globex task');
    expect(latestB).not.toContain('acme secret task');

    // Deleting B's thread leaves A's thread, checkpoints and workspace alone.
    expect((await call(KEY_B, 'DELETE', `/threads/${threadA}`)).status).toBe(204);
    expect(await checkpoints(`globex:${threadA}`)).toEqual([]);
    expect((await checkpoints(`acme:${threadA}`)).length).toBeGreaterThan(0);
    expect(existsSync(path.join(cluster.workspaceRoot, 'acme', threadA, 'outputs', 'hello.txt'))).toBe(true);
    expect((await a.threads.get(threadA)).thread_id).toBe(threadA);
  });
});
