import { randomUUID } from 'node:crypto';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CgroupDirs, type CgroupLimits } from './cgroup-dirs.js';

/**
 * Per-run cgroups (README "Code sandbox"): a hard cap on processes, memory and CPU for everything a
 * run starts, whatever user namespace it is in — RLIMIT_NPROC counts per uid and does not bind for a
 * sandbox started by root. cgroup v1 (one hierarchy per controller) and v2 (unified) are both
 * supported; children are created under this process's own cgroup, as read from /proc/self/cgroup.
 */

export type { CgroupLimits } from './cgroup-dirs.js';
export { CgroupDirs, type CgroupEvents } from './cgroup-dirs.js';

/** v1 controllers a run needs (pids, memory) and the ones used when present (cpu quota, freezer for the kill). */
const V1_REQUIRED = ['pids', 'memory'] as const;
const V1_OPTIONAL = ['cpu', 'freezer'] as const;
type V1Controller = (typeof V1_REQUIRED)[number] | (typeof V1_OPTIONAL)[number];

export interface CgroupHostOptions {
  /** A path below this process's own cgroup under which run cgroups are made (e.g. a test's capped parent). */
  parent?: string;
  /** Where the cgroup file systems are mounted. */
  root?: string;
  /** This process's membership; tests point it elsewhere. */
  selfCgroupFile?: string;
}

/** The cgroup directories this process may create run cgroups in, one per controller (v1) or one (v2). */
export class CgroupHost {
  private constructor(
    readonly version: 1 | 2,
    /** v1: controller → parent directory; v2: the single key "unified". */
    private readonly parents: ReadonlyMap<string, string>,
  ) {}

  /** What the status shows, e.g. "cgroup v1 (pids, memory, cpu, freezer)". */
  describe(): string {
    return this.version === 2 ? 'cgroup v2' : `cgroup v1 (${[...this.parents.keys()].join(', ')})`;
  }

  /**
   * Finds writable cgroups for this process, or the reason there are none (an unprivileged container,
   * a read-only /sys/fs/cgroup, missing controllers). Creates and removes a probe cgroup to be sure.
   */
  static async detect(opts: CgroupHostOptions = {}): Promise<CgroupHost | { reason: string }> {
    const root = opts.root ?? '/sys/fs/cgroup';
    let membership: string;
    try {
      membership = await readFile(opts.selfCgroupFile ?? '/proc/self/cgroup', 'utf8');
    } catch (err) {
      return { reason: `cannot read /proc/self/cgroup (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
    }
    const own = ownPaths(membership);
    const parents = new Map<string, string>();
    const sub = opts.parent ?? '';
    if (await exists(path.join(root, 'cgroup.controllers'))) {
      const unified = own.get('');
      if (unified === undefined) return { reason: 'cgroup v2 is mounted but /proc/self/cgroup has no "0::" line' };
      parents.set('unified', path.join(root, unified, sub));
    } else {
      for (const c of [...V1_REQUIRED, ...V1_OPTIONAL] as V1Controller[]) {
        const mount = path.join(root, c);
        const mine = own.get(c);
        if (mine === undefined || !(await exists(path.join(mount, 'cgroup.procs')))) {
          if ((V1_REQUIRED as readonly string[]).includes(c)) return { reason: `no cgroup v1 "${c}" controller at ${mount}` };
          continue;
        }
        parents.set(c, path.join(mount, mine, sub));
      }
    }
    const host = new CgroupHost(parents.has('unified') ? 2 : 1, parents);
    try {
      const probe = await host.create({ maxPids: 1, memoryBytes: 16 * 1024 * 1024 }, `agentloop-probe-${randomUUID().slice(0, 8)}`);
      await probe.remove();
    } catch (err) {
      return { reason: `no writable cgroup (${(err as Error).message})` };
    }
    return host;
  }

  /** Makes a cgroup with these limits (a run's, or a capped parent for other runs when `name` is given). */
  async create(limits: CgroupLimits, name = `agentloop-run-${randomUUID()}`): Promise<CgroupDirs> {
    const dirs = new Map<string, string>();
    try {
      for (const [controller, parent] of this.parents) {
        if (this.version === 2) await enableV2Controllers(parent);
        const dir = path.join(parent, name);
        await mkdir(dir, { recursive: true });
        dirs.set(controller, dir);
      }
      const cg = new CgroupDirs(this.version, dirs);
      await cg.applyLimits(limits);
      return cg;
    } catch (err) {
      await new CgroupDirs(this.version, dirs).remove().catch(() => undefined);
      throw err;
    }
  }
}

/** "4:memory:/process_api/x" → memory → /process_api/x; v2's "0::/a" → "" → /a. Named hierarchies are skipped. */
export function ownPaths(procSelfCgroup: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of procSelfCgroup.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line.trim());
    if (!m) continue;
    const [, controllers = '', p = '/'] = m;
    if (controllers === '') out.set('', p);
    else for (const c of controllers.split(',')) if (!c.startsWith('name=')) out.set(c, p);
  }
  return out;
}

/**
 * v2 only lets a cgroup's children use a controller its parent enabled in cgroup.subtree_control, and
 * a cgroup with processes of its own cannot enable any (the "no internal processes" rule). When ours
 * has processes (a container's own cgroup), they move to a leaf "agentloop-service" first.
 */
async function enableV2Controllers(parent: string): Promise<void> {
  const wanted = ['pids', 'memory', 'cpu'];
  const available = (await readFile(path.join(parent, 'cgroup.controllers'), 'utf8')).split(/\s+/);
  const enabled = (await readFile(path.join(parent, 'cgroup.subtree_control'), 'utf8')).split(/\s+/);
  const missing = wanted.filter((c) => available.includes(c) && !enabled.includes(c));
  for (const c of ['pids', 'memory']) if (!available.includes(c)) throw new Error(`cgroup v2 controller "${c}" is not available in ${parent}`);
  if (missing.length === 0) return;
  const control = path.join(parent, 'cgroup.subtree_control');
  const line = missing.map((c) => `+${c}`).join(' ');
  try {
    await writeFile(control, line);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EBUSY') throw err;
    const leaf = path.join(parent, 'agentloop-service');
    await mkdir(leaf, { recursive: true });
    const pids = (await readFile(path.join(parent, 'cgroup.procs'), 'utf8')).split('\n').filter((p) => p !== '');
    for (const pid of pids) await writeFile(path.join(leaf, 'cgroup.procs'), pid).catch(() => undefined);
    await writeFile(control, line);
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}
