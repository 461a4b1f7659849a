/**
 * Escape tests (issue 15): each attempt is contained with a clear result, nothing it started
 * outlives the run, and the sandbox keeps serving the next run. Every run goes under a parent cgroup
 * made here with a small pids.max and memory limit: a safety net, so even a bug in the per-run cap
 * cannot exhaust the machine's processes. Without writable cgroups the fork-bomb and shared-memory
 * tests are skipped (RLIMIT_NPROC alone does not contain a fork bomb started by root).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile, access } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CgroupHost, describeLimit, Sandbox, sandboxConfigFromEnv, type CgroupDirs, type SandboxResult } from './index.js';

const host = await CgroupHost.detect();
const noCgroup = host instanceof CgroupHost ? undefined : `no writable cgroup (${host.reason}): the fork bomb would not be contained`;
if (noCgroup) console.warn(`skipping the cgroup escape tests: ${noCgroup}`);
const SAFETY_NET = `agentloop-escape-tests-${process.pid}`;
let net: CgroupDirs | undefined;

const config = sandboxConfigFromEnv({
  SANDBOX_TIMEOUT_MS: '5000',
  SANDBOX_MEMORY_MB: '256',
  SANDBOX_CPU_SECONDS: '30',
  SANDBOX_MAX_PROCESSES: '32',
  SANDBOX_MAX_FILE_MB: '8',
  SANDBOX_MAX_OUTPUT_BYTES: '4096',
  ...(noCgroup ? {} : { SANDBOX_CGROUP_PARENT: SAFETY_NET }),
});
const sandbox = new Sandbox(config);
let root: string;
let mine: string;
let other: string;

beforeAll(async () => {
  const reason = await sandbox.unavailableReason();
  if (reason) throw new Error(`escape tests need bubblewrap: ${reason}`);
  if (host instanceof CgroupHost) net = await host.create({ maxPids: 256, memoryBytes: 1024 * 1024 * 1024 }, SAFETY_NET);
  root = await mkdtemp(path.join(os.tmpdir(), 'sandbox-escape-'));
  mine = path.join(root, 'tenant-a', 'thread-1');
  other = path.join(root, 'tenant-a', 'thread-2');
  await mkdir(path.join(mine, 'outputs'), { recursive: true });
  await mkdir(other, { recursive: true });
  await writeFile(path.join(other, 'secret.txt'), 'the other thread secret');
});

afterAll(async () => {
  await net?.remove();
  await rm(root, { recursive: true, force: true });
});

/** pids.current once the kernel has released the run's last tasks (uncharging lags the kill a little). */
async function pidsSettle(cg: CgroupDirs, deadlineMs = Date.now() + 5000): Promise<number> {
  let n = await cg.pidsCurrent();
  while (n > 0 && Date.now() < deadlineMs) {
    await new Promise((r) => setTimeout(r, 20));
    n = await cg.pidsCurrent();
  }
  return n;
}

const sh = (script: string, extra: Partial<Parameters<Sandbox['run']>[0]> = {}) =>
  sandbox.run({ workspaceDir: mine, argv: ['/bin/sh', '-c', script], ...extra });
const py = (code: string) => sandbox.run({ workspaceDir: mine, argv: [config.pythonPath, '-c', code] });

/** Host processes whose command line contains `marker`. */
async function hostProcessesWith(marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ');
      if (cmd.includes(marker)) found.push(`${pid}: ${cmd}`);
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

async function stillServing(): Promise<void> {
  const r = await sh('echo alive');
  expect(r.exitCode).toBe(0);
  expect(r.stdout).toBe('alive\n');
}

describe('sandbox escape attempts', () => {
  it('runs code with the workspace as its writable working directory', async () => {
    const r = await sh('pwd; id -u; echo hello > outputs/hello.txt');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('/workspace\n1000\n');
    expect(await readFile(path.join(mine, 'outputs', 'hello.txt'), 'utf8')).toBe('hello\n');
  });

  it('cannot read /etc/shadow', async () => {
    const r = await sh('cat /etc/shadow');
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/No such file or directory/);
    await stillServing();
  });

  it("cannot read another thread's workspace, by host path or relative path", async () => {
    const r = await sh(`cat ${path.join(other, 'secret.txt')}; cat ../thread-2/secret.txt; ls /workspace/..`);
    expect(r.stdout).not.toContain('the other thread secret');
    expect(r.stdout).not.toContain('thread-2');
    expect(r.stderr).toMatch(/No such file or directory/);
    await stillServing();
  });

  it('cannot write outside the workspace', async () => {
    const target = path.join(root, 'escaped.txt');
    const r = await sh(`echo x > /usr/escaped; echo x > /etc/escaped; echo x > ${target}; echo x > /escaped`);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/Read-only file system|Permission denied|No such file or directory/);
    await expect(access(target)).rejects.toThrow();
    await expect(access('/usr/escaped')).rejects.toThrow();
    await stillServing();
  });

  it('cannot open a network connection, to the host loopback or outside', async () => {
    let connections = 0;
    const server: Server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const code = [
        'import socket',
        `for host, port in (("127.0.0.1", ${port}), ("1.1.1.1", 53)):`,
        '    try:',
        '        socket.create_connection((host, port), timeout=2)',
        '        print("connected", host)',
        '    except OSError as e:',
        '        print("refused", host, e.strerror)',
      ].join('\n');
      const r = await py(code);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).not.toContain('connected');
      expect(r.stdout).toMatch(/refused 127\.0\.0\.1/);
      expect(r.stdout).toMatch(/refused 1\.1\.1\.1 Network is unreachable/);
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
    await stillServing();
  });

  it.skipIf(noCgroup !== undefined)('contains a fork bomb at the process limit; the machine can still fork', async () => {
    const r = await sh('bomb() { bomb | bomb & }; bomb; echo forkbomb-marker-7731; sleep 60', { limits: { wallTimeMs: 3000 } });
    expect(r.limitHit).toBe('processes');
    expect(describeLimit(r)).toBe('stopped: process limit 32');
    expect(await hostProcessesWith('forkbomb-marker-7731')).toEqual([]);
    expect(net && (await pidsSettle(net))).toBe(0);
    expect(spawnSync('/bin/true').status).toBe(0);
    await stillServing();
  });

  it.skipIf(noCgroup !== undefined)('stops processes that together pass the memory limit', async () => {
    // Each child stays under the per-process address-space limit; only the run's cgroup sees the sum.
    const child = 'import time; x = bytearray(120 * 1024 * 1024); time.sleep(1)';
    const code = [
      'import subprocess, sys',
      `ps = [subprocess.Popen([sys.executable, "-c", ${JSON.stringify(child)}]) for _ in range(4)]`,
      'codes = [p.wait() for p in ps]',
      'print(codes)',
      'sys.exit(0 if all(c == 0 for c in codes) else 1)',
    ].join('\n');
    const r = await py(code);
    expect(r.stdout).toMatch(/-9/);
    expect(r.limitHit).toBe('memory');
    expect(describeLimit(r)).toBe('stopped: memory limit 256 MiB');
    await stillServing();
  });

  it('refuses to allocate 4 GB', async () => {
    const r = await py('x = bytearray(4 * 1024 ** 3)\nprint("allocated")');
    expect(r.stdout).not.toContain('allocated');
    expect(r.limitHit).toBe('memory');
    expect(describeLimit(r)).toBe('stopped: memory limit 256 MiB');
    await stillServing();
  });

  it('kills an infinite loop at the time limit', async () => {
    const r: SandboxResult = await py('while True:\n    pass');
    expect(r.limitHit).toBe('time');
    expect(r.exitCode).toBeNull();
    expect(describeLimit(r)).toBe('killed: time limit 5 s (every process of the run was stopped)');
    await stillServing();
  });

  it('leaves no background process behind', async () => {
    const r = await sh('(sleep 3600.25 &) ; nohup sleep 3600.25 >/dev/null 2>&1 & setsid sleep 3600.25 & echo started');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('started\n');
    expect(await hostProcessesWith('3600.25')).toEqual([]);
    await stillServing();
  });

  it('cuts output at the budget and says how much was dropped', async () => {
    const r = await sh('yes x | head -c 100000');
    expect(r.stdout.length).toBe(4096);
    expect(r.droppedBytes).toBe(100000 - 4096);
  });

  it('stops a file written past the file size limit', async () => {
    const r = await sh('head -c 20000000 /dev/zero > big.bin');
    expect(r.limitHit).toBe('file_size');
    expect(describeLimit(r)).toBe('stopped: file size limit 8 MiB');
    await rm(path.join(mine, 'big.bin'), { force: true });
  });

  it('kills the whole tree when the caller aborts', async () => {
    const ctl = new AbortController();
    const pending = sh('sleep 3600.5 & sleep 3600.5; echo never');
    const aborted = sandbox.run({ workspaceDir: mine, argv: ['/bin/sh', '-c', 'sleep 3600.75'], signal: ctl.signal });
    ctl.abort();
    const r = await aborted;
    expect(r.limitHit).toBe('aborted');
    expect(await hostProcessesWith('3600.75')).toEqual([]);
    const timedOut = await pending;
    expect(timedOut.limitHit).toBe('time');
    expect(timedOut.stdout).not.toContain('never');
    expect(await hostProcessesWith('3600.5')).toEqual([]);
  });
});
