import { readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createToolHarness, type ToolHarness } from '../testing/index.js';

const ENV = { SANDBOX_TIMEOUT_MS: '4000', SANDBOX_MEMORY_MB: '256', SANDBOX_MAX_OUTPUT_BYTES: '2048' };

let h: ToolHarness;
beforeEach(async () => {
  h = await createToolHarness({ env: ENV });
});
afterEach(async () => {
  await h[Symbol.asyncDispose]();
});

describe('python_analyser', () => {
  it('reads an uploaded CSV and writes a table to outputs/, reported as delivered', async () => {
    await writeFile(path.join(h.workspace.root, 'uploads', 'sales.csv'), 'region,amount\nnorth,10\nsouth,5\nnorth,7\n');
    const code = [
      'import csv, collections',
      'totals = collections.Counter()',
      'for row in csv.DictReader(open("uploads/sales.csv")):',
      '    totals[row["region"]] += int(row["amount"])',
      'with open("outputs/summary.md", "w") as f:',
      '    f.write("| region | total |\\n|---|---|\\n")',
      '    for region, total in sorted(totals.items()):',
      '        f.write(f"| {region} | {total} |\\n")',
      'print(dict(totals))',
    ].join('\n');
    const res = await h.call('python_analyser', { code });
    expect(res.error).toBeUndefined();
    expect(res.content).toBe("Exit code: 0\n--- stdout ---\n{'north': 17, 'south': 5}\nFiles written to outputs/ (delivered to the user): outputs/summary.md");
    expect(await readFile(path.join(h.workspace.root, 'outputs', 'summary.md'), 'utf8')).toBe('| region | total |\n|---|---|\n| north | 17 |\n| south | 5 |\n');
  });

  it('returns a failing script’s traceback with its exit code (not a tool error)', async () => {
    const res = await h.call('python_analyser', { code: 'raise ValueError("bad data")' });
    expect(res.error).toBeUndefined();
    expect(res.content).toMatch(/^Exit code: 1\n--- stderr ---\nTraceback[\s\S]*ValueError: bad data$/);
  });

  it('answers a limit as a tool error naming it, and keeps serving', async () => {
    const res = await h.call('python_analyser', { code: 'x = bytearray(4 * 1024 ** 3)' });
    expect(res.content).toMatch(/^Error: python_analyser stopped: memory limit 256 MiB\n--- stderr ---\n[\s\S]*MemoryError/);
    expect(res.error?.code).toBe('TOOL_FAILED');
    const loop = await h.call('python_analyser', { code: 'while True: pass' });
    expect(loop.content).toBe('Error: python_analyser killed: time limit 4 s (every process of the run was stopped)');
    const ok = await h.call('python_analyser', { code: 'print(6 * 7)' });
    expect(ok.content).toBe('Exit code: 0\n--- stdout ---\n42');
  });

  it('requires code, naming the field', async () => {
    const res = await h.call('python_analyser', {});
    expect(res.content).toMatch(/^Error: Invalid arguments for python_analyser: code: required/);
  });

  it('has the display name clients show while it runs', () => {
    expect(h.registry.lookup('python_analyser')?.spec.metadata?.displayName).toBe('Running Python code…');
    expect(h.registry.lookup('run_bash_command')?.spec.metadata?.displayName).toBe('Running a shell command…');
  });
});

describe('python_analyser with a network allow-list', () => {
  it('reaches an allowed host through the proxy, is refused elsewhere, and tells the model so', async () => {
    const server = createServer((req, res) => res.end(`rows for ${req.url ?? ''}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      await using net = await createToolHarness({ env: { ...ENV, SANDBOX_NETWORK_ALLOW: `127.0.0.1:${port}` } });
      expect(net.registry.lookup('python_analyser')?.spec.description).toContain(`Network: HTTP(S) only, through the preset proxy, to 127.0.0.1:${port}`);
      const code = [
        'import urllib.request, urllib.error',
        `print(urllib.request.urlopen("http://127.0.0.1:${port}/sales").read().decode())`,
        'try:',
        '    urllib.request.urlopen("http://169.254.169.254/latest/meta-data/")',
        'except urllib.error.HTTPError as e:',
        '    print(e.code, e.read().decode().strip())',
      ].join('\n');
      const res = await net.call('python_analyser', { code });
      expect(res.content).toBe(
        'Exit code: 0\n--- stdout ---\nrows for /sales\n403 Refused to connect to 169.254.169.254:80: 169.254.169.254 is an internal address (link-local / cloud metadata (169.254.0.0/16)).',
      );
    } finally {
      server.close();
    }
  });

  it('has no network without one', () => {
    expect(h.registry.lookup('python_analyser')?.spec.description).toContain('No network access');
  });
});

describe('run_bash_command', () => {
  it('runs in the workspace and cuts long output with a marker', async () => {
    const res = await h.call('run_bash_command', { command: 'pwd && yes abc | head -c 5000' });
    expect(res.content.startsWith('Exit code: 0\n--- stdout ---\n/workspace\nabc\nabc\n')).toBe(true);
    expect(res.content.endsWith('[output cut: 2963 more bytes beyond the 2048-byte limit]')).toBe(true);
  });

  it('cannot touch anything outside the workspace', async () => {
    const res = await h.call('run_bash_command', { command: 'rm -rf /usr/bin/env; cat /etc/shadow; ls /usr/bin/env' });
    expect(res.content).toMatch(/Read-only file system/);
    expect(res.content).toMatch(/\/usr\/bin\/env\n/);
  });

  it('says when the sandbox is disabled', async () => {
    await using off = await createToolHarness({ env: { SANDBOX_ENABLED: 'false' } });
    const res = await off.call('run_bash_command', { command: 'echo hi' });
    expect(res.content).toBe('Error: run_bash_command cannot run: the code sandbox is disabled (SANDBOX_ENABLED=false)');
  });
});
