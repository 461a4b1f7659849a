import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBus, connectNatsBus, type Bus } from '@agentloop/bus';
import { silentLogger } from '@agentloop/core';
import { startNats } from '@agentloop/devservers';
import { ExecuteToolRequestSchema, ExecuteToolResponseSchema, ListToolsRequestSchema, ListToolsResponseSchema, create, fromBinary, toBinary } from '@agentloop/proto';
import { loadMcpBrokerConfig, parseMcpFile } from './config.js';
import { createMcpBroker, type McpBroker } from './service.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const server = fileURLToPath(new URL('./testing/echo-server.ts', import.meta.url));
const tsxArgs = ['--conditions=@agentloop/source', '--import', 'tsx', server];

let bus: Bus;
let broker: McpBroker | undefined;
let httpServer: ChildProcess | undefined;
afterEach(async () => {
  await broker?.stop();
  await bus?.close();
  httpServer?.kill('SIGKILL');
  broker = undefined;
  httpServer = undefined;
  delete process.env.AGENTLOOP_TEST_SECRET;
});

const yaml = (extra = '') => `
servers:
  echo:
    command: ${JSON.stringify(process.execPath)}
    args: ${JSON.stringify(tsxArgs)}
    cwd: ${JSON.stringify(repoRoot)}
    env: { GREETING: "\${TEST_GREETING}" }
    start_timeout_ms: 20000
    tools:
      echo: { always_available: true, alias: mcp_echo }
      add: { always_available: true }
      env: { always_available: true }
      fail: { always_available: true }
      crash: { always_available: true }
      slow: { always_available: true }
  ondemand:
    command: ${JSON.stringify(process.execPath)}
    args: ${JSON.stringify(tsxArgs)}
    cwd: ${JSON.stringify(repoRoot)}
    tenants: [acme]
${extra}`;

async function setup(text: string, b: Bus = new MemoryBus(), env: Record<string, string> = {}) {
  bus = b;
  broker = await createMcpBroker({ bus, logger: silentLogger(), config: loadMcpBrokerConfig({ MCP_CALL_TIMEOUT_MS: '3000' }), file: parseMcpFile(text), env: { PATH: process.env.PATH, ...env } });
  await broker.start();
}

const list = async (tenantId = 'acme', mentioned: string[] = []) =>
  fromBinary(ListToolsResponseSchema, (await bus.request('agentloop.mcp.tools.list', toBinary(ListToolsRequestSchema, create(ListToolsRequestSchema, { tenantId, mentioned })), { timeoutMs: 30_000 })).data).tools;
const call = async (toolName: string, args: object, tenantId = 'acme') =>
  fromBinary(
    ExecuteToolResponseSchema,
    (await bus.request('agentloop.mcp.tools.execute', toBinary(ExecuteToolRequestSchema, create(ExecuteToolRequestSchema, { tenantId, toolName, argsJson: JSON.stringify(args) })), { timeoutMs: 30_000 })).data,
  );

describe('MCP broker (stdio)', () => {
  it('starts servers lazily, lists tools with aliases and visibility, and calls them', async () => {
    await setup(yaml(), new MemoryBus(), { TEST_GREETING: 'hi' });
    expect(broker!.pool.running()).toEqual([]);
    const names = (await list()).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['mcp_echo', 'echo_add', 'echo_fail']));
    // The on-demand server was not started by the listing; mentioning it lists (and starts) it.
    expect(broker!.pool.running()).toEqual(['echo']);
    expect((await list('acme', ['ondemand'])).map((t) => t.name)).toEqual(expect.arrayContaining(['ondemand_echo']));
    expect((await list('globex', ['ondemand'])).map((t) => t.name)).not.toContain('ondemand_echo');
    const spec = (await list()).find((t) => t.name === 'mcp_echo')!;
    expect(spec.description).toBe('[echo] Echo the text');
    expect(JSON.parse(spec.parametersJsonSchema)).toMatchObject({ type: 'object', properties: { text: { type: 'string' } } });
    expect(spec.metadata?.idempotent).toBe(true);
    expect((await call('mcp_echo', { text: 'ping' })).content).toBe('ping');
    expect((await call('echo_add', { a: 2, b: 3 })).content).toBe('5');
    expect((await call('echo_fail', {})).content).toBe('Error: it broke');
    expect((await call('nope_tool', {})).content).toBe('Error: Unknown tool: nope_tool');
  }, 60_000);

  it('gives a stdio server only its configured env (with ${VAR} from the broker) and PATH: no secret leaks', async () => {
    process.env.AGENTLOOP_TEST_SECRET = 'do-not-leak';
    await setup(yaml(), new MemoryBus(), { TEST_GREETING: 'hello', AGENTLOOP_TEST_SECRET: 'do-not-leak' });
    const env = JSON.parse((await call('echo_env', {})).content) as Record<string, string>;
    expect(env.GREETING).toBe('hello');
    expect(JSON.stringify(env)).not.toContain('do-not-leak');
  }, 60_000);

  it('a server that crashes mid-call gives an Error and is restarted by the next call; timeouts are errors', async () => {
    await setup(yaml());
    expect((await call('mcp_echo', { text: 'before' })).content).toBe('before');
    expect((await call('echo_crash', {})).content).toMatch(/^Error: MCP tool echo_crash failed/);
    expect((await call('mcp_echo', { text: 'after' })).content).toBe('after');
    expect((await call('echo_slow', { ms: 10_000 })).content).toMatch(/^Error: MCP tool echo_slow failed: .*(timed out|timeout)/i);
    expect((await call('mcp_echo', { text: 'still here' })).content).toBe('still here');
  }, 90_000);

  it('concurrent first calls start one process', async () => {
    await setup(yaml());
    const results = await Promise.all([call('mcp_echo', { text: 'a' }), call('mcp_echo', { text: 'b' }), call('echo_add', { a: 1, b: 1 })]);
    expect(results.map((r) => r.content)).toEqual(['a', 'b', '2']);
    expect(broker!.pool.running()).toEqual(['echo']);
  }, 60_000);

  it('an unreachable server is a clear error and the broker keeps serving', async () => {
    await setup(`
servers:
  gone:
    connection_mode: http
    url: http://127.0.0.1:9/mcp
    start_timeout_ms: 2000
    always_available: true
`);
    expect(await list()).toEqual([]);
    expect((await call('gone_anything', {})).content).toMatch(/^Error: MCP server gone (did not start|is unavailable)/);
  }, 60_000);
});

describe('MCP broker (streamable HTTP, over NATS)', () => {
  it('calls a remote MCP server through a real NATS bus', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    httpServer = spawn(process.execPath, [...tsxArgs, '--http', String(port)], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => httpServer!.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve()));
    const nats = await startNats();
    try {
      await setup(
        `
servers:
  remote:
    connection_mode: http
    url: http://127.0.0.1:${port}/mcp
    always_available: true
`,
        await connectNatsBus({ url: nats.url, name: 'mcp-test', logger: silentLogger() }),
      );
      expect((await list()).map((t) => t.name)).toEqual(expect.arrayContaining(['remote_echo', 'remote_add']));
      expect((await call('remote_add', { a: 40, b: 2 })).content).toBe('42');
    } finally {
      await broker?.stop();
      broker = undefined;
      await bus.close();
      await nats.stop();
    }
  }, 90_000);
});

