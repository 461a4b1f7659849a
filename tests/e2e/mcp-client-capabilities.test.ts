/**
 * MCP client capabilities end to end (issue 14), against the reference server-everything over
 * stdio: progress notifications of a long call stream to the client as `tools` events
 * (on_tool_event) between the call's start and end; `roots/list` is answered with the server's
 * configured roots; a sampling request during a call is answered by the run's base model slot
 * (a fake OpenAI-compatible server) through the orchestrator.
 */
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { scripted } from './helpers.js';
import { startFakeOpenAi, type FakeOpenAi } from './fake-openai.js';

const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

/** mcp_servers.yaml with server-everything over stdio; `extra` lines are added to its entry. */
function everythingConfig(dir: string, extra: string[] = []): string {
  const file = path.join(dir, 'mcp_servers.yaml');
  writeFileSync(
    file,
    [
      'servers:',
      '  everything:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: ${JSON.stringify([EVERYTHING, 'stdio'])}`,
      '    start_timeout_ms: 30000',
      '    tools:',
      '      trigger-long-running-operation: { always_available: true, alias: long_operation }',
      '      get-roots-list: { always_available: true, alias: list_roots }',
      '      trigger-sampling-request: { always_available: true, alias: sample_model }',
      '    roots:',
      '      - { uri: "file:///srv/shared-docs", name: shared docs }',
      '    sampling: { slot: base, max_tokens: 64 }',
      ...extra,
      '',
    ].join('\n'),
  );
  return file;
}

describe('MCP client capabilities (embedded, server-everything over stdio)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  let model: FakeOpenAi;
  beforeAll(async () => {
    model = await startFakeOpenAi({ respond: () => ({ answer: 'Agents loop; tools answer.' }) });
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-client-'));
    const config = everythingConfig(dataDir);
    const env = {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      MCP_CONFIG: config,
      MODEL_BASE_API_KEY: 'test-key',
      MODEL_BASE_BASE_URL: model.baseUrl,
      MODEL_BASE_ID: 'fake-base',
    };
    server = await startEmbedded({ env, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await model?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('streams the progress notifications of a long call as tools events', async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const events: Array<Record<string, unknown>> = [];
    const stream = client.runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'run the long operation' }] },
      config: scripted([{ tool_calls: [{ name: 'long_operation', args: { duration: 0.6, steps: 3 }, id: 'call-long-1' }] }, { content: 'done' }]),
      streamMode: ['tools'],
    });
    for await (const chunk of stream) if (chunk.event === 'tools') events.push(chunk.data as Record<string, unknown>);

    // The SDK hands a notification to its handler a microtask after reading it, but settles the
    // response at once: the progress sent right before the result (the last step's) may be dropped.
    // Every step followed by another one is reported, in order.
    const names = events.map((e) => [e.event, e.name, e.toolCallId]);
    expect(names[0]).toEqual(['on_tool_start', 'long_operation', 'call-long-1']);
    expect(names.at(-1)).toEqual(['on_tool_end', 'long_operation', 'call-long-1']);
    const progress = events.filter((e) => e.event === 'on_tool_event');
    expect(progress.every((e) => e.name === 'long_operation' && e.toolCallId === 'call-long-1')).toBe(true);
    expect(progress.length).toBe(events.length - 2);
    expect(progress.map((e) => e.data).slice(0, 2)).toEqual([
      { type: 'progress', progress: 1, total: 3 },
      { type: 'progress', progress: 2, total: 3 },
    ]);
    expect(progress.length === 2 || JSON.stringify(progress[2]!.data) === JSON.stringify({ type: 'progress', progress: 3, total: 3 })).toBe(true);
    expect(events[1]!.display_name).toBe('everything: Trigger Long Running Operation Tool');
  }, 90_000);

  it("answers roots/list with the server's configured roots (never a run's workspace)", async () => {
    const text = await callOnce(server.url, 'list_roots', {});
    expect(text).toContain('Current MCP Roots (1 total)');
    expect(text).toContain('1. shared docs\n   URI: file:///srv/shared-docs');
  }, 60_000);

  it("answers a sampling request during a call on the run's base model slot, capped by the server's max_tokens", async () => {
    const before = model.requests.length;
    const text = await callOnce(server.url, 'sample_model', { prompt: 'a haiku about agents', maxTokens: 500 });
    const result = JSON.parse(text.slice(text.indexOf('{'))) as Record<string, unknown>;
    expect(result).toMatchObject({
      model: 'fake-base',
      role: 'assistant',
      content: { type: 'text', text: 'Agents loop; tools answer.' },
      stopReason: 'endTurn',
    });
    const sent = model.requests.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({
      model: 'fake-base',
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'You are a helpful test server.' },
        { role: 'user', content: 'Resource trigger-sampling-request context: a haiku about agents' },
      ],
    });
  }, 60_000);
});

/** The content of the ToolMessage of a run that makes one scripted call. */
async function callOnce(url: string, tool: string, args: Record<string, unknown>): Promise<string> {
  const client = new Client({ apiUrl: url });
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: `call ${tool}` }] },
    config: scripted([{ tool_calls: [{ name: tool, args, id: `call-${tool}` }] }, { content: 'done' }]),
  })) as { messages: Array<{ type: string; content: string; name?: string }> };
  const message = values.messages.find((m) => m.type === 'tool' && m.name === tool);
  if (!message) throw new Error(`no result of ${tool}: ${JSON.stringify(values.messages)}`);
  return message.content;
}
