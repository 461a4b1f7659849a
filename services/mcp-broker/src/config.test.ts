import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@agentloop/core';
import { DEFAULT_MCP_CONFIG_PATH, MissingVariableError, expandVars, loadMcpBrokerConfig, loadMcpFile, parseMcpFile } from './config.js';

describe('mcp_servers.yaml', () => {
  it('the shipped example configures servers but enables none of them', async () => {
    const file = await loadMcpFile(undefined);
    expect(Object.keys(file.servers).length).toBeGreaterThan(0);
    expect(Object.values(file.servers).filter((s) => s.enabled)).toEqual([]);
    expect(file.global.lazy_startup).toBe(true);
  });

  it('fills in defaults: lazy startup, stdio, enabled tools offered on mention only', () => {
    const file = parseMcpFile(`
servers:
  fs:
    command: npx
    tools:
      read_file: { alias: fs_read }
`);
    expect(file.global.lazy_startup).toBe(true);
    const fs = file.servers.fs!;
    expect(fs).toMatchObject({ enabled: true, connection_mode: 'stdio', args: [], env: {}, headers: {}, always_available: false });
    expect(fs.tools.read_file).toEqual({ enabled: true, always_available: false, alias: 'fs_read' });
  });

  it('a fallback must name an enabled configured server, and fallbacks must not form a cycle', () => {
    const ok = parseMcpFile('servers:\n  a: { command: x, fallback: b }\n  b: { command: x }\n');
    expect(ok.servers.a?.fallback).toBe('b');
    expect(() => parseMcpFile('servers:\n  a: { command: x, fallback: nope }\n')).toThrow(/servers\.a\.fallback: fallback "nope" is not a configured server/);
    expect(() => parseMcpFile('servers:\n  a: { command: x, fallback: b }\n  b: { command: x, enabled: false }\n')).toThrow(
      /servers\.a\.fallback: fallback "b" is disabled/,
    );
    expect(() => parseMcpFile('servers:\n  a: { command: x, fallback: b }\n  b: { command: x, fallback: c }\n  c: { command: x, fallback: a }\n')).toThrow(
      /servers\.a\.fallback: fallbacks form a cycle: a → b → c → a/,
    );
    expect(() => parseMcpFile('servers:\n  a: { command: x, fallback: a }\n')).toThrow(/fallbacks form a cycle: a → a/);
  });

  it('an empty file configures no server', () => {
    expect(parseMcpFile('').servers).toEqual({});
    expect(parseMcpFile('servers:\n').servers).toEqual({});
  });

  it('a mistake is a ConfigError naming the file and the key path', () => {
    const bad = `
servers:
  fs:
    connection_mode: stdio
  remote:
    connection_mode: http
    url: http://127.0.0.1:1/mcp
    tools:
      search: { alias: "not a valid name" }
`;
    let err: unknown;
    try {
      parseMcpFile(bad, '/etc/agentloop/mcp_servers.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('/etc/agentloop/mcp_servers.yaml is invalid');
    expect(msg).toContain('servers.fs.command: a stdio server needs a command');
    expect(msg).toContain('servers.remote.tools.search.alias');
  });

  it('rejects unknown keys, remote servers without a url and invalid YAML', () => {
    expect(() => parseMcpFile('servers:\n  fs:\n    command: x\n    comand: y\n')).toThrow(/servers\.fs: .*comand/);
    expect(() => parseMcpFile('servers:\n  r:\n    connection_mode: sse\n')).toThrow(/servers\.r\.url: an sse server needs a url/);
    expect(() => parseMcpFile('servers: [\n')).toThrow(/not valid YAML/);
  });

  it('two tools with the same alias are a ConfigError naming both', () => {
    expect(() =>
      parseMcpFile(`
servers:
  a: { command: x, tools: { t1: { alias: same } } }
  b: { command: y, tools: { t2: { alias: same } } }
`),
    ).toThrow(/servers\.b\.tools\.t2\.alias: alias "same" is also used by servers\.a\.tools\.t1\.alias/);
  });

  it('MCP_CONFIG naming a missing file is a ConfigError', async () => {
    await expect(loadMcpFile('/nonexistent/mcp_servers.yaml')).rejects.toThrow(/MCP_CONFIG: cannot read \/nonexistent\/mcp_servers.yaml/);
  });

  it('reads the file MCP_CONFIG names', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mcp-config-'));
    try {
      const file = path.join(dir, 'mcp.yaml');
      await writeFile(file, 'global: { lazy_startup: false }\nservers:\n  one: { command: node }\n');
      const parsed = await loadMcpFile(file);
      expect(parsed.global.lazy_startup).toBe(false);
      expect(Object.keys(parsed.servers)).toEqual(['one']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('defaults to the file shipped in the package', () => {
    expect(DEFAULT_MCP_CONFIG_PATH).toMatch(/services[/\\]mcp-broker[/\\]config[/\\]mcp_servers\.yaml$/);
  });
});

describe('${VAR} references', () => {
  it('are replaced from the given environment, with ${VAR:-default} for unset ones', () => {
    expect(expandVars('Bearer ${TOKEN}', { TOKEN: 's3cret' })).toBe('Bearer s3cret');
    expect(expandVars('${A}-${B:-dflt}', { A: 'x' })).toBe('x-dflt');
    expect(expandVars('no refs here $HOME', {})).toBe('no refs here $HOME');
  });

  it('an unset variable without a default is an error naming it and where it is used', () => {
    expect(() => expandVars('Bearer ${ISSUES_TOKEN}', {}, 'servers.issues.headers.Authorization')).toThrow(MissingVariableError);
    expect(() => expandVars('Bearer ${ISSUES_TOKEN}', {}, 'servers.issues.headers.Authorization')).toThrow(
      'environment variable ISSUES_TOKEN (used in servers.issues.headers.Authorization) is not set',
    );
  });
});

describe('broker environment', () => {
  it('has defaults and bounds', () => {
    const c = loadMcpBrokerConfig({});
    expect(c).toMatchObject({ MCP_MAX_RESULT_BYTES: 100 * 1024, MCP_CALL_TIMEOUT_MS: 60_000, MCP_START_TIMEOUT_MS: 30_000, MCP_IDLE_TIMEOUT_MS: 0 });
    expect(() => loadMcpBrokerConfig({ MCP_CALL_TIMEOUT_MS: '5' })).toThrow(/MCP_CALL_TIMEOUT_MS/);
  });
});
