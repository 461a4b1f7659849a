/**
 * The tool provider against server-everything from npm (issue 14): its image saved to the
 * thread's outputs/mcp/, its resources read through the built-in resource tools, and a fallback
 * instance answering while the primary one (streamable HTTP) is dead.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@agentloop/core';
import { freePort } from '@agentloop/devservers';
import { WorkspaceManager } from '@agentloop/workspace';
import { parseMcpFile } from './config.js';
import { McpPool } from './pool.js';
import { McpToolProvider } from './provider.js';

const require = createRequire(import.meta.url);
const EVERYTHING = path.join(path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

let dir: string;
let pool: McpPool | undefined;
const children: ChildProcess[] = [];

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mcp-provider-reference-'));
});
afterEach(async () => {
  await pool?.closeAll();
  pool = undefined;
  for (const c of children.splice(0)) c.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

function makeProvider(servers: Record<string, unknown>): McpToolProvider {
  const file = parseMcpFile(JSON.stringify({ servers }));
  const logger = silentLogger();
  pool = new McpPool(file.servers, { logger, startTimeoutMs: 30_000, env: { PATH: process.env.PATH } });
  return new McpToolProvider(file.servers, pool, {
    logger,
    callTimeoutMs: 20_000,
    maxResultBytes: 100_000,
    media: { workspaces: new WorkspaceManager({ root: dir, logger }), maxBytes: 1024 * 1024 },
  });
}

const stdioEverything = { command: process.execPath, args: [EVERYTHING, 'stdio'] };

async function startEverything(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: 'ignore' });
  children.push(child);
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`server-everything exited with ${child.exitCode}`);
    if (
      await fetch(`http://127.0.0.1:${port}/mcp`).then(
        () => true,
        () => false,
      )
    )
      return child;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server-everything did not start');
}

const call = (p: McpToolProvider, toolName: string, args: object) =>
  p.execute({ tenantId: 'acme', threadId: 'th-1', toolName, argsJson: JSON.stringify(args) });

describe('server-everything through the tool provider', () => {
  it('saves get-tiny-image to outputs/mcp/ and names the file', async () => {
    const p = makeProvider({ everything: stdioEverything });
    const res = await call(p, 'everything_get-tiny-image', {});
    expect(res.error).toBeUndefined();
    const m = /\[image saved to (outputs\/mcp\/everything-get-tiny-image-1\.png) \(image\/png, (\d+) bytes\)\]/.exec(res.content);
    expect(m).not.toBeNull();
    const file = await readFile(path.join(dir, 'acme', 'th-1', m![1]!));
    expect(file.length).toBe(Number(m![2]));
    expect(file.subarray(1, 4).toString('latin1')).toBe('PNG');
  }, 60_000);

  it('offers list/read resource tools, names them after resource links, and reads text and blob resources', async () => {
    const p = makeProvider({ everything: stdioEverything });
    const listed = await p.list({ tenantId: 'acme', mentioned: ['everything'] });
    expect(listed.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['everything_list_resources', 'everything_read_resource']));

    const links = await call(p, 'everything_get-resource-links', { count: 2 });
    // (server-everything labels its blob resources text/plain.)
    expect(links.content).toContain('[resource: demo://resource/dynamic/blob/1 (Blob Resource 1, text/plain); read it with everything_read_resource]');
    expect(links.content).toContain('[resource: demo://resource/dynamic/text/2 (Text Resource 2, text/plain); read it with everything_read_resource]');

    const text = await call(p, 'everything_read_resource', { uri: 'demo://resource/dynamic/text/2' });
    expect(text.error).toBeUndefined();
    expect(text.content).toMatch(/^\[resource: demo:\/\/resource\/dynamic\/text\/2\]\n.*Resource 2/s);

    const blob = await call(p, 'everything_read_resource', { uri: 'demo://resource/dynamic/blob/1' });
    const saved = /^\[resource demo:\/\/resource\/dynamic\/blob\/1 saved to (outputs\/mcp\/everything-read_resource-1\.\w+) \([^,]+, (\d+) bytes\)\]$/.exec(
      blob.content,
    );
    expect(saved).not.toBeNull();
    expect((await readFile(path.join(dir, 'acme', 'th-1', saved![1]!))).length).toBe(Number(saved![2]));

    const all = await call(p, 'everything_list_resources', {});
    expect(all.content).toContain('demo://resource/static/document/');

    const bad = await call(p, 'everything_read_resource', {});
    expect(bad.content).toBe('Error: Invalid arguments for everything_read_resource: `uri` must be a non-empty string');
  }, 60_000);

  it('a killed primary instance: the call is answered by the fallback instance, saying so', async () => {
    const port = await freePort();
    const primary = await startEverything(port);
    const p = makeProvider({
      primary: { connection_mode: 'http', url: `http://127.0.0.1:${port}/mcp`, fallback: 'backup' },
      backup: stdioEverything,
    });
    expect((await call(p, 'primary_echo', { message: 'one' })).content).toBe('Echo: one');
    primary.kill('SIGKILL');
    await new Promise((resolve) => primary.once('exit', resolve));
    // The first call finds its connection refused (the call was not sent) — or, when the broker saw the
    // server's stream close first (a race with the kill) and dropped the connection, the server not
    // starting again; the next call the server not starting. Either way the fallback answers.
    expect((await call(p, 'primary_echo', { message: 'two' })).content).toMatch(
      /^\[answered by fallback MCP server backup: primary is unavailable \(MCP server primary (cannot be reached \(connection refused\); the call to primary_echo was not made\.|did not start: .*)\)\]\nEcho: two$/s,
    );
    expect((await call(p, 'primary_echo', { message: 'three' })).content).toMatch(
      /^\[answered by fallback MCP server backup: primary is unavailable \(MCP server primary did not start: .*\)\]\nEcho: three$/s,
    );
  }, 60_000);
});
