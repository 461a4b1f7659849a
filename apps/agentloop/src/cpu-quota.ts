import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Reads a file as text, or undefined when it is missing or unreadable. */
export type ReadText = (file: string) => string | undefined;

const readText: ReadText = (file) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * The CPUs this process may use by its cgroup's CPU quota, or undefined when no quota applies or
 * none can be read.
 *
 * Why: `os.availableParallelism()` counts the CPUs the process may be scheduled on, not its share
 * of them. In a container with a CPU limit (Kubernetes `resources.limits.cpu`, `docker run
 * --cpus`), it still sees every core of the node, so `EMBEDDED_THREADS=auto` would start one V8
 * isolate per node core and have them throttled against each other.
 *
 * cgroup v2: `cpu.max` ("<quota> <period>" or "max <period>") of the process's cgroup and of every
 * ancestor up to the root, the smallest; cgroup v1: `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1:
 * none) of the `cpu` hierarchy. The process's cgroup comes from /proc/self/cgroup; inside a
 * container with its own cgroup namespace that path is `/`, and the container's files are the
 * mount's root ones, which are read too.
 */
export function cgroupCpuLimit(read: ReadText = readText): number | undefined {
  const own = read('/proc/self/cgroup') ?? '';
  const limits: number[] = [];
  for (const line of own.split('\n')) {
    const [, controllers, cgroupPath] = /^\d+:([^:]*):(.*)$/.exec(line.trim()) ?? [];
    if (controllers === undefined || cgroupPath === undefined) continue;
    if (controllers === '') {
      for (const dir of withAncestors('/sys/fs/cgroup', cgroupPath)) {
        const limit = parseCpuMax(read(path.join(dir, 'cpu.max')));
        if (limit !== undefined) limits.push(limit);
      }
    } else if (controllers.split(',').includes('cpu')) {
      for (const mount of ['/sys/fs/cgroup/cpu', `/sys/fs/cgroup/${controllers}`]) {
        for (const dir of withAncestors(mount, cgroupPath)) {
          const limit = parseCfs(read(path.join(dir, 'cpu.cfs_quota_us')), read(path.join(dir, 'cpu.cfs_period_us')));
          if (limit !== undefined) limits.push(limit);
        }
      }
    }
  }
  return limits.length > 0 ? Math.min(...limits) : undefined;
}

/** `mount` + `cgroupPath` and each of its parents, up to `mount` itself. */
function withAncestors(mount: string, cgroupPath: string): string[] {
  const parts = cgroupPath.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
  const dirs: string[] = [];
  for (let n = parts.length; n >= 0; n--) dirs.push(path.join(mount, ...parts.slice(0, n)));
  return dirs;
}

function parseCpuMax(text: string | undefined): number | undefined {
  const [quota, period] = (text ?? '').trim().split(/\s+/);
  if (quota === undefined || quota === 'max' || period === undefined) return undefined;
  return ratio(Number(quota), Number(period));
}

function parseCfs(quota: string | undefined, period: string | undefined): number | undefined {
  if (quota === undefined || period === undefined) return undefined;
  return ratio(Number(quota.trim()), Number(period.trim()));
}

function ratio(quota: number, period: number): number | undefined {
  return Number.isFinite(quota) && Number.isFinite(period) && quota > 0 && period > 0 ? quota / period : undefined;
}
