import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Headers, MemoryBus, type Bus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import {
  ExecuteToolRequestSchema,
  ExecuteToolResponseSchema,
  ListToolsRequestSchema,
  ListToolsResponseSchema,
  create,
  fromBinary,
  toBinary,
} from '@agentloop/proto';
import { loadMcpBrokerConfig, parseMcpFile } from './config.js';
import { MCP_SUBJECTS, createMcpBroker, type McpBroker } from './service.js';
import { ECHO_SERVER_SCRIPT, MALFORMED_SERVER_SCRIPT, serverCommand, startHttpEchoServer, type HttpMcpServer } from './testing/index.js';

let dir: string;
let spawnLog: string;
let bus: Bus;
let broker: McpBroker | undefined;
let remote: HttpMcpServer | undefined;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-broker-'));
  spawnLog = path.join(dir, 'spawns.log');
});
afterEach(async () => {
  await broker?.stop();
  await bus?.close();
  await remote?.close();
  broker = undefined;
  remote = undefined;
  await rm(dir, { recursive: true, force: true });
});

const spawns = async () => (await readFile(spawnLog, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;

const echo = serverCommand(ECHO_SERVER_SCRIPT);
const stdio = (extra = '') => `
    command: ${JSON.stringify(echo.command)}
    args: ${JSON.stringify(echo.args)}
    env: { MCP_TEST_SPAWN_LOG: ${JSON.stringify(spawnLog)} }
    start_timeout_ms: 30000${extra}`;

/** `echo`: some tools always available (one aliased, one disabled); `ondemand`: acme only, nothing always available. */
const standard = () => `
servers:
  echo:${stdio()}
    tools:
      echo: { always_available: true, alias: mcp_echo, description: "Repeat a text" }
      add: { always_available: true }
      fail: { always_available: true }
      env: { enabled: false }
  ondemand:${stdio()}
    tenants: [acme]
`;

async function setup(yaml: string, env: Record<string, string> = {}, configEnv: Record<string, string> = {}) {
  bus = new MemoryBus();
  broker = await createMcpBroker({
    bus,
    logger: silentLogger(),
    config: loadMcpBrokerConfig({ MCP_CALL_TIMEOUT_MS: '20000', ...configEnv }),
    file: parseMcpFile(yaml),
    env: { PATH: process.env.PATH, ...env },
  });
  await broker.start();
}

async function list(tenantId = 'acme', mentioned: string[] = [], allowed: string[] = []) {
  const req = create(ListToolsRequestSchema, { tenantId, mentioned, allowed, visible: true });
  const reply = await bus.request(MCP_SUBJECTS.toolsList, toBinary(ListToolsRequestSchema, req), {
    timeoutMs: 30_000,
    headers: { [Headers.tenant]: tenantId },
  });
  return fromBinary(ListToolsResponseSchema, reply.data);
}
const names = async (tenantId = 'acme', mentioned: string[] = []) => (await list(tenantId, mentioned)).tools.map((t) => t.name);

async function call(toolName: string, args: object | string, opts: { tenantId?: string; timeoutMs?: number; headerTenant?: string } = {}) {
  const tenantId = opts.tenantId ?? 'acme';
  const req = create(ExecuteToolRequestSchema, {
    tenantId,
    toolName,
    argsJson: typeof args === 'string' ? args : JSON.stringify(args),
    runId: 'run-1',
    toolCallId: 'c1',
  });
  const reply = await bus.request(MCP_SUBJECTS.toolsExecute, toBinary(ExecuteToolRequestSchema, req), {
    timeoutMs: opts.timeoutMs ?? 30_000,
    headers: { [Headers.tenant]: opts.headerTenant ?? tenantId },
  });
  return fromBinary(ExecuteToolResponseSchema, reply.data);
}

describe('MCP broker: lazy start and visibility', () => {
  it('starts only the servers with always-available tools at boot, in the background', async () => {
    await setup(standard());
    expect(await names()).toEqual(['echo_add', 'echo_fail', 'mcp_echo']);
    expect(broker!.pool.running()).toEqual(['echo']);
    expect(await spawns()).toBe(1);
  });

  it('a listing with only on-demand servers spawns nothing and lists nothing', async () => {
    await setup(`
servers:
  ondemand:${stdio()}
`);
    const res = await list();
    expect(res.tools).toEqual([]);
    expect(await spawns()).toBe(0);
  });

  it('mentioning a server id lists its enabled tools; mentioning a tool lists that tool only', async () => {
    await setup(standard());
    const all = await names('acme', ['ondemand']);
    expect(all).toEqual(expect.arrayContaining(['ondemand_echo', 'ondemand_add', 'ondemand_env', 'ondemand_read_file', 'mcp_echo']));
    await broker!.stop();
    await setup(standard());
    const one = await names('acme', ['ondemand_add']);
    expect(one.filter((n) => n.startsWith('ondemand_'))).toEqual(['ondemand_add']);
  });

  it('a listing does not wait past its deadline for a slow server, which joins a later listing', async () => {
    await setup(`
servers:
  slowstart:
    command: ${JSON.stringify(echo.command)}
    args: ${JSON.stringify(echo.args)}
    env: { MCP_TEST_START_DELAY_MS: "6000" }
    tools: { echo: { always_available: true } }
  echo:${stdio()}
    tools: { echo: { always_available: true } }
`);
    // The slow server cannot be ready within this request's 2 s deadline: it waits 6 s before it answers.
    const first = await bus.request(
      MCP_SUBJECTS.toolsList,
      toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId: 'acme', visible: true })),
      { timeoutMs: 2_000 },
    );
    expect(fromBinary(ListToolsResponseSchema, first.data).tools.map((t) => t.name)).not.toContain('slowstart_echo');
    await vi.waitFor(async () => expect(await names()).toEqual(['echo_echo', 'slowstart_echo']), { timeout: 30_000, interval: 500 });
  });

  it('a skill allowing an MCP tool lists it like a mention', async () => {
    await setup(standard());
    expect((await list('acme', [], ['ondemand_echo'])).tools.map((t) => t.name)).toContain('ondemand_echo');
  });

  it('disabled tools are never listed, not even when mentioned, and cannot be called', async () => {
    await setup(standard());
    const res = await list('acme', ['echo_env', 'echo']);
    expect(res.tools.map((t) => t.name)).not.toContain('echo_env');
    expect(res.tools.map((t) => t.name)).toContain('echo_crash');
    expect(res.notFound).toEqual(['echo_env']);
    const out = await call('echo_env', {});
    expect(out.content).toBe('Error: Tool echo_env is disabled in the MCP configuration');
    expect(out.error?.code).toBe('NOT_FOUND');
  });

  it('tenant allowlists hide a server from other tenants, in listings and calls', async () => {
    await setup(standard());
    expect(await names('globex', ['ondemand', 'ondemand_echo'])).not.toContain('ondemand_echo');
    expect((await list('globex', ['ondemand'])).notFound).toEqual(['ondemand']);
    expect((await call('ondemand_echo', { text: 'x' }, { tenantId: 'globex' })).content).toBe('Error: Unknown tool: ondemand_echo');
    expect((await call('ondemand_echo', { text: 'x' }, { tenantId: 'acme' })).content).toBe('x');
  });

  it('describes each tool with its server, its JSON Schema and MCP metadata', async () => {
    await setup(standard());
    const tools = (await list('acme', ['echo_picture'])).tools;
    const echoSpec = tools.find((t) => t.name === 'mcp_echo')!;
    expect(echoSpec.description).toBe('[echo] Repeat a text');
    expect(JSON.parse(echoSpec.parametersJsonSchema)).toMatchObject({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    expect(echoSpec.metadata).toMatchObject({ category: 'mcp', tags: ['echo'], idempotent: true, enabled: true });
    expect(tools.find((t) => t.name === 'echo_add')!.metadata?.idempotent).toBe(false);
    expect(tools.find((t) => t.name === 'echo_picture')!.metadata?.idempotent).toBe(true);
    expect(tools.find((t) => t.name === 'echo_add')!.description).toBe('[echo] Add two numbers');
  });

  it('a name clash is resolved: the alias keeps the name, the generated name gets a hash suffix, both are callable', async () => {
    await setup(`
servers:
  a:${stdio()}
    tools: { add: { always_available: true, alias: b_echo } }
  b:${stdio()}
    tools: { echo: { always_available: true } }
`);
    const listed = await names();
    expect(listed).toHaveLength(2);
    expect(listed).toContain('b_echo');
    const hashed = listed.find((n) => n !== 'b_echo')!;
    expect(hashed).toMatch(/^b_echo_[0-9a-f]{8}$/);
    expect((await call('b_echo', { a: 1, b: 2 })).content).toBe('3');
    expect((await call(hashed, { text: 'from b' })).content).toBe('from b');
  });

  it('tool names are sanitized to the characters models accept', async () => {
    await setup(`
servers:
  echo:${stdio()}
    tools: { read.file: { always_available: true } }
`);
    expect(await names()).toEqual(['echo_read_file']);
    expect((await call('echo_read_file', {})).content).toBe('dotted');
  });
});

describe('MCP broker: calls', () => {
  it('calls tools and passes results back as text', async () => {
    await setup(standard());
    expect((await call('mcp_echo', { text: 'ping' })).content).toBe('ping');
    const add = await call('echo_add', { a: 2, b: 3 });
    expect(add.content).toBe('5');
    expect(add.error).toBeUndefined();
  });

  it('calls a tool of a server no listing has started (another replica listed it)', async () => {
    await setup(standard());
    expect(await spawns()).toBe(0);
    expect((await call('ondemand_add', { a: 40, b: 2 })).content).toBe('42');
  });

  it('an isError result is an "Error:" content with a TOOL_FAILED error', async () => {
    await setup(standard());
    const res = await call('echo_fail', {});
    expect(res.content).toBe('Error: it broke');
    expect(res.error).toMatchObject({ code: 'TOOL_FAILED', message: 'it broke' });
  });

  it('summarizes images and resources, uses structuredContent, and caps long results', async () => {
    await setup(standard(), {}, { MCP_MAX_RESULT_BYTES: '1024' });
    expect((await call('echo_picture', {})).content).toBe(
      'here you go\n[image: image/png, 70 bytes]\n[resource: file:///srv/report.pdf (report.pdf)]\n[resource: file:///srv/notes.txt]\nthe notes',
    );
    expect((await call('echo_sum', { values: [1, 2, 3] })).content).toBe('{"sum":6}');
    const big = (await call('echo_big', { bytes: 5000 })).content;
    expect(big).toContain('[result truncated: 5000 bytes, the first 1024 shown]');
    expect(big.startsWith('x'.repeat(1024))).toBe(true);
  });

  it('unknown tools, bad arguments and a tenant mismatch are clear errors', async () => {
    await setup(standard());
    expect((await call('nope_tool', {})).content).toBe('Error: Unknown tool: nope_tool');
    const bad = await call('mcp_echo', '{not json');
    expect(bad.content).toMatch(/^Error: Invalid arguments for mcp_echo: not valid JSON/);
    expect(bad.error?.code).toBe('INVALID_ARGUMENT');
    expect((await call('mcp_echo', '[1]')).content).toBe('Error: Invalid arguments for mcp_echo: expected a JSON object');
    const deep = await call('mcp_echo', `{"text":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    expect(deep.content).toBe('Error: Invalid arguments for mcp_echo: nested deeper than 64 levels of arrays and objects (the limit)');
    expect(deep.error?.code).toBe('INVALID_ARGUMENT');
    const rejected = await call('mcp_echo', { text: 42 });
    expect(rejected.content).toMatch(/^Error: /);
    const mismatch = await call('mcp_echo', { text: 'x' }, { headerTenant: 'globex' });
    expect(mismatch.error?.code).toBe('PERMISSION_DENIED');
  });

  it('two concurrent first calls spawn one process', async () => {
    await setup(standard());
    const results = await Promise.all([call('mcp_echo', { text: 'a' }), call('echo_add', { a: 1, b: 1 })]);
    expect(results.map((r) => r.content)).toEqual(['a', '2']);
    expect(await spawns()).toBe(1);
  });

  it('a server that exits mid-call gives an Error, and the next call restarts it', async () => {
    await setup(standard());
    expect((await call('mcp_echo', { text: 'before' })).content).toBe('before');
    const crashed = await call('echo_crash', {});
    expect(crashed.content).toMatch(/^Error: MCP server echo closed the connection during the call to echo_crash/);
    expect(crashed.error?.code).toBe('TOOL_FAILED');
    expect((await call('mcp_echo', { text: 'after' })).content).toBe('after');
    expect(await spawns()).toBe(2);
  });

  it('a call outliving timeout_ms is an Error and the server keeps serving', async () => {
    await setup(`
servers:
  echo:${stdio('\n    timeout_ms: 500')}
`);
    const res = await call('echo_slow', { ms: 60_000 });
    expect(res.content).toBe('Error: MCP tool echo_slow (server echo) did not answer within 500 ms; its effect, if any, is unknown');
    expect(res.error?.code).toBe('TIMEOUT');
    expect((await call('echo_echo', { text: 'still here' })).content).toBe('still here');
  });

  it('a call is abandoned in time to answer before the request deadline', async () => {
    await setup(standard());
    await call('mcp_echo', { text: 'warm up' });
    // No timeout_ms and a 20 s default: the 3 s deadline of the request is what ends the call.
    const res = await call('echo_slow', { ms: 60_000 }, { timeoutMs: 3_000 });
    expect(res.error?.code).toBe('TIMEOUT');
    expect(res.content).toMatch(/^Error: MCP tool echo_slow \(server echo\) did not answer within \d+ ms/);
  });

  it('a malformed response is an Error and the next call restarts the server', async () => {
    const bad = serverCommand(MALFORMED_SERVER_SCRIPT);
    await setup(`
servers:
  weird:
    command: ${JSON.stringify(bad.command)}
    args: ${JSON.stringify(bad.args)}
    env: { MCP_TEST_SPAWN_LOG: ${JSON.stringify(spawnLog)} }
`);
    expect((await call('weird_broken', {})).content).toMatch(/^Error: MCP server weird sent a malformed result for weird_broken/);
    expect((await call('weird_ok', {})).content).toBe('fine');
    expect(await spawns()).toBe(2);
  });

  it('an unreachable server is a clear error and the broker keeps serving the others', async () => {
    await setup(`
servers:
  gone:
    connection_mode: http
    url: http://127.0.0.1:9/mcp
    always_available: true
    start_timeout_ms: 5000
  echo:${stdio()}
    tools: { echo: { always_available: true } }
`);
    expect(await names()).toEqual(['echo_echo']);
    const res = await call('gone_anything', {});
    expect(res.content).toMatch(/^Error: MCP server gone (did not start|is unavailable)/);
    expect(res.error?.code).toBe('UNAVAILABLE');
    expect((await call('echo_echo', { text: 'ok' })).content).toBe('ok');
  });

  it('failed starts name no host path: a server whose stderr names its files, and a missing absolute command', async () => {
    const bin = path.join(dir, 'bin');
    const failing = path.join(dir, 'failing-server.mjs');
    await writeFile(
      failing,
      "process.stderr.write(`cannot read ${process.argv[1].replace(/[^/]+$/, 'missing-server.mjs')} (cwd ${process.cwd()})\\n`);\nprocess.exit(2);\n",
    );
    await setup(`
servers:
  noscript:
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(failing)}]
    cwd: ${JSON.stringify(dir)}
    always_available: true
  nocommand:
    command: ${JSON.stringify(path.join(bin, 'nope-server'))}
    always_available: true
`);
    const script = await call('noscript_anything', {});
    expect(script.content).toMatch(/^Error: MCP server noscript (did not start|is unavailable)/);
    expect(script.content).toContain('cannot read <mcp:noscript>/missing-server.mjs (cwd <mcp:noscript>)');
    const command = await call('nocommand_anything', {});
    expect(command.content).toMatch(/^Error: MCP server nocommand (did not start|is unavailable)/);
    expect(command.content).toContain('<mcp:nocommand>/nope-server');
    for (const res of [script, command]) {
      for (const text of [res.content, res.error?.message ?? '']) {
        expect(text).not.toContain(dir);
        expect(text).not.toContain(tmpdir());
        expect(text).not.toContain(process.cwd());
      }
    }
  });

  it('with lazy_startup false, servers start at boot', async () => {
    await setup(`
global: { lazy_startup: false }
servers:
  echo:${stdio()}
`);
    await vi.waitFor(() => expect(broker!.pool.running()).toEqual(['echo']), { timeout: 30_000 });
    expect(broker!.status()[0]).toMatchObject({ id: 'echo', state: 'running', tools: expect.any(Number) });
  });
});

describe('MCP broker: remote servers', () => {
  it('uses a streamable HTTP server with a bearer token taken from the environment', async () => {
    remote = await startHttpEchoServer({ mode: 'http', token: 'tok-123' });
    await setup(
      `
servers:
  remote:
    connection_mode: http
    url: ${remote.url}
    headers: { Authorization: "Bearer \${REMOTE_TOKEN}" }
    tools: { add: { always_available: true, alias: remote_sum } }
`,
      { REMOTE_TOKEN: 'tok-123' },
    );
    expect(await names()).toEqual(['remote_sum']);
    expect((await call('remote_sum', { a: 40, b: 2 })).content).toBe('42');
  });

  it('a wrong bearer token is reported as a failed start', async () => {
    remote = await startHttpEchoServer({ mode: 'http', token: 'tok-123' });
    await setup(`
servers:
  remote:
    connection_mode: http
    url: ${remote.url}
    headers: { Authorization: "Bearer wrong" }
`);
    expect((await call('remote_add', { a: 1, b: 1 })).content).toMatch(/^Error: MCP server remote did not start: .*missing or wrong bearer token/);
  });

  it('uses a legacy SSE server', async () => {
    remote = await startHttpEchoServer({ mode: 'sse' });
    await setup(`
servers:
  legacy:
    connection_mode: sse
    url: ${remote.url}
`);
    expect((await call('legacy_echo', { text: 'over sse' })).content).toBe('over sse');
  });
});

describe('MCP broker: reload', () => {
  it('re-reads mcp_servers.yaml: a server added to the file is offered without a restart', async () => {
    const file = path.join(dir, 'mcp_servers.yaml');
    await writeFile(file, `servers:\n  ondemand:${stdio()}\n`);
    bus = new MemoryBus();
    broker = await createMcpBroker({ bus, logger: silentLogger(), config: loadMcpBrokerConfig({ MCP_CONFIG: file }), env: { PATH: process.env.PATH } });
    await broker.start();
    expect(await names()).toEqual([]);
    await writeFile(file, standard());
    expect(await broker.reload()).toEqual({ servers: ['echo', 'ondemand'] });
    expect(await names()).toEqual(['echo_add', 'echo_fail', 'mcp_echo']);
  });
});
