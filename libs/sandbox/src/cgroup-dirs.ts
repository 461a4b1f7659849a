import { access, readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface CgroupLimits {
  /** pids.max: processes and threads of the whole cgroup, its children included. */
  maxPids: number;
  /** memory.max (v2) / memory.limit_in_bytes (v1), swap included where the kernel accounts it. */
  memoryBytes: number;
  /** CPU quota in cores (0.5 = half a core); unset: no quota. */
  cpus?: number;
}

/** What the kernel counted while the run was in the cgroup. */
export interface CgroupEvents {
  /** A fork or clone was refused at pids.max. */
  pidsLimitHit: boolean;
  /** The OOM killer killed a process at the memory limit. */
  oomKilled: boolean;
}

const CPU_PERIOD_US = 100_000;

/** One cgroup: a directory per v1 controller, or one v2 directory ("unified"). */
export class CgroupDirs {
  constructor(
    readonly version: 1 | 2,
    private readonly dirs: ReadonlyMap<string, string>,
  ) {}

  private dir(controller: 'pids' | 'memory' | 'cpu' | 'freezer'): string | undefined {
    return this.version === 2 ? this.dirs.get('unified') : this.dirs.get(controller);
  }

  /** The cgroup.procs files a process writes its pid into to join (one per v1 hierarchy). */
  get procsFiles(): string[] {
    return [...this.dirs.values()].map((d) => path.join(d, 'cgroup.procs'));
  }

  /** The directory whose pids.* files count every process of the cgroup. */
  get pidsDir(): string {
    const d = this.dir('pids');
    if (!d) throw new Error('cgroup without a pids controller');
    return d;
  }

  async applyLimits(limits: CgroupLimits): Promise<void> {
    const pids = this.pidsDir;
    const memory = this.dir('memory');
    await writeFile(path.join(pids, 'pids.max'), String(limits.maxPids));
    if (!memory) throw new Error('cgroup without a memory controller');
    if (this.version === 2) {
      await writeFile(path.join(memory, 'memory.max'), String(limits.memoryBytes));
      // No swap: the limit is the memory a run may use, not a hint to page out.
      await writeIfPresent(path.join(memory, 'memory.swap.max'), '0');
    } else {
      await writeFile(path.join(memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      await writeIfPresent(path.join(memory, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
    }
    const cpu = this.dir('cpu');
    if (limits.cpus !== undefined && cpu) {
      const quota = Math.max(1000, Math.round(limits.cpus * CPU_PERIOD_US));
      if (this.version === 2) await writeFile(path.join(cpu, 'cpu.max'), `${quota} ${CPU_PERIOD_US}`);
      else {
        await writeFile(path.join(cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
        await writeFile(path.join(cpu, 'cpu.cfs_quota_us'), String(quota));
      }
    }
  }

  /** Processes and threads in the cgroup now (pids.current). */
  async pidsCurrent(): Promise<number> {
    return Number((await readFile(path.join(this.pidsDir, 'pids.current'), 'utf8')).trim());
  }

  async events(): Promise<CgroupEvents> {
    const pidsEvents = await readFile(path.join(this.pidsDir, 'pids.events'), 'utf8').catch(() => '');
    const memory = this.dir('memory') ?? '';
    const memoryEvents =
      this.version === 2
        ? await readFile(path.join(memory, 'memory.events'), 'utf8').catch(() => '')
        : await readFile(path.join(memory, 'memory.oom_control'), 'utf8').catch(() => '');
    return { pidsLimitHit: counter(pidsEvents, 'max') > 0, oomKilled: counter(memoryEvents, 'oom_kill') > 0 };
  }

  /**
   * Kills every process in the cgroup and waits until none is left: v2's cgroup.kill where the kernel
   * has it; otherwise the cgroup is frozen (so a fork bomb cannot outrun the kill), each process gets
   * SIGKILL, and it is thawed so they can die — repeated until the cgroup is empty.
   */
  async killAll(deadlineMs = Date.now() + 5000): Promise<void> {
    const unified = this.version === 2 ? this.dir('pids') : undefined;
    if (unified && (await writeIfPresent(path.join(unified, 'cgroup.kill'), '1'))) {
      await this.waitEmpty(deadlineMs);
      return;
    }
    for (;;) {
      const pids = await this.members();
      if (pids.length === 0) return;
      if (Date.now() > deadlineMs) throw new Error(`cgroup ${this.pidsDir} still has processes ${pids.slice(0, 10).join(', ')}`);
      await this.freeze(true);
      for (const pid of await this.members()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Exited meanwhile.
        }
      }
      await this.freeze(false);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Kills what is left and removes the cgroup's directories. */
  async remove(deadlineMs = Date.now() + 5000): Promise<void> {
    await this.killAll(deadlineMs);
    for (const dir of this.dirs.values()) await rmdirWhenEmpty(dir, deadlineMs);
  }

  private async members(): Promise<number[]> {
    const text = await readFile(path.join(this.pidsDir, 'cgroup.procs'), 'utf8').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return '';
      throw err;
    });
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map(Number);
  }

  private async waitEmpty(deadlineMs: number): Promise<void> {
    while ((await this.members()).length > 0) {
      if (Date.now() > deadlineMs) throw new Error(`cgroup ${this.pidsDir} did not empty after cgroup.kill`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /** Freezes or thaws (v1 freezer.state, v2 cgroup.freeze); a no-op without a freezer. */
  private async freeze(on: boolean): Promise<void> {
    if (this.version === 2) {
      await writeIfPresent(path.join(this.pidsDir, 'cgroup.freeze'), on ? '1' : '0');
      return;
    }
    const dir = this.dir('freezer');
    if (!dir) return;
    const state = path.join(dir, 'freezer.state');
    await writeFile(state, on ? 'FROZEN' : 'THAWED');
    if (!on) return;
    // FREEZING until every task has stopped; a short wait, then the kill goes ahead regardless.
    const until = Date.now() + 500;
    while ((await readFile(state, 'utf8')).trim() !== 'FROZEN' && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  }
}

/** "max 3" from pids.events, "oom_kill 1" from memory.events / memory.oom_control. */
function counter(text: string, key: string): number {
  const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** Writes a control file the kernel may not have (older kernels, no swap accounting); false when absent. */
async function writeIfPresent(file: string, value: string): Promise<boolean> {
  try {
    await access(file);
  } catch {
    return false;
  }
  await writeFile(file, value);
  return true;
}

/** Removes a cgroup directory that may briefly stay busy while its last processes are reaped. */
async function rmdirWhenEmpty(dir: string, deadlineMs: number): Promise<void> {
  for (;;) {
    try {
      await rmdir(dir);
      return;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || Date.now() > deadlineMs) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}
