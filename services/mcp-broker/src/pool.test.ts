import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '@agentloop/core';
import { parseMcpFile } from './config.js';
import { McpCallFailedError, McpCallTimeoutError, McpServerUnavailableError } from './errors.js';
import { McpPool, type McpPoolOptions } from './pool.js';
import { ECHO_SERVER_SCRIPT, MALFORMED_SERVER_SCRIPT, serverCommand } from './testing/index.js';

let dir: string;
let spawnLog: string;
let pool: McpPool | undefined;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-pool-'));
  spawnLog = path.join(dir, 'spawns.log');
});
afterEach(async () => {
  await pool?.closeAll();
  pool = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Pids the test servers wrote at start: one line per spawned process. */
const spawns = async () => (await readFile(spawnLog, 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

function stdioServer(script: string, extra: Record<string, unknown> = {}) {
  const { command, args } = serverCommand(script);
  return { command, args, env: { MCP_TEST_SPAWN_LOG: spawnLog }, start_timeout_ms: 30_000, ...extra };
}

function makePool(servers: Record<string, unknown>, opts: Partial<McpPoolOptions> = {}) {
  const file = parseMcpFile(JSON.stringify({ servers }));
  pool = new McpPool(file.servers, { logger: silentLogger(), startTimeoutMs: 30_000, env: { PATH: process.env.PATH }, ...opts });
  return pool;
}

const call = (p: McpPool, tool: string, args: Record<string, unknown> = {}, timeoutMs = 20_000) =>
  p.callTool('echo', tool, args, { exposedName: `echo_${tool}`, timeoutMs });
const text = (r: unknown) => (r as { content: Array<{ text: string }> }).content[0]?.text ?? '';

describe('McpPool (stdio)', () => {
  it('spawns nothing until first use, and concurrent first uses share one process', async () => {
    const p = makePool({ echo: stdioServer(ECHO_SERVER_SCRIPT) });
    expect(p.running()).toEqual([]);
    expect(await spawns()).toEqual([]);
    const results = await Promise.all([call(p, 'echo', { text: 'a' }), call(p, 'add', { a: 1, b: 2 }), p.connect('echo'), p.tools('echo')]);
    expect(text(results[0])).toBe('a');
    expect(text(results[1])).toBe('3');
    expect(await spawns()).toHaveLength(1);
    expect(p.running()).toEqual(['echo']);
    expect(p.status()[0]).toMatchObject({ id: 'echo', state: 'running', pid: (await spawns())[0] });
  });

  it('gives a stdio server its configured env and PATH, not the broker environment', async () => {
    process.env.AGENTLOOP_TEST_SECRET = 'do-not-leak';
    try {
      const p = makePool(
        { echo: stdioServer(ECHO_SERVER_SCRIPT, { env: { MCP_TEST_SPAWN_LOG: spawnLog, GREETING: 'hi ${WHO}' } }) },
        { env: { PATH: process.env.PATH, WHO: 'there', AGENTLOOP_TEST_SECRET: 'do-not-leak' } },
      );
      const env = JSON.parse(text(await call(p, 'env'))) as Record<string, string>;
      expect(env.GREETING).toBe('hi there');
      expect(env.PATH).toBe(process.env.PATH);
      expect(JSON.stringify(env)).not.toContain('do-not-leak');
      // Only what the config gives, PATH, and the SDK's sudo-like safe set.
      const safe = ['PATH', 'HOME', 'LOGNAME', 'SHELL', 'TERM', 'USER', 'MCP_TEST_SPAWN_LOG', 'GREETING'];
      expect(Object.keys(env).filter((k) => !safe.includes(k))).toEqual([]);
    } finally {
      delete process.env.AGENTLOOP_TEST_SECRET;
    }
  });

  it('a server that exits mid-call gives an error with its stderr, and the next call starts it again', async () => {
    const p = makePool({ echo: stdioServer(ECHO_SERVER_SCRIPT) });
    expect(text(await call(p, 'echo', { text: 'before' }))).toBe('before');
    const err = await call(p, 'crash').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpCallFailedError);
    expect((err as Error).message).toMatch(/MCP server echo closed the connection during the call to echo_crash .*crashing on purpose/);
    expect(text(await call(p, 'echo', { text: 'after' }))).toBe('after');
    const pids = await spawns();
    expect(pids).toHaveLength(2);
    expect(alive(pids[0]!)).toBe(false);
  });

  it('a slow call times out, and a server that still answers pings keeps its process', async () => {
    const p = makePool({ echo: stdioServer(ECHO_SERVER_SCRIPT) });
    const err = await call(p, 'slow', { ms: 60_000 }, 500).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpCallTimeoutError);
    expect((err as Error).message).toBe('MCP tool echo_slow (server echo) did not answer within 500 ms; its effect, if any, is unknown');
    expect(text(await call(p, 'echo', { text: 'next' }))).toBe('next');
    expect(await spawns()).toHaveLength(1);
  });

  it('a hung server (no answer to a ping after a timeout) is restarted for the next call', async () => {
    const p = makePool({ echo: stdioServer(ECHO_SERVER_SCRIPT) });
    await expect(call(p, 'freeze', {}, 500)).rejects.toBeInstanceOf(McpCallTimeoutError);
    expect(text(await call(p, 'echo', { text: 'fresh' }))).toBe('fresh');
    const pids = await spawns();
    expect(pids).toHaveLength(2);
    await vi.waitFor(() => expect(alive(pids[0]!)).toBe(false), { timeout: 15_000 });
  });

  it('a malformed result is an error and the server is restarted on the next call', async () => {
    const p = makePool({ echo: stdioServer(MALFORMED_SERVER_SCRIPT) });
    const err = await call(p, 'broken').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpCallFailedError);
    expect((err as Error).message).toMatch(/^MCP server echo sent a malformed result for echo_broken/);
    expect(text(await call(p, 'ok'))).toBe('fine');
    expect(await spawns()).toHaveLength(2);
  });

  it('a server that fails to start reports why, then backs off without spawning', async () => {
    const p = makePool(
      { echo: stdioServer(ECHO_SERVER_SCRIPT, { env: { MCP_TEST_SPAWN_LOG: spawnLog, MCP_TEST_FAIL_START: '1' } }) },
      // A backoff far longer than the test: the third attempt falls inside it whatever the machine's speed.
      { backoffBaseMs: 3_600_000 },
    );
    const first = await p.connect('echo').catch((e: unknown) => e);
    expect(first).toBeInstanceOf(McpServerUnavailableError);
    expect((first as Error).message).toMatch(/^MCP server echo did not start: .*refusing to start: MCP_TEST_FAIL_START is set/);
    // The first failure is retried at once; the second starts the backoff.
    await expect(p.connect('echo')).rejects.toThrow(/did not start/);
    await expect(p.connect('echo')).rejects.toThrow(/^MCP server echo is unavailable \(.*refusing to start.*\); the broker tries to start it again in \d+ s$/);
    expect(await spawns()).toHaveLength(2);
    expect(p.status()[0]).toMatchObject({ state: 'backoff', failures: 2 });
  });

  it('a command that does not exist is reported as such', async () => {
    const p = makePool({ echo: { command: 'no-such-mcp-server-binary' } });
    await expect(p.connect('echo')).rejects.toThrow('MCP server echo did not start: command not found: no-such-mcp-server-binary');
  });

  it('a ${VAR} the broker does not have stops the start with a message naming it', async () => {
    const p = makePool({ echo: stdioServer(ECHO_SERVER_SCRIPT, { env: { TOKEN: '${MISSING_TOKEN}' } }) });
    await expect(p.connect('echo')).rejects.toThrow(
      'MCP server echo cannot start: environment variable MISSING_TOKEN (used in servers.echo.env.TOKEN) is not set',
    );
    expect(await spawns()).toEqual([]);
  });

  it('stops an idle server, and starts it again on the next use', async () => {
    const p = makePool({ echo: stdioServer(ECHO_SERVER_SCRIPT, { idle_timeout_ms: 200 }) });
    expect(text(await call(p, 'echo', { text: 'one' }))).toBe('one');
    const [first] = await spawns();
    await vi.waitFor(() => expect(p.running()).toEqual([]), { timeout: 15_000 });
    await vi.waitFor(() => expect(alive(first!)).toBe(false), { timeout: 15_000 });
    // Its tool list is remembered while it is stopped.
    expect(
      p
        .knownTools()
        .get('echo')
        ?.map((t) => t.name),
    ).toContain('echo');
    expect(text(await call(p, 'echo', { text: 'two' }))).toBe('two');
    expect(await spawns()).toHaveLength(2);
    expect(p.status()[0]!.failures).toBe(0);
  });

  it('refreshes the tool list when the server says it changed', async () => {
    const p = makePool({ echo: stdioServer(ECHO_SERVER_SCRIPT) });
    const before = p.toolsVersion;
    expect((await p.tools('echo')).map((t) => t.name)).not.toContain('grown');
    expect(text(await call(p, 'grow'))).toBe('added');
    await vi.waitFor(
      () =>
        expect(
          p
            .knownTools()
            .get('echo')
            ?.map((t) => t.name),
        ).toContain('grown'),
      { timeout: 15_000 },
    );
    expect(p.toolsVersion).toBeGreaterThan(before);
    expect(text(await call(p, 'grown'))).toBe('grown');
  });

  it('closeAll terminates the server processes and refuses new starts', async () => {
    const p = makePool({ echo: stdioServer(ECHO_SERVER_SCRIPT) });
    await p.connect('echo');
    const [pid] = await spawns();
    await p.closeAll();
    await vi.waitFor(() => expect(alive(pid!)).toBe(false), { timeout: 15_000 });
    await expect(p.connect('echo')).rejects.toThrow(/shutting down/);
  });
});
