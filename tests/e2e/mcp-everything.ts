/**
 * server-everything (the MCP reference server) as AgentLoop's MCP server in the e2e tests of the MCP
 * client features (tests/e2e/mcp-client-capabilities*.test.ts): its configuration, and the checks
 * both modes run against a started AgentLoop.
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { scripted } from './helpers.js';
import type { FakeOpenAi } from './fake-openai.js';

const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

/** What the fake model answers to a sampling request. */
export const SAMPLED_ANSWER = 'Agents loop; tools answer.';

/**
 * Writes mcp_servers.yaml into `dir` (the one writer of the e2e tests' server-everything config):
 * server-everything over stdio, the given tools always offered (`name: '{ alias: x, … }'` flow
 * mappings, `always_available` added), then any further lines of the server's entry.
 */
export function writeEverythingConfig(dir: string, tools: Record<string, string>, extra: readonly string[] = []): string {
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
      ...Object.entries(tools).map(([name, opts]) => `      ${name}: { always_available: true, ${opts} }`),
      ...extra,
      '',
    ].join('\n'),
  );
  return file;
}

/** server-everything with roots and sampling (slot base, 64 tokens), its progress, roots and sampling tools offered. */
export function everythingConfig(dir: string): string {
  return writeEverythingConfig(
    dir,
    {
      'trigger-long-running-operation': 'alias: long_operation',
      'get-roots-list': 'alias: list_roots',
      'trigger-sampling-request': 'alias: sample_model',
    },
    ['    roots:', '      - { uri: "file:///srv/shared-docs", name: shared docs }', '    sampling: { slot: base, max_tokens: 64 }'],
  );
}

/** The model slot environment pointing `base` at the fake model. */
export const modelEnv = (model: FakeOpenAi) => ({ MODEL_BASE_API_KEY: 'test-key', MODEL_BASE_BASE_URL: model.baseUrl, MODEL_BASE_ID: 'fake-base' });

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

/** A 3-step long operation streams its progress as `tools` on_tool_events between start and end. */
export async function expectProgressStreamed(url: string): Promise<void> {
  const client = new Client({ apiUrl: url });
  const thread = await client.threads.create();
  const events: Array<Record<string, unknown>> = [];
  const stream = client.runs.stream(thread.thread_id, 'agent', {
    input: { messages: [{ role: 'user', content: 'run the long operation' }] },
    config: scripted([{ tool_calls: [{ name: 'long_operation', args: { duration: 0.6, steps: 3 }, id: 'call-long-1' }] }, { content: 'done' }]),
    streamMode: ['tools'],
  });
  for await (const chunk of stream) if (chunk.event === 'tools') events.push(chunk.data as Record<string, unknown>);

  const names = events.map((e) => [e.event, e.name, e.toolCallId]);
  expect(names).toEqual([
    ['on_tool_start', 'long_operation', 'call-long-1'],
    ['on_tool_event', 'long_operation', 'call-long-1'],
    ['on_tool_event', 'long_operation', 'call-long-1'],
    ['on_tool_event', 'long_operation', 'call-long-1'],
    ['on_tool_end', 'long_operation', 'call-long-1'],
  ]);
  const progress = events.filter((e) => e.event === 'on_tool_event');
  // Every step, the last one (sent right before the result) included: see progress-order.ts.
  expect(progress.map((e) => e.data)).toEqual([
    { type: 'progress', progress: 1, total: 3 },
    { type: 'progress', progress: 2, total: 3 },
    { type: 'progress', progress: 3, total: 3 },
  ]);
  expect(progress[0]!.display_name).toBe('everything: Trigger Long Running Operation Tool');
}

/** roots/list is answered with the server's configured roots. */
export async function expectConfiguredRoots(url: string): Promise<void> {
  const text = await callOnce(url, 'list_roots', {});
  expect(text).toContain('Current MCP Roots (1 total)');
  expect(text).toContain('1. shared docs\n   URI: file:///srv/shared-docs');
}

/** A sampling request during a call is answered by the base slot (the fake model), capped at the server's 64 tokens. */
export async function expectSamplingAnswered(url: string, model: FakeOpenAi): Promise<void> {
  const before = model.requests.length;
  const text = await callOnce(url, 'sample_model', { prompt: 'a haiku about agents', maxTokens: 500 });
  const result = JSON.parse(text.slice(text.indexOf('{'))) as Record<string, unknown>;
  expect(result).toMatchObject({ model: 'fake-base', role: 'assistant', content: { type: 'text', text: SAMPLED_ANSWER }, stopReason: 'endTurn' });
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
}
