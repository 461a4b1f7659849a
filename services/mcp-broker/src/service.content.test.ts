/**
 * The broker's handling of what servers answer and of servers that are off or down (issue 14):
 * images saved to the thread's outputs/mcp/, disabled servers, fallback servers, one server
 * restarted on request, slow servers started at boot and announced once up.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Headers, MemoryBus, onMcpToolsChanged, requestMcpServerReload, type Bus } from '@agentloop/bus';
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
import { ECHO_SERVER_SCRIPT, serverCommand } from './testing/index.js';

let dir: string;
let bus: Bus;
let broker: McpBroker | undefined;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-content-'));
  bus = new MemoryBus();
});
afterEach(async () => {
  await broker?.stop();
  broker = undefined;
  await bus.close();
  await rm(dir, { recursive: true, force: true });
});

const echo = serverCommand(ECHO_SERVER_SCRIPT);
const stdio = (env: Record<string, string> = {}) =>
  `{ command: ${JSON.stringify(echo.command)}, args: ${JSON.stringify(echo.args)}, env: ${JSON.stringify(env)}`;

async function setup(yaml: string, env: Record<string, string> = {}): Promise<McpBroker> {
  broker = await createMcpBroker({
    bus,
    logger: silentLogger(),
    config: loadMcpBrokerConfig({ MCP_CALL_TIMEOUT_MS: '20000', WORKSPACE_ROOT: path.join(dir, 'workspaces'), ...env }),
    file: parseMcpFile(yaml),
    env: { PATH: process.env.PATH },
  });
  await broker.start();
  return broker;
}

async function call(toolName: string, args: object, threadId = '') {
  const req = create(ExecuteToolRequestSchema, { tenantId: 'acme', threadId, toolName, argsJson: JSON.stringify(args), runId: 'run-1', toolCallId: 'c1' });
  const reply = await bus.request(MCP_SUBJECTS.toolsExecute, toBinary(ExecuteToolRequestSchema, req), {
    timeoutMs: 30_000,
    headers: { [Headers.tenant]: 'acme' },
  });
  return fromBinary(ExecuteToolResponseSchema, reply.data);
}

async function names(): Promise<string[]> {
  const req = create(ListToolsRequestSchema, { tenantId: 'acme', visible: true });
  const reply = await bus.request(MCP_SUBJECTS.toolsList, toBinary(ListToolsRequestSchema, req), { timeoutMs: 30_000, headers: { [Headers.tenant]: 'acme' } });
  return fromBinary(ListToolsResponseSchema, reply.data).tools.map((t) => t.name);
}

async function until<T>(what: string, probe: () => T | Promise<T>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('MCP results with images', () => {
  it("saves an image to the thread's outputs/mcp/ and names the file to the model", async () => {
    await setup(`servers:\n  echo: ${stdio()} }\n`);
    const first = await call('echo_picture', {}, 'thread-1');
    expect(first.content).toBe(
      'here you go\n[image saved to outputs/mcp/echo-picture-1.png (image/png, 70 bytes)]\n[resource: file:///srv/report.pdf (report.pdf)]\n[resource: file:///srv/notes.txt]\nthe notes',
    );
    const png = await readFile(path.join(dir, 'workspaces', 'acme', 'thread-1', 'outputs', 'mcp', 'echo-picture-1.png'));
    expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
    expect(png.length).toBe(70);
    expect((await call('echo_picture', {}, 'thread-1')).content).toContain('[image saved to outputs/mcp/echo-picture-2.png (image/png, 70 bytes)]');
  });

  it("carries the picture's PNG bytes and saved path in `media` beside the text naming the file", async () => {
    await setup(`servers:\n  echo: ${stdio()} }\n`);
    const res = await call('echo_picture', {}, 'thread-1');
    expect(res.content).toContain('[image saved to outputs/mcp/echo-picture-1.png (image/png, 70 bytes)]');
    expect(res.media.map((m) => ({ kind: m.kind, mimeType: m.mimeType, savedPath: m.savedPath, bytes: m.data.length }))).toEqual([
      { kind: 'image', mimeType: 'image/png', savedPath: 'outputs/mcp/echo-picture-1.png', bytes: 70 },
    ]);
    expect(Buffer.from(res.media[0]!.data).subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('sends no media when MCP_MAX_RESULT_MEDIA_BYTES is 0; without a thread the block is not saved but still sent', async () => {
    await setup(`servers:\n  echo: ${stdio()} }\n`, { MCP_MAX_RESULT_MEDIA_BYTES: '0' });
    expect((await call('echo_picture', {}, 'thread-1')).media).toEqual([]);
    await broker?.stop();
    await setup(`servers:\n  echo: ${stdio()} }\n`);
    const unsaved = await call('echo_picture', {}, '');
    expect(unsaved.media.map((m) => [m.mimeType, m.savedPath, m.data.length])).toEqual([['image/png', '', 70]]);
  });
});

describe('disabled servers and tools', () => {
  it('a tool of a server with enabled: false answers that it is disabled, by prefixed name and by alias', async () => {
    await setup(`servers:\n  off: ${stdio()}, enabled: false, tools: { echo: { alias: say } } }\n  on: ${stdio()}, tools: { env: { enabled: false } } }\n`);
    expect((await call('off_echo', { text: 'x' })).content).toBe('Error: Tool off_echo is disabled in the MCP configuration');
    expect((await call('say', { text: 'x' })).content).toBe('Error: Tool say is disabled in the MCP configuration');
    expect((await call('on_env', {})).content).toBe('Error: Tool on_env is disabled in the MCP configuration');
    expect((await call('elsewhere_echo', {})).content).toBe('Error: Unknown tool: elsewhere_echo');
  });
});

describe('fallback servers', () => {
  it('a call to a server that does not start goes to its fallback, and the answer says so', async () => {
    await setup(`servers:\n  broken: ${stdio({ MCP_TEST_FAIL_START: '1' })}, fallback: backup }\n  backup: ${stdio()} }\n`);
    const res = await call('broken_add', { a: 40, b: 2 });
    expect(res.error).toBeUndefined();
    expect(res.content).toMatch(
      /^\[answered by fallback MCP server backup: broken is unavailable \(MCP server broken did not start: .*MCP_TEST_FAIL_START.*\)\]\n42$/s,
    );
    // Known tools, now in its restart backoff: the fallback again.
    expect((await call('broken_add', { a: 1, b: 2 })).content).toMatch(/^\[answered by fallback MCP server backup: .*\]\n3$/s);
  });

  it('without a fallback the unavailable server is the error', async () => {
    await setup(`servers:\n  broken: ${stdio({ MCP_TEST_FAIL_START: '1' })} }\n`);
    const res = await call('broken_add', { a: 40, b: 2 });
    expect(res.error?.code).toBe('UNAVAILABLE');
    expect(res.content).toMatch(/^Error: MCP server broken did not start/);
  });
});

describe('reload_mcp_server', () => {
  it('restarts one server on every broker replica and answers per replica', async () => {
    const b = await setup(`servers:\n  echo: ${stdio()} }\n  other: ${stdio()} }\n  off: ${stdio()}, enabled: false }\n`);
    await b.pool.tools('echo');
    await b.pool.tools('other');
    const pid = (id: string) => b.status().find((s) => s.id === id)?.pid;
    const [echoBefore, otherBefore] = [pid('echo'), pid('other')];
    const answers = await requestMcpServerReload(bus, { server: 'echo', collectMs: 5_000 });
    expect(answers).toEqual([{ instance: expect.any(String) as unknown, ok: true, state: 'running', tools: expect.any(Number) as unknown }]);
    expect(pid('echo')).toBeDefined();
    expect(pid('echo')).not.toBe(echoBefore);
    expect(pid('other')).toBe(otherBefore);
    expect((await call('echo_add', { a: 1, b: 1 })).content).toBe('2');
    expect(await b.restartServer('off')).toEqual({ ok: false, unknown: true, error: 'MCP server off cannot be reloaded: it is disabled in mcp_servers.yaml' });
    expect(await b.restartServer('nope')).toMatchObject({ ok: false, unknown: true });
  });
});

describe('slow servers', () => {
  it('a server with always-available tools starts at boot and is announced once up, so the next listing offers it', async () => {
    const changed: string[] = [];
    await onMcpToolsChanged(bus, (server) => changed.push(server));
    const b = await setup(
      `servers:\n  slow: ${stdio({ MCP_TEST_START_DELAY_MS: '1500' })}, tools: { echo: { always_available: true } } }\n  lazy: ${stdio()} }\n`,
    );
    // Started by the boot, not by a listing; the on-demand server waits for a use.
    expect(b.status().find((s) => s.id === 'slow')?.state).toBe('starting');
    expect(b.status().find((s) => s.id === 'lazy')?.state).toBe('stopped');
    await until('the tools-changed announcement', () => changed.includes('slow'));
    expect(await names()).toEqual(['slow_echo']);
  });
});
