/**
 * The sandbox network allow-list (README "Code sandbox"): sandboxed code reaches allowed HTTP(S)
 * destinations only through the host proxy; anything else is refused with a reason, and there is no
 * direct route out of the sandbox's network namespace.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sandbox, sandboxConfigFromEnv } from './index.js';

const seen: string[] = [];
let allowed: Server;
let other: Server;
let allowedPort: number;
let otherPort: number;
let workspace: string;
let sandbox: Sandbox;

async function listen(host: string, name: string): Promise<Server> {
  const server = createServer((req, res) => {
    seen.push(`${name} ${req.method ?? ''} ${req.url ?? ''} host=${req.headers.host ?? ''}`);
    res.end(`hello from ${name}`);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return server;
}

const portOf = (s: Server) => (s.address() as { port: number }).port;

beforeAll(async () => {
  allowed = await listen('127.0.0.1', 'allowed');
  other = await listen('127.0.0.2', 'other');
  allowedPort = portOf(allowed);
  otherPort = portOf(other);
  workspace = await mkdtemp(path.join(os.tmpdir(), 'sandbox-net-'));
  const config = sandboxConfigFromEnv({ SANDBOX_TIMEOUT_MS: '15000', SANDBOX_NETWORK_ALLOW: `127.0.0.1/32,data.example:${allowedPort}` });
  // data.example is allowed by name; the proxy (not the sandbox, which has no DNS) resolves names.
  const dns: Record<string, string> = { 'data.example': '127.0.0.1', 'public.example': '93.184.216.34' };
  sandbox = new Sandbox(config, { lookup: async (h) => (dns[h] ? [{ address: dns[h], family: 4 }] : []) });
});

afterAll(async () => {
  await sandbox.close();
  allowed.close();
  other.close();
  await rm(workspace, { recursive: true, force: true });
});

const py = (code: string) => sandbox.run({ workspaceDir: workspace, argv: [sandbox.config.pythonPath, '-c', code] });

/** Python that fetches each URL through the environment's proxy and prints status and body. */
function fetchAll(urls: string[]): string {
  return [
    'import urllib.request, urllib.error',
    `for url in ${JSON.stringify(urls)}:`,
    '    try:',
    '        with urllib.request.urlopen(url, timeout=10) as r:',
    '            print(r.status, r.read().decode())',
    '    except urllib.error.HTTPError as e:',
    '        print(e.code, e.read().decode().strip())',
  ].join('\n');
}

describe('sandbox network allow-list', () => {
  it('reaches an allowed destination, by CIDR and by host name, through the proxy', async () => {
    seen.length = 0;
    const r = await py(fetchAll([`http://127.0.0.1:${allowedPort}/data.csv?x=1`, `http://data.example:${allowedPort}/named`]));
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('200 hello from allowed\n200 hello from allowed\n');
    expect(seen).toEqual([`allowed GET /data.csv?x=1 host=127.0.0.1:${allowedPort}`, `allowed GET /named host=data.example:${allowedPort}`]);
    expect((await sandbox.status()).network).toBe(`HTTP(S) proxy to: 127.0.0.1/32, data.example:${allowedPort}`);
  });

  it('tunnels CONNECT (how HTTPS goes) to an allowed destination', async () => {
    const code = [
      'import socket',
      's = socket.create_connection(("127.0.0.1", 3128), timeout=10)',
      `s.sendall(b"CONNECT 127.0.0.1:${allowedPort} HTTP/1.1\\r\\nHost: 127.0.0.1:${allowedPort}\\r\\n\\r\\n")`,
      'print(s.recv(1024).decode().splitlines()[0])',
      `s.sendall(b"GET /tunnelled HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")`,
      'data = b""',
      'while chunk := s.recv(4096):',
      '    data += chunk',
      'print(data.decode().split("\\r\\n\\r\\n", 1)[1])',
    ].join('\n');
    const r = await py(code);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('HTTP/1.1 200 Connection Established\nhello from allowed\n');
  });

  it('refuses destinations off the list with a reason, internal ones by the SSRF guard', async () => {
    seen.length = 0;
    const r = await py(fetchAll([`http://127.0.0.2:${otherPort}/`, 'http://1.1.1.1/', 'http://public.example/']));
    expect(r.stdout.split('\n')).toEqual([
      `403 Refused to connect to 127.0.0.2:${otherPort}: 127.0.0.2 is an internal address (loopback (127.0.0.0/8)).`,
      '403 Refused to connect to 1.1.1.1:80: not on the sandbox network allow-list (SANDBOX_NETWORK_ALLOW)',
      '403 Refused to connect to public.example:80: not on the sandbox network allow-list (SANDBOX_NETWORK_ALLOW)',
      '',
    ]);
    expect(seen).toEqual([]);
  });

  it('refuses a CONNECT off the list', async () => {
    const code = [
      'import socket',
      's = socket.create_connection(("127.0.0.1", 3128), timeout=10)',
      's.sendall(b"CONNECT 1.1.1.1:443 HTTP/1.1\\r\\nHost: 1.1.1.1:443\\r\\n\\r\\n")',
      'print(s.recv(4096).decode().split("\\r\\n\\r\\n", 1)[1].strip())',
    ].join('\n');
    const r = await py(code);
    expect(r.stdout).toBe('Refused to connect to 1.1.1.1:443: not on the sandbox network allow-list (SANDBOX_NETWORK_ALLOW)\n');
  });

  it('has no direct route: the allowed server itself cannot be reached without the proxy', async () => {
    seen.length = 0;
    const code = [
      'import socket',
      `for host, port in (("127.0.0.1", ${allowedPort}), ("1.1.1.1", 80), ("10.0.0.1", 80)):`,
      '    try:',
      '        socket.create_connection((host, port), timeout=3)',
      '        print("connected", host)',
      '    except OSError as e:',
      '        print("refused", host, e.strerror)',
    ].join('\n');
    const r = await py(code);
    expect(r.stdout).toBe(`refused 127.0.0.1 Connection refused\nrefused 1.1.1.1 Network is unreachable\nrefused 10.0.0.1 Network is unreachable\n`);
    expect(seen).toEqual([]);
  });
});
