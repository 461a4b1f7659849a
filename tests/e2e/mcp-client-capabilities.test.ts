/**
 * MCP client capabilities end to end (issue 14), against the reference server-everything over
 * stdio: progress notifications of a long call stream to the client as `tools` events
 * (on_tool_event) between the call's start and end.
 */
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { scripted } from './helpers.js';

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
      ...extra,
      '',
    ].join('\n'),
  );
  return file;
}

describe('MCP client capabilities (embedded, server-everything over stdio)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-client-'));
    const config = everythingConfig(dataDir);
    server = await startEmbedded({ env: { DATA_DIR: dataDir, LOG_LEVEL: 'warn', MCP_CONFIG: config }, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
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

    expect(events.map((e) => [e.event, e.name, e.toolCallId])).toEqual([
      ['on_tool_start', 'long_operation', 'call-long-1'],
      ['on_tool_event', 'long_operation', 'call-long-1'],
      ['on_tool_event', 'long_operation', 'call-long-1'],
      ['on_tool_event', 'long_operation', 'call-long-1'],
      ['on_tool_end', 'long_operation', 'call-long-1'],
    ]);
    expect(events.filter((e) => e.event === 'on_tool_event').map((e) => e.data)).toEqual([
      { type: 'progress', progress: 1, total: 3 },
      { type: 'progress', progress: 2, total: 3 },
      { type: 'progress', progress: 3, total: 3 },
    ]);
    expect(events[1]!.display_name).toBe('everything: Trigger Long Running Operation Tool');
  }, 90_000);
});
