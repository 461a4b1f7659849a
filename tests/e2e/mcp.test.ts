/**
 * MCP end to end (embedded): an MCP server configured in mcp_servers.yaml is started on first need
 * by the MCP broker, its tools are offered to the model beside the built-in ones, and a call reaches
 * it — through the approval check and the effect ledger like any tool. Then what servers answer
 * and servers that are off or down (issue 14): images saved to the thread's outputs/mcp/, a
 * disabled server's tools, a fallback server, and one server restarted by an operator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@langchain/langgraph-sdk';
import { startEmbedded, type EmbeddedServer } from '@agentloop/agentloop-app';
import { scripted, useCluster, useEmbeddedServer } from './helpers.js';
import { EMBEDDED_TEST_THREADS } from './test-threads.js';

type Msg = { type: string; content: string; name?: string };
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const echoServer = path.join(repoRoot, 'services/mcp-broker/src/testing/echo-server.ts');

/** The lines of an mcp_servers.yaml entry running the test echo server from source, plus `extra`. */
const echoEntry = (extra: string[] = []) => [
  `    command: ${JSON.stringify(process.execPath)}`,
  `    args: ${JSON.stringify(['--conditions=@agentloop/source', '--import', 'tsx', echoServer])}`,
  `    cwd: ${JSON.stringify(repoRoot)}`,
  ...extra,
];

/** Writes `<dir>/mcp_servers.yaml` with these servers (id → entry lines) and returns its path. */
function writeMcpConfig(dir: string, servers: Record<string, string[]>): string {
  const file = path.join(dir, 'mcp_servers.yaml');
  writeFileSync(file, ['servers:', ...Object.entries(servers).flatMap(([id, lines]) => [`  ${id}:`, ...lines]), ''].join('\n'));
  return file;
}

describe('MCP tools (embedded)', () => {
  let server: EmbeddedServer;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-e2e-'));
    const config = writeMcpConfig(dataDir, {
      echo: echoEntry(['    start_timeout_ms: 30000', '    tools:', '      echo: { always_available: true, alias: mcp_echo }']),
    });
    server = await startEmbedded({ env: { DATA_DIR: dataDir, EMBEDDED_THREADS: EMBEDDED_TEST_THREADS, LOG_LEVEL: 'warn', MCP_CONFIG: config }, port: 0 });
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

describe('MCP results, disabled and fallback servers, reload_mcp_server (embedded)', () => {
  const TENANT_KEY = 'mcp-tenant-key';
  const ADMIN_KEY = 'mcp-admin-key';
  const configDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-config-'));
  const started = ['    start_timeout_ms: 30000'];
  const config = writeMcpConfig(configDir, {
    echo: echoEntry([...started, '    tools:', '      picture: { always_available: true }']),
    off: echoEntry([...started, '    enabled: false']),
    broken: echoEntry([...started, '    env: { MCP_TEST_FAIL_START: "1" }', '    fallback: echo']),
  });
  const server = useEmbeddedServer('agentloop-mcp-content-', {
    MCP_CONFIG: config,
    AGENTLOOP_API_KEYS: `${TENANT_KEY}:acme`,
    AGENTLOOP_ADMIN_KEYS: `${ADMIN_KEY}:ops`,
    ALLOW_SCRIPTED_MODEL: 'true',
  });
  afterAll(() => rmSync(configDir, { recursive: true, force: true }));

  async function toolMessages(calls: Array<{ name: string; args: object }>): Promise<{ threadId: string; tools: Msg[] }> {
    const client = new Client({ apiUrl: server.url, apiKey: TENANT_KEY });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'use the MCP tools' }] },
      config: scripted([{ tool_calls: calls }, { content: 'done' }]),
    })) as { messages: Msg[] };
    return { threadId: thread.thread_id, tools: values.messages.filter((m) => m.type === 'tool') };
  }

  it("saves an image to the thread's outputs/mcp/, names it to the model; a disabled server says so; a fallback answers for a dead server", async () => {
    const { threadId, tools } = await toolMessages([
      { name: 'echo_picture', args: {} },
      { name: 'off_echo', args: { text: 'x' } },
      { name: 'broken_add', args: { a: 40, b: 2 } },
    ]);
    const [picture, off, fallback] = tools.map((t) => t.content);
    expect(picture).toContain('[image saved to outputs/mcp/echo-picture-1.png (image/png, 70 bytes)]');
    const png = readFileSync(path.join(server.dataDir, 'workspaces', 'acme', threadId, 'outputs', 'mcp', 'echo-picture-1.png'));
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(off).toBe('Error: Tool off_echo is disabled in the MCP configuration');
    expect(fallback).toMatch(/^\[answered by fallback MCP server echo: broken is unavailable \(MCP server broken did not start: .*\)\]\n42$/s);
  }, 90_000);

  async function reloadServer(id: string, key: string): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${server.url}/admin/mcp/servers/${id}/reload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      // The route's default wait (10 s): with orchestrator threads every thread's broker restarts the
      // server, and on a loaded machine two restarts of a tsx-run server took longer than 5 s.
      body: JSON.stringify({}),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('POST /admin/mcp/servers/{id}/reload restarts the server on every broker replica (operator keys only)', async () => {
    expect((await reloadServer('echo', TENANT_KEY)).status).toBe(403);
    const ok = await reloadServer('echo', ADMIN_KEY);
    expect(ok.status).toBe(200);
    // One broker per orchestrator thread (EMBEDDED_THREADS), each a replica of its own; one without threads.
    const replicas = ok.body.replicas as Array<Record<string, unknown>>;
    expect(replicas).toHaveLength(Math.max(1, server.server.orchestratorThreadIds.length));
    expect(ok.body).toMatchObject({ server: 'echo', ok: true });
    for (const r of replicas) expect(r).toMatchObject({ ok: true, state: 'running', tools: expect.any(Number) as unknown });
    const off = await reloadServer('off', ADMIN_KEY);
    expect(off.status).toBe(404);
    expect(off.body.detail).toBe('MCP server not found: off (not configured, or disabled, in mcp_servers.yaml)');
    const bad = await reloadServer('no%20such', ADMIN_KEY);
    expect(bad.status).toBe(422);
    expect(String(bad.body.detail)).toMatch(/params\.id/);
  }, 60_000);
});

describe('a slow MCP server missed by the first listing (embedded)', () => {
  const configDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-slow-config-'));
  // Starts in 8 s, longer than a listing waits (the orchestrator's 5 s list deadline), like `npx -y` fetching a package.
  const config = writeMcpConfig(configDir, {
    slow: echoEntry(['    env: { MCP_TEST_START_DELAY_MS: "8000" }', '    start_timeout_ms: 60000', '    tools:', '      echo: { always_available: true }']),
  });
  // Listings cached for a minute: only the broker's announcement makes the second model call list again.
  const server = useEmbeddedServer('agentloop-mcp-slow-', { MCP_CONFIG: config, TOOL_LIST_CACHE_MS: '60000' });
  afterAll(() => rmSync(configDir, { recursive: true, force: true }));

  it("is offered on the run's next model call once it is up", async () => {
    const client = new Client({ apiUrl: server.url });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'echo once the server is up' }] },
      // The first call names the tool anyway: the broker waits for the start the boot began.
      config: scripted([{ tool_calls: [{ name: 'slow_echo', args: { text: 'up' } }] }, { content: 'done' }]),
    })) as { messages: Array<Msg & { response_metadata?: { seen?: { tools?: string[] } } }> };
    const seen = values.messages.filter((m) => m.type === 'ai').map((m) => m.response_metadata?.seen?.tools ?? []);
    expect(seen).toHaveLength(2);
    expect(seen[0]).not.toContain('slow_echo');
    expect(values.messages.find((m) => m.type === 'tool')?.content).toBe('up');
    expect(seen[1]).toContain('slow_echo');
  }, 90_000);
});

describe('MCP results and reload_mcp_server (cluster)', () => {
  const TENANT_KEY = 'mcp-cluster-tenant-key';
  const ADMIN_KEY = 'mcp-cluster-admin-key';
  const configDir = mkdtempSync(path.join(tmpdir(), 'agentloop-mcp-cluster-config-'));
  const config = writeMcpConfig(configDir, {
    echo: echoEntry(['    start_timeout_ms: 30000', '    tools:', '      picture: { always_available: true }']),
  });
  const cluster = useCluster({
    env: { MCP_CONFIG: config, AGENTLOOP_API_KEYS: `${TENANT_KEY}:acme`, AGENTLOOP_ADMIN_KEYS: `${ADMIN_KEY}:ops`, ALLOW_SCRIPTED_MODEL: 'true' },
  });
  afterAll(() => rmSync(configDir, { recursive: true, force: true }));

  it("two broker replicas over NATS: an image lands in the thread's outputs/mcp/, and a server reload is answered by both", async () => {
    const c = cluster();
    const from = c.logs.length;
    c.start('mcp-broker', 1);
    c.start('mcp-broker', 2);
    await c.waitLog(/\[mcp-broker#1\].*mcp-broker serving/, from, 90_000);
    await c.waitLog(/\[mcp-broker#2\].*mcp-broker serving/, from, 90_000);

    const client = new Client({ apiUrl: c.url, apiKey: TENANT_KEY });
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'show me the picture' }] },
      config: scripted([{ tool_calls: [{ name: 'echo_picture', args: {} }] }, { content: 'done' }]),
    })) as { messages: Msg[] };
    const tool = values.messages.find((m) => m.type === 'tool');
    expect(tool?.content).toContain('[image saved to outputs/mcp/echo-picture-1.png (image/png, 70 bytes)]');
    const png = readFileSync(path.join(c.workspaceRoot, 'acme', thread.thread_id, 'outputs', 'mcp', 'echo-picture-1.png'));
    expect(png.length).toBe(70);

    const res = await fetch(`${c.url}/admin/mcp/servers/echo/reload`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ADMIN_KEY },
      body: JSON.stringify({ wait_ms: 15000 }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ok: boolean; replicas: Array<{ instance: string; ok: boolean; state?: string }> };
    expect(body.ok).toBe(true);
    expect(body.replicas).toHaveLength(2);
    expect(new Set(body.replicas.map((r) => r.instance)).size).toBe(2);
    for (const r of body.replicas) expect(r).toMatchObject({ ok: true, state: 'running' });
  }, 240_000);
});
