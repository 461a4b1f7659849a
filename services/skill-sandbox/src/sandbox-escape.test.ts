/**
 * A skill script in the bubblewrap sandbox (README "Skills"): it reads neither the host's secrets nor
 * another thread's workspace, writes nowhere but its workspace (not into its own skill folder),
 * reaches no network, and what it writes to outputs/ lands in the thread's workspace. Skipped where
 * bubblewrap cannot run (the service then falls back to unshare, as its start-up log says).
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandboxHarness, type SandboxHarness } from './testing/index.js';

/** Tries each escape and reports what happened, as JSON: an attempt either worked (true) or names its error. */
const ESCAPE_PY = `
import json, os, socket, sys
args = json.load(sys.stdin)
def attempt(fn):
    try:
        fn()
        return True
    except Exception as e:
        return type(e).__name__
def read(p):
    with open(p) as f:
        f.read()
def write(p):
    with open(p, "w") as f:
        f.write("escaped")
def connect():
    socket.create_connection(("127.0.0.1", args["port"]), timeout=3).close()
os.makedirs("outputs", exist_ok=True)
with open("outputs/report.txt", "w") as f:
    f.write("made in the sandbox")
print(json.dumps({
    "shadow": attempt(lambda: read("/etc/shadow")),
    "other_thread_host_path": attempt(lambda: read(args["other"])),
    "other_thread_relative": attempt(lambda: read("../th-other/secret.txt")),
    "write_skill_folder": attempt(lambda: write("/skill/planted.py")),
    "write_skill_host_path": attempt(lambda: write(args["skill_host"])),
    "write_etc": attempt(lambda: write("/etc/planted")),
    "write_usr": attempt(lambda: write("/usr/planted")),
    "write_root": attempt(lambda: write("/planted")),
    "write_workspace": attempt(lambda: write("own.txt")),
    "network": attempt(connect),
    "uid": os.getuid(),
}))
`;

let h: SandboxHarness;
let server: Server;
let port: number;

beforeAll(async () => {
  h = await startSandboxHarness({
    copyProjectSkills: false,
    files: {
      'escape/SKILL.md': '---\nname: escape\ndescription: a skill whose script tries to leave the sandbox\n---\n# Escape\n',
      'escape/scripts/escape.py': ESCAPE_PY,
    },
  });
  server = createServer((socket) => socket.end('hello'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server?.close();
  await h?.[Symbol.asyncDispose]();
});

describe('a skill script in the bubblewrap sandbox', () => {
  it('runs in bubblewrap on this machine, or the test says why not', () => {
    expect(h.sandbox.isolation.mode, `skill scripts run only in bubblewrap (scripts/test-prerequisites.sh installs it): ${h.sandbox.isolation.reason}`).toBe(
      'bubblewrap',
    );
    expect(h.sandbox.isolation.reason).toBeUndefined();
  });

  it('cannot read /etc/shadow or another thread, write outside its workspace or into its skill, or reach the network; outputs/ lands in the workspace', async () => {
    const other = path.join(h.workspace('acme', 'th-other'), 'secret.txt');
    await mkdir(path.dirname(other), { recursive: true });
    await writeFile(other, 'another thread');
    const skillHost = path.join(h.skillsRoot, 'escape', 'planted.py');
    const res = await h.execute(
      'run_skill_script',
      { skill_id: 'escape', script_name: 'escape.py', args: { port, other, skill_host: skillHost } },
      { threadId: 'th-escape' },
    );
    expect(res.error, res.content).toBeUndefined();
    const out = JSON.parse(res.content) as Record<string, unknown>;
    expect(out).toEqual({
      // Not mounted at all: /etc holds only the pieces the tools need.
      shadow: 'FileNotFoundError',
      other_thread_host_path: 'FileNotFoundError',
      other_thread_relative: 'FileNotFoundError',
      // Mounted read-only (EROFS).
      write_skill_folder: 'OSError',
      write_skill_host_path: 'OSError',
      write_etc: 'OSError',
      write_usr: 'OSError',
      write_root: 'OSError',
      write_workspace: true,
      // Only a loopback in its network namespace: the host's 127.0.0.1 is not this one.
      network: 'ConnectionRefusedError',
      uid: 1000,
    });
    expect(existsSync(skillHost)).toBe(false);
    const ws = h.workspace('acme', 'th-escape');
    expect(await readFile(path.join(ws, 'outputs', 'report.txt'), 'utf8')).toBe('made in the sandbox');
    expect(await readFile(path.join(ws, 'own.txt'), 'utf8')).toBe('escaped');
  });
});

describe('a skill script with SKILL_NETWORK_ALLOW', () => {
  let allowed: SandboxHarness;
  let web: Server;
  let webPort: number;
  beforeAll(async () => {
    web = createServer((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 7\r\nconnection: close\r\n\r\nallowed'));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    webPort = (web.address() as AddressInfo).port;
    allowed = await startSandboxHarness({
      copyProjectSkills: false,
      env: { SKILL_NETWORK_ALLOW: `127.0.0.1:${webPort}` },
      files: {
        'fetch/SKILL.md': '---\nname: fetch\ndescription: fetches a URL through the sandbox proxy\n---\n# Fetch\n',
        'fetch/scripts/fetch.py': [
          'import sys, urllib.request',
          'for url in sys.argv[1:]:',
          '    try:',
          '        print(url, urllib.request.urlopen(url, timeout=10).read().decode())',
          '    except Exception as e:',
          '        print(url, "refused", getattr(e, "code", type(e).__name__))',
        ].join('\n'),
      },
    });
  });
  afterAll(async () => {
    web?.close();
    await allowed?.[Symbol.asyncDispose]();
  });

  it('reaches an allowed destination over HTTP through the proxy, and nothing else', async () => {
    expect(allowed.sandbox.isolation.mode, 'skill scripts run only in bubblewrap (scripts/test-prerequisites.sh installs it)').toBe('bubblewrap');
    const ok = `http://127.0.0.1:${webPort}/`;
    const other = `http://127.0.0.1:${port}/`;
    const res = await allowed.execute('run_skill_script', { skill_id: 'fetch', script_name: 'fetch.py', args: [ok, other] });
    expect(res.error, res.content).toBeUndefined();
    expect(res.content.split('\n')).toEqual([`${ok} allowed`, `${other} refused 403`]);
  });
});
