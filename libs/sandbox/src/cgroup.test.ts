/**
 * The per-run cgroup cap (README "Code sandbox"). The real-cgroup tests run under a capped parent
 * cgroup made here, so a bug in the per-run cap still cannot exhaust the machine's processes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CgroupDirs, CgroupHost, ownPaths, Sandbox, sandboxConfigFromEnv } from './index.js';

describe('cgroup paths and limits', () => {
  it("reads this process's own cgroup per v1 controller and v2's unified path", () => {
    const own = ownPaths('9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/init.scope\n');
    expect(Object.fromEntries(own)).toEqual({ pids: '/', memory: '/process_api/abc', cpu: '/x', cpuacct: '/x', '': '/init.scope' });
  });

  it('writes v2 limits: pids.max, memory.max, no swap, cpu.max', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'cgroup-v2-'));
    try {
      await writeFile(path.join(dir, 'memory.swap.max'), 'max');
      const cg = new CgroupDirs(2, new Map([['unified', dir]]));
      await cg.applyLimits({ maxPids: 50, memoryBytes: 256 * 1024 * 1024, cpus: 0.5 });
      const read = (f: string) => readFile(path.join(dir, f), 'utf8');
      expect(await read('pids.max')).toBe('50');
      expect(await read('memory.max')).toBe(String(256 * 1024 * 1024));
      expect(await read('memory.swap.max')).toBe('0');
      expect(await read('cpu.max')).toBe('50000 100000');
      expect(cg.procsFiles).toEqual([path.join(dir, 'cgroup.procs')]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
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

const host = await CgroupHost.detect();
const noCgroup = host instanceof CgroupHost ? undefined : host.reason;
if (noCgroup) console.warn(`skipping the real-cgroup tests: ${noCgroup}`);

describe.skipIf(noCgroup !== undefined)('per-run cgroup on this machine', () => {
  const parentName = `agentloop-cgroup-test-${process.pid}`;
  let net: CgroupDirs;
  let workspace: string;

  beforeAll(async () => {
    if (!(host instanceof CgroupHost)) return;
    net = await host.create({ maxPids: 256, memoryBytes: 1024 * 1024 * 1024 }, parentName);
    workspace = await mkdtemp(path.join(os.tmpdir(), 'cgroup-run-'));
    await mkdir(path.join(workspace, 'outputs'));
  });

  afterAll(async () => {
    await net?.remove();
    if (workspace) await rm(workspace, { recursive: true, force: true });
  });

  it('stops a run at pids.max: of 200 sleeps at most 50 processes start, and none is left after', async () => {
    const sandbox = new Sandbox({
      ...sandboxConfigFromEnv({ SANDBOX_TIMEOUT_MS: '20000', SANDBOX_MAX_PROCESSES: '50' }),
      cgroupParent: parentName,
    });
    const code = [
      'import subprocess, sys',
      'started = []',
      'for i in range(200):',
      '    try:',
      '        started.append(subprocess.Popen(["/bin/sleep", "30"]))',
      '    except OSError as e:',
      '        print("refused after", len(started), e.strerror)',
      '        sys.exit(3)',
      'print("all started")',
    ].join('\n');
    const r = await sandbox.run({ workspaceDir: workspace, argv: [sandbox.config.pythonPath, '-c', code] });
    const m = /^refused after (\d+) Resource temporarily unavailable\n$/.exec(r.stdout);
    expect(m, r.stdout + r.stderr).not.toBeNull();
    expect(Number(m?.[1])).toBeLessThan(50);
    expect(r.exitCode).toBe(3);
    expect(r.limitHit).toBe('processes');
    expect(await pidsSettle(net)).toBe(0);
    expect(spawnSync('/bin/true').status).toBe(0);
  });

  it('says which cgroups it uses in its status', async () => {
    const sandbox = new Sandbox({ ...sandboxConfigFromEnv({}), cgroupParent: parentName });
    const status = await sandbox.status();
    expect(status.unavailable).toBeUndefined();
    expect(status.limits).toMatch(/^cgroup v[12].* \+ prlimit$/);
    expect(status.network).toBe('none');
  });
});

describe('without a writable cgroup', () => {
  it('falls back to prlimit only and says so; SANDBOX_REQUIRE_CGROUP=true refuses to run', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'no-cgroup-'));
    try {
      const fallback = new Sandbox(sandboxConfigFromEnv({ SANDBOX_CGROUP_ROOT: empty }));
      const status = await fallback.status();
      expect(status.unavailable).toBeUndefined();
      expect(status.limits).toBe(`prlimit only: no cgroup v1 "pids" controller at ${empty}/pids`);
      const strict = new Sandbox(sandboxConfigFromEnv({ SANDBOX_CGROUP_ROOT: empty, SANDBOX_REQUIRE_CGROUP: 'true' }));
      expect(await strict.unavailableReason()).toBe(
        `the code sandbox requires a cgroup (SANDBOX_REQUIRE_CGROUP=true) but has none: no cgroup v1 "pids" controller at ${empty}/pids`,
      );
      await expect(strict.run({ workspaceDir: empty, argv: ['/bin/true'] })).rejects.toThrow(/requires a cgroup/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
