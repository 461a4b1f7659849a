/**
 * Attack class 1 — path shapes and sizes (issue 18: a 20 KB `read_file` path blocked the whole
 * process ~10 s; two 200 KB paths froze it for 12 minutes, deaf to SIGTERM, RSS at 2.9 GB).
 *
 * Every file tool gets long paths (20 KB, 200 KB of `a/a/a/…`), deep `../` chains, NUL bytes,
 * absolute host paths, symlinks planted in the workspace and oversized globs; downloads get long and
 * encoded paths. Each must be refused with a clear `Error:` (HTTP: a 4xx) while `/ok` keeps answering
 * within 100 ms and the server's RSS stays under 500 MB. The server is a child process; a test that
 * freezes it gets it SIGKILLed and restarted on the same DATA_DIR so the next test starts clean.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  ATTACK_ENV,
  KEY_A,
  OK_BUDGET_MS,
  RSS_CEILING_MB,
  TENANT_A,
  call,
  hostPaths,
  leaksIn,
  longPath,
  newThread,
  rawRequest,
  runWait,
  sleep,
  spawnServer,
  text,
  toolMessages,
  underAttack,
  warmUp,
  type ProbeStats,
  type ServerChild,
  type Values,
} from './harness.js';

/** How long one attack may take before the test calls the server frozen. */
const ATTACK_DEADLINE_MS = 10_000;

let server: ServerChild;
let thread: string;
/** The real path of tenant A's workspace of `thread`. */
let ws: string;

async function healthy(s: ServerChild): Promise<boolean> {
  return call(s.url, '', 'GET', '/ok', undefined, { timeoutMs: 1_000 }).then(
    (r) => r.status === 200,
    () => false,
  );
}

beforeAll(async () => {
  server = await spawnServer({ env: ATTACK_ENV });
  await warmUp(server.url, KEY_A);
  thread = await newThread(server.url, KEY_A);
  // A first run creates the workspace (and outputs/hello.txt, a file to aim at).
  const first = await runWait(server.url, KEY_A, thread, [
    { tool_calls: [{ name: 'write_file', args: { file_path: 'outputs/hello.txt', content: 'hello' } }] },
    { content: 'ok' },
  ]);
  expect(first.status).toBe(200);
  ws = path.join(server.workspaceRoot, TENANT_A, thread);
  expect(existsSync(path.join(ws, 'outputs', 'hello.txt'))).toBe(true);
}, 120_000);

// A frozen (or swollen) server is SIGKILLed and restarted on the same data, so one failure does not
// fail the tests after it, and each RSS figure belongs to its own attack.
beforeEach(async () => {
  if (server.child.exitCode === null && server.child.signalCode === null && server.rssMb() < RSS_CEILING_MB && (await healthy(server))) return;
  const dataDir = server.dataDir;
  server.child.kill('SIGKILL');
  await server.exited;
  server = await spawnServer({ env: ATTACK_ENV, dataDir });
  await warmUp(server.url, KEY_A, 2);
}, 120_000);

afterAll(async () => {
  await server?.stop(5_000);
  server?.cleanup();
});

/**
 * One scripted turn of tool calls, run under the prober; returns the tool messages and the probe.
 * On a new thread unless `on` is given (a frozen attack leaves its thread busy).
 */
type Call = { name: string; args: Record<string, unknown> };
async function attack(calls: Call[], on?: string, before: Call[] = []): Promise<{ tools: string[]; status: number; probe: ProbeStats; values: Values }> {
  const target = on ?? (await newThread(server.url, KEY_A));
  const turns = [...(before.length ? [{ tool_calls: before }] : []), { tool_calls: calls }, { content: 'done' }];
  const { result, probe } = await underAttack(server.url, [server.pid], () => runWait(server.url, KEY_A, target, turns, { timeoutMs: ATTACK_DEADLINE_MS }));
  const values = result.json as Values;
  const tools = toolMessages(values).map(text).slice(before.length);
  // A run that did not get as far as its tool calls says why here rather than as "expected [] to have length".
  const why = values?.__interrupt__ ? `interrupted: ${JSON.stringify(values.__interrupt__.map((i) => i.value.reason))}` : result.text.slice(0, 600);
  expect(tools.length, `the run answered ${result.status}, ${why}`).toBe(calls.length);
  return { tools, status: result.status, probe, values };
}

function expectResponsive(probe: ProbeStats, rss = false): void {
  console.log(
    `[probe] ${expect.getState().currentTestName}: worst /ok ${Math.round(probe.worstMs)} ms over ${probe.samples} probes, ${probe.failures} failed, peak RSS ${Math.round(probe.peakRssMb[server.pid] ?? 0)} MB`,
  );
  expect.soft(probe.failures, `failed /ok probes (of ${probe.samples})`).toBe(0);
  expect.soft(probe.worstMs, `worst /ok latency over ${probe.samples} probes`).toBeLessThan(OK_BUDGET_MS);
  if (rss) expect.soft(probe.peakRssMb[server.pid] ?? 0, 'peak RSS of the server (MB)').toBeLessThan(RSS_CEILING_MB);
}

function expectNoLeak(texts: string[]): void {
  expect(leaksIn(texts.join('\n'), hostPaths(server))).toEqual([]);
}

const TOO_LONG = /^Error: .*(too long|too deep|length|limit)/i;

describe('long paths (20 KB and 200 KB of a/a/a/…)', () => {
  it('refuses a 20 KB read_file path with a clear error while /ok stays under 100 ms', async () => {
    const r = await attack([{ name: 'read_file', args: { file_path: longPath(20_000) } }]);
    expect(r.status).toBe(200);
    expect(r.tools).toHaveLength(1);
    expect.soft(r.tools[0]).toMatch(TOO_LONG);
    expectResponsive(r.probe, true);
    expectNoLeak(r.tools);
  });

  it('refuses two 200 KB read_file paths in one turn while /ok stays under 100 ms and RSS under 500 MB', async () => {
    const r = await attack([
      { name: 'read_file', args: { file_path: longPath(200_000) } },
      { name: 'read_file', args: { file_path: longPath(200_000, 'uploads/') } },
    ]);
    expect(r.status).toBe(200);
    expect(r.tools).toHaveLength(2);
    for (const t of r.tools) expect.soft(t).toMatch(TOO_LONG);
    expectResponsive(r.probe, true);
  });

  it('refuses a 200 KB write_file path and writes nothing', async () => {
    const r = await attack([{ name: 'write_file', args: { file_path: longPath(200_000), content: 'x' } }]);
    expect.soft(r.tools[0]).toMatch(TOO_LONG);
    expect(existsSync(path.join(ws, 'outputs', 'a'))).toBe(false);
    expectResponsive(r.probe, true);
  });

  it('refuses a 200 KB find_files folder and a 200 KB list_workspace_files folder', async () => {
    const r = await attack([
      { name: 'find_files', args: { pattern: '*.txt', path: longPath(200_000) } },
      { name: 'list_workspace_files', args: { directory: longPath(200_000) } },
    ]);
    expect(r.tools).toHaveLength(2);
    for (const t of r.tools) expect.soft(t).toMatch(TOO_LONG);
    expectResponsive(r.probe, true);
  });

  it('refuses a 200 KB search_file path', async () => {
    const r = await attack([{ name: 'search_file', args: { file_path: longPath(200_000), query: 'x' } }]);
    expect.soft(r.tools[0]).toMatch(TOO_LONG);
    expectResponsive(r.probe, true);
  });

  it('refuses a path of 5,000 short segments that is under 20 KB (depth, not only length, is bounded)', async () => {
    // 10,000 characters: 5,000 levels of `a/` — deeper than any real workspace.
    const r = await attack([{ name: 'read_file', args: { file_path: longPath(10_000) } }]);
    expect.soft(r.tools[0]).toMatch(TOO_LONG);
    expectResponsive(r.probe, true);
  });
});

describe('traversal, NUL bytes and absolute host paths', () => {
  it('refuses a 150 KB chain of ../ to /etc/hostname without reading it', async () => {
    const r = await attack([{ name: 'read_file', args: { file_path: `${'../'.repeat(50_000)}etc/hostname` } }]);
    expect(r.tools[0]).toMatch(/^Error: .*(outside|too long|too deep|length|limit)/i);
    expectResponsive(r.probe, true);
  });

  it('answers a 100 KB x/../ chain that normalizes back into the workspace quickly (refused, or the file)', async () => {
    const r = await attack([{ name: 'read_file', args: { file_path: `outputs/${'x/../'.repeat(20_000)}hello.txt` } }], undefined, [
      { name: 'write_file', args: { file_path: 'outputs/hello.txt', content: 'hi there' } },
    ]);
    expect(r.tools[0]).toMatch(/^(Error: |hi there$)/);
    expectResponsive(r.probe, true);
  });

  it('refuses paths with a NUL byte in every file tool', async () => {
    const r = await attack([
      { name: 'read_file', args: { file_path: 'outputs/hello.txt\u0000.png' } },
      { name: 'write_file', args: { file_path: 'outputs/x\u0000y.txt', content: 'x' } },
      { name: 'find_files', args: { pattern: '*', path: 'outputs\u0000' } },
      { name: 'list_workspace_files', args: { directory: 'outputs\u0000/..' } },
    ]);
    expect(r.tools).toHaveLength(4);
    for (const t of r.tools) expect(t).toMatch(/^Error: .*NUL/i);
    expectResponsive(r.probe);
    expectNoLeak(r.tools);
  });

  it('refuses absolute host paths (/etc/hosts, /proc/self/environ, listing /, finding in /etc)', async () => {
    const r = await attack([
      { name: 'read_file', args: { file_path: '/etc/hosts' } },
      { name: 'read_file', args: { file_path: '/proc/self/environ' } },
      { name: 'list_workspace_files', args: { directory: '/' } },
      { name: 'find_files', args: { pattern: 'host*', path: '/etc' } },
      { name: 'search_file', args: { file_path: '/proc/self/environ', query: 'KEY' } },
    ]);
    for (const t of r.tools) {
      expect(t).toMatch(/^Error: .*outside/i);
      expect(t).not.toContain('localhost');
      expect(t).not.toContain('AGENTLOOP_API_KEYS');
    }
    expectResponsive(r.probe);
    expectNoLeak(r.tools);
  });

  it('never writes to /etc by an absolute path: the write is interrupted for approval or refused', async () => {
    const target = await newThread(server.url, KEY_A);
    const res = await runWait(server.url, KEY_A, target, [
      { tool_calls: [{ name: 'write_file', args: { file_path: '/etc/agentloop-pwned', content: 'x' } }] },
      { content: 'done' },
    ]);
    expect(res.status).toBe(200);
    const tools = toolMessages(res.json as Values).map(text);
    const interrupted = (res.json as Values).__interrupt__ !== undefined;
    expect(interrupted || (tools.length === 1 && /^Error: .*outside/i.test(tools[0]!)), res.text.slice(0, 400)).toBe(true);
    expect(existsSync('/etc/agentloop-pwned')).toBe(false);
  });

  it('never returns /etc/passwd: the read is interrupted for approval or refused', async () => {
    const target = await newThread(server.url, KEY_A);
    const res = await runWait(server.url, KEY_A, target, [{ tool_calls: [{ name: 'read_file', args: { file_path: '/etc/passwd' } }] }, { content: 'done' }]);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('root:x:0');
    const tools = toolMessages(res.json as Values).map(text);
    const interrupted = (res.json as Values).__interrupt__ !== undefined;
    expect(interrupted || (tools.length === 1 && /^Error: .*outside/i.test(tools[0]!)), res.text.slice(0, 400)).toBe(true);
  });
});

describe('symlinks planted in the workspace (as an extracted archive or a shared volume could leave them)', () => {
  beforeAll(() => {
    mkdirSync(path.join(ws, 'outputs'), { recursive: true });
    symlinkSync('/etc', path.join(ws, 'outputs', 'etc-link'));
    symlinkSync('loop-b', path.join(ws, 'outputs', 'loop-a'));
    symlinkSync('loop-a', path.join(ws, 'outputs', 'loop-b'));
    symlinkSync(path.join(server.realDataDir, 'escape-target'), path.join(ws, 'outputs', 'dangling'));
    // A link chain 60 deep (above the kernel's 40): each hop resolved by hand must be bounded.
    for (let i = 0; i < 60; i++) symlinkSync(`chain-${i + 1}`, path.join(ws, 'outputs', `chain-${i}`));
    writeFileSync(path.join(ws, 'outputs', 'chain-60'), 'end of chain');
  });

  it('refuses to read, list or write through a link to /etc', async () => {
    const r = await attack(
      [
        { name: 'read_file', args: { file_path: 'outputs/etc-link/passwd' } },
        { name: 'list_workspace_files', args: { directory: 'outputs/etc-link' } },
        { name: 'write_file', args: { file_path: 'outputs/etc-link/agentloop-pwned', content: 'x' } },
      ],
      thread,
    );
    for (const t of r.tools) {
      expect(t).toMatch(/^Error: .*outside/i);
      expect(t).not.toContain('root:x:0');
    }
    expect(existsSync('/etc/agentloop-pwned')).toBe(false);
    expectResponsive(r.probe);
    expectNoLeak(r.tools);
  });

  it('refuses a write through a dangling link (its target outside the workspace is not created)', async () => {
    const r = await attack([{ name: 'write_file', args: { file_path: 'outputs/dangling', content: 'x' } }], thread);
    expect(r.tools[0]).toMatch(/^Error: .*outside/i);
    expect(existsSync(path.join(server.realDataDir, 'escape-target'))).toBe(false);
    expectNoLeak(r.tools);
  });

  it('answers a symlink loop and a 60-link chain with an error, quickly', async () => {
    const r = await attack(
      [
        { name: 'read_file', args: { file_path: 'outputs/loop-a' } },
        { name: 'write_file', args: { file_path: 'outputs/loop-a/x', content: 'x' } },
        { name: 'write_file', args: { file_path: 'outputs/chain-0/x', content: 'x' } },
      ],
      thread,
    );
    for (const t of r.tools) expect(t).toMatch(/^Error: /);
    expectResponsive(r.probe);
    expectNoLeak(r.tools);
  });

  it('serves no download through a link (GET /threads/{id}/files/outputs/etc-link/passwd)', async () => {
    const res = await call(server.url, KEY_A, 'GET', `/threads/${thread}/files/outputs/etc-link/passwd`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.text).not.toContain('root:x:0');
    expectNoLeak([res.text]);
  });
});

describe('the replay log (hardening)', () => {
  it('is out of reach of the file tools and downloads: an entry can be neither read, forged nor reached through a link', async () => {
    // The first run's write_file was recorded in the thread's private folder, not in its workspace.
    const priv = path.join(server.workspaceRoot, '.agentloop', TENANT_A, thread, 'effects');
    const [entry] = readdirSync(priv);
    expect(entry).toMatch(/^[0-9a-f]{64}\.json$/);
    expect(existsSync(path.join(ws, '.agentloop'))).toBe(false);
    // What a sandboxed script could plant: the earlier layout's folder, and a link to it.
    mkdirSync(path.join(ws, '.agentloop', 'effects'), { recursive: true });
    writeFileSync(path.join(ws, '.agentloop', 'effects', entry!), '{}');
    symlinkSync('../.agentloop', path.join(ws, 'outputs', 'replay-link'));
    const before = readFileSync(path.join(priv, entry!), 'utf8');
    const r = await attack(
      [
        { name: 'read_file', args: { file_path: `.agentloop/effects/${entry}` } },
        { name: 'write_file', args: { file_path: `outputs/../.agentloop/effects/${entry}`, content: 'forged' } },
        { name: 'write_file', args: { file_path: `outputs/replay-link/effects/${entry}`, content: 'forged' } },
        { name: 'read_file', args: { file_path: path.join(priv, entry!) } },
        { name: 'read_file', args: { file_path: `../../.agentloop/${TENANT_A}/${thread}/effects/${entry}` } },
      ],
      thread,
    );
    for (const t of r.tools) expect(t).toMatch(/^Error: .*(reserved|outside|Only outputs)/i);
    expect(readFileSync(path.join(priv, entry!), 'utf8')).toBe(before);
    expect(readFileSync(path.join(ws, '.agentloop', 'effects', entry!), 'utf8')).toBe('{}');
    const res = await call(server.url, KEY_A, 'GET', `/threads/${thread}/files/.agentloop/effects/${entry}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expectNoLeak([...r.tools, res.text]);
  });
});

describe('globs', () => {
  it('refuses a 100 KB glob pattern with a clear error', async () => {
    const r = await attack([{ name: 'find_files', args: { pattern: '*a'.repeat(50_000), path: 'outputs' } }]);
    expect(r.tools[0]).toMatch(/^Error: .*pattern.*(too long|length|limit|more than|allowed)/i);
    expectResponsive(r.probe, true);
  });

  it('answers backtracking and brace-explosion globs without stalling the server', async () => {
    // First a file whose name a backtracking matcher would take exponential time to reject.
    const r = await attack(
      [
        { name: 'find_files', args: { pattern: `${'*a'.repeat(60)}b`, path: 'outputs' } },
        { name: 'find_files', args: { pattern: '{a,b}'.repeat(24), path: 'outputs' } },
        { name: 'find_files', args: { pattern: '{1..1000000}', path: 'outputs' } },
        { name: 'find_files', args: { pattern: '**/'.repeat(300) + '*', path: 'outputs' } },
      ],
      undefined,
      [{ name: 'write_file', args: { file_path: `outputs/${'a'.repeat(200)}`, content: 'x' } }],
    );
    expect(r.tools).toHaveLength(4);
    // Refused or answered, but answered: nothing here may hang or kill the server.
    for (const t of r.tools) expect(t).not.toMatch(/timed out|deadline/i);
    expectResponsive(r.probe, true);
  });
});

describe('downloads (GET /threads/{id}/files/<path>)', () => {
  it.each([20_000, 200_000])('refuses a %i-byte download path with a 4xx (or a closed connection) while /ok stays fast', async (bytes) => {
    const started = Date.now();
    const { result, probe } = await underAttack(server.url, [server.pid], () =>
      rawRequest(server.url, KEY_A, 'GET', `/threads/${thread}/files/${longPath(bytes)}`, { timeoutMs: ATTACK_DEADLINE_MS }),
    );
    // Refused before any filesystem work: at once, not after walking thousands of segments.
    expect(Date.now() - started, 'time to the answer (ms)').toBeLessThan(1_500);
    // Past the HTTP parser's header limit the server may answer 431 or drop the connection; never 2xx or 5xx.
    expect(result.status === -1 || (result.status >= 400 && result.status < 500), `status ${result.status}: ${result.text.slice(0, 200)}`).toBe(true);
    expectResponsive(probe, true);
    expectNoLeak([result.text]);
  });

  it.each([
    ['../', '../../../../etc/passwd'],
    ['encoded ../', '%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd'],
    ['encoded slashes', 'outputs%2f..%2f..%2f..%2f..%2f..%2f..%2fetc%2fpasswd'],
    ['a NUL byte', 'outputs/hello.txt%00.png'],
    ['backslashes', 'outputs\\..\\..\\..\\..\\etc\\passwd'],
    ['a private folder', 'temp/../skills/pdf/SKILL.md'],
    ['an absolute path', '%2fetc%2fpasswd'],
    ['a double-encoded ../', '%252e%252e/%252e%252e/etc/passwd'],
  ])('refuses a download path with %s with a 4xx and no host content', async (_name, p) => {
    const res = await rawRequest(server.url, KEY_A, 'GET', `/threads/${thread}/files/${p}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(res.text).not.toContain('root:x:0');
    expect(res.text).not.toContain('name: PDF');
    expectNoLeak([res.text]);
  });
});

describe('SIGTERM during an attack', () => {
  it('stops within 5 s of SIGTERM (SHUTDOWN_GRACE_MS=3000) while two 200 KB-path reads are in flight', async () => {
    const inflight = runWait(
      server.url,
      KEY_A,
      thread,
      [
        {
          tool_calls: [
            { name: 'read_file', args: { file_path: longPath(200_000) } },
            { name: 'read_file', args: { file_path: longPath(200_000, 'temp/') } },
          ],
        },
        { content: 'done' },
      ],
      { timeoutMs: 15_000 },
    ).catch(() => undefined);
    await sleep(300);
    const how = await server.stop(15_000);
    await inflight;
    expect(how.killed, `the server ignored SIGTERM for 15 s (exit: ${how.code ?? how.signal})`).toBe(false);
    expect(how.ms, 'time from SIGTERM to exit (ms)').toBeLessThan(5_000);
  }, 30_000);
});
