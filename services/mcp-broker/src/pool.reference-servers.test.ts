/**
 * The pool against the reference MCP servers from npm (issue 14): server-everything over
 * streamable HTTP dying mid-call and restarting between calls, server-memory taking a turn's
 * parallel writes. Real servers, spawned from node_modules.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@agentloop/core';
import { freePort } from '@agentloop/devservers';
import { parseMcpFile } from './config.js';
import { McpCallTimeoutError, McpLinkLostError } from './errors.js';
import { McpPool } from './pool.js';

const require = createRequire(import.meta.url);
const binOf = (pkg: string) => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), 'dist', 'index.js');
const EVERYTHING = binOf('@modelcontextprotocol/server-everything');
const MEMORY = binOf('@modelcontextprotocol/server-memory');

let dir: string;
let pool: McpPool | undefined;
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-reference-'));
});
afterEach(async () => {
  await pool?.closeAll();
  pool = undefined;
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

function makePool(servers: Record<string, unknown>): McpPool {
  const file = parseMcpFile(JSON.stringify({ servers }));
  pool = new McpPool(file.servers, { logger: silentLogger(), startTimeoutMs: 30_000, env: { PATH: process.env.PATH } });
  return pool;
}

/** server-everything over streamable HTTP on `port`, resolved once it accepts connections. */
async function startEverything(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  children.push(child);
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server-everything exited with ${child.exitCode}`);
    const up = await fetch(`http://127.0.0.1:${port}/mcp`).then(
      () => true,
      () => false,
    );
    if (up) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server-everything did not start');
}

const textOf = (r: unknown) => (r as { content: Array<{ type: string; text?: string }> }).content.map((c) => c.text ?? '').join('\n');

describe('McpPool against server-everything (streamable HTTP)', () => {
  it('fails a call in flight with a lost link when the server dies, not at its timeout', async () => {
    const port = await freePort();
    const server = await startEverything(port);
    const p = makePool({ everything: { connection_mode: 'http', url: `http://127.0.0.1:${port}/mcp` } });
    await p.tools('everything');
    const call = p.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 30, steps: 30 },
      { exposedName: 'everything_long', timeoutMs: 120_000 },
    );
    const outcome = call.then(
      () => 'answered',
      (err: unknown) => err,
    );
    // Once the call is surely in flight (the server reports progress every second).
    await new Promise((r) => setTimeout(r, 1_500));
    server.kill('SIGKILL');
    const err = await outcome;
    expect(err).toBeInstanceOf(McpLinkLostError);
    expect(err).not.toBeInstanceOf(McpCallTimeoutError);
    expect(String(err)).toMatch(/lost the connection .* the effect of the call is unknown/);
    expect(p.running()).toEqual([]);
  }, 60_000);

  it('a server restarted between calls: the next call opens a new session and is answered', async () => {
    const port = await freePort();
    const first = await startEverything(port);
    const p = makePool({ everything: { connection_mode: 'http', url: `http://127.0.0.1:${port}/mcp` } });
    expect(textOf(await p.callTool('everything', 'echo', { message: 'before' }, { exposedName: 'everything_echo', timeoutMs: 10_000 }))).toBe('Echo: before');
    first.kill('SIGKILL');
    await new Promise((resolve) => first.once('exit', resolve));
    await startEverything(port);
    expect(textOf(await p.callTool('everything', 'echo', { message: 'after' }, { exposedName: 'everything_echo', timeoutMs: 10_000 }))).toBe('Echo: after');
  }, 60_000);
});

describe('McpPool against server-everything (stdio)', () => {
  it('a call that reports progress outlives its timeout, each notification resetting it', async () => {
    const p = makePool({ everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    const progress: number[] = [];
    await p.tools('everything');
    // 5 s of work reporting progress every 0.25 s, against a 2.5 s timeout: only the resets keep it alive
    // (a notification may come up to 10x late on a loaded machine and the call still holds).
    const r = await p.callTool(
      'everything',
      'trigger-long-running-operation',
      { duration: 5, steps: 20 },
      { exposedName: 'everything_long', timeoutMs: 2_500, onProgress: (e) => progress.push(e.progress) },
    );
    expect(textOf(r)).toMatch(/completed/i);
    // Notifications arrive in order; the last may come after the answer, so not all are required.
    expect(progress.length).toBeGreaterThan(2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  }, 60_000);

  it('a call without progress still times out', async () => {
    const p = makePool({ everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    await p.tools('everything');
    await expect(
      p.callTool('everything', 'trigger-long-running-operation', { duration: 3, steps: 1 }, { exposedName: 'everything_long', timeoutMs: 1_000 }),
    ).rejects.toBeInstanceOf(McpCallTimeoutError);
  }, 60_000);
});

describe('McpPool against server-memory (stdio)', () => {
  it('keeps every write of a turn whose parallel calls reach one server', async () => {
    const p = makePool({ memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } } });
    const names = ['alpha', 'beta', 'gamma', 'delta'];
    await Promise.all(
      names.map((name) =>
        p.callTool(
          'memory',
          'create_entities',
          { entities: [{ name, entityType: 'test', observations: [`about ${name}`] }] },
          { exposedName: 'memory_create_entities', timeoutMs: 20_000 },
        ),
      ),
    );
    const graph = await p.callTool('memory', 'read_graph', {}, { exposedName: 'memory_read_graph', timeoutMs: 20_000, readOnly: true });
    const entities = (graph as { structuredContent: { entities: Array<{ name: string }> } }).structuredContent.entities.map((e) => e.name);
    expect(entities.sort()).toEqual([...names].sort());
  }, 60_000);
});
