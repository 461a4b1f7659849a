/**
 * MCP end to end (embedded): an MCP server configured in mcp_servers.yaml is started on first need
 * by the MCP broker, its tools are offered to the model beside the built-in ones, and a call reaches
 * it — through the approval check and the effect ledger like any tool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { scripted } from './helpers.js';

type Msg = { type: string; content: string; name?: string };
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const echoServer = path.join(repoRoot, 'services/mcp-broker/src/testing/echo-server.ts');

describe('MCP tools (embedded)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-e2e-'));
    const config = path.join(dataDir, 'mcp_servers.yaml');
    writeFileSync(
      config,
      [
        'servers:',
        '  echo:',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: ${JSON.stringify(['--conditions=@agentloop/source', '--import', 'tsx', echoServer])}`,
        `    cwd: ${JSON.stringify(repoRoot)}`,
        '    start_timeout_ms: 30000',
        '    tools:',
        '      echo: { always_available: true, alias: mcp_echo }',
        '',
      ].join('\n'),
    );
    server = await startEmbedded({ env: { DATA_DIR: dataDir, LOG_LEVEL: 'warn', MCP_CONFIG: config }, port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('offers the MCP tool and calls it; an on-demand tool appears when mentioned', async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'echo something, then add with @echo_add' }] },
      config: scripted([
        {
          tool_calls: [
            { name: 'mcp_echo', args: { text: 'from the MCP server' } },
            { name: 'echo_add', args: { a: 20, b: 22 } },
          ],
        },
        { content: 'done' },
      ]),
    })) as { messages: Msg[] };
    const tools = values.messages.filter((m) => m.type === 'tool');
    expect(tools.map((t) => [t.name, t.content])).toEqual([
      ['mcp_echo', 'from the MCP server'],
      ['echo_add', '42'],
    ]);
  }, 60_000);
});
