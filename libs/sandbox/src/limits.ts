import { parseAllowList, type AllowEntry } from '@agentloop/net';
import { toolboxFromEnv, type Toolbox } from './toolbox.js';

/** Limits and settings of the code sandbox, read from the environment (README "Code sandbox"). */

export interface SandboxLimits {
  /** Wall-clock budget of one run; at the end the whole process tree is killed. */
  wallTimeMs: number;
  /** Address space of each process (RLIMIT_AS). */
  memoryBytes: number;
  /** CPU seconds of each process (RLIMIT_CPU). */
  cpuSeconds: number;
  /** Processes and threads of the whole run: the run cgroup's pids.max (and RLIMIT_NPROC, which alone does not bind for root). */
  maxProcesses: number;
  /** Largest file a process may write (RLIMIT_FSIZE). */
  maxFileBytes: number;
  /** Bytes of stdout and stderr kept (together); the rest is dropped with a marker. */
  maxOutputBytes: number;
}

export interface SandboxConfig {
  /** Off: the code tools answer that the sandbox is disabled; nothing runs. */
  enabled: boolean;
  bwrapPath: string;
  /** Python inside the sandbox: under /usr, an extra read-only path or the toolbox (SANDBOX_PYTHON; default the toolbox's, else /usr/bin/python3). */
  pythonPath: string;
  /** The skills toolbox (SKILLS_TOOLBOX), mounted read-only into every sandbox. */
  toolbox?: Toolbox;
  /** Host paths mounted read-only at the same place besides /usr and the minimal /etc (extra interpreters, data). */
  extraReadOnlyPaths: string[];
  limits: SandboxLimits;
  /** CPU quota of a run's cgroup in cores (SANDBOX_CPUS); unset: no quota. */
  cpus?: number;
  /** Refuse to run when no writable cgroup exists instead of falling back to prlimit only. */
  requireCgroup: boolean;
  /** Where the cgroup file systems are mounted (SANDBOX_CGROUP_ROOT, /sys/fs/cgroup). */
  cgroupRoot: string;
  /** A path below this process's own cgroup to create run cgroups in (SANDBOX_CGROUP_PARENT). */
  cgroupParent?: string;
  /** Destinations sandboxed code may reach over HTTP(S) through the host proxy; empty: no network. */
  networkAllow: AllowEntry[];
}

export const DEFAULT_LIMITS: SandboxLimits = {
  wallTimeMs: 60_000,
  memoryBytes: 1024 * 1024 * 1024,
  cpuSeconds: 60,
  maxProcesses: 128,
  maxFileBytes: 100 * 1024 * 1024,
  maxOutputBytes: 64 * 1024,
};

const MIB = 1024 * 1024;

function int(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name}: expected an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

function bool(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new Error(`${name}: expected true or false, got "${env[name]}"`);
}

/**
 * SANDBOX_ENABLED (true), SANDBOX_BWRAP (/usr/bin/bwrap), SANDBOX_PYTHON (the toolbox's, else /usr/bin/python3), SKILLS_TOOLBOX,
 * SANDBOX_READONLY_PATHS (comma-separated), SANDBOX_TIMEOUT_MS, SANDBOX_MEMORY_MB, SANDBOX_CPU_SECONDS,
 * SANDBOX_MAX_PROCESSES, SANDBOX_MAX_FILE_MB, SANDBOX_MAX_OUTPUT_BYTES, SANDBOX_CPUS, SANDBOX_REQUIRE_CGROUP,
 * SANDBOX_CGROUP_ROOT, SANDBOX_CGROUP_PARENT, SANDBOX_NETWORK_ALLOW (the HTTP_FETCH_ALLOW syntax). Throws naming the bad variable.
 */
export function sandboxConfigFromEnv(env: Record<string, string | undefined> = process.env): SandboxConfig {
  const toolbox = toolboxFromEnv(env);
  const pythonPath = env.SANDBOX_PYTHON?.trim() || toolbox?.python || '/usr/bin/python3';
  if (!pythonPath.startsWith('/')) throw new Error(`SANDBOX_PYTHON: expected an absolute path, got "${pythonPath}"`);
  const extraReadOnlyPaths = (env.SANDBOX_READONLY_PATHS ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const p of extraReadOnlyPaths) if (!p.startsWith('/')) throw new Error(`SANDBOX_READONLY_PATHS: "${p}" is not an absolute path`);
  const cpusText = env.SANDBOX_CPUS?.trim();
  const cpus = cpusText ? Number(cpusText) : undefined;
  if (cpus !== undefined && !(Number.isFinite(cpus) && cpus >= 0.01 && cpus <= 1024)) {
    throw new Error(`SANDBOX_CPUS: expected a number of cores from 0.01 to 1024, got "${cpusText}"`);
  }
  const cgroupParent = env.SANDBOX_CGROUP_PARENT?.trim() || undefined;
  if (cgroupParent !== undefined && (cgroupParent.startsWith('/') || cgroupParent.split('/').includes('..'))) {
    throw new Error(`SANDBOX_CGROUP_PARENT: expected a relative path below this process's cgroup, got "${cgroupParent}"`);
  }
  return {
    enabled: bool(env, 'SANDBOX_ENABLED', true),
    requireCgroup: bool(env, 'SANDBOX_REQUIRE_CGROUP', false),
    cgroupRoot: env.SANDBOX_CGROUP_ROOT?.trim() || '/sys/fs/cgroup',
    ...(cpus !== undefined ? { cpus } : {}),
    ...(cgroupParent !== undefined ? { cgroupParent } : {}),
    networkAllow: parseAllowList(env.SANDBOX_NETWORK_ALLOW ?? '', 'SANDBOX_NETWORK_ALLOW'),
    bwrapPath: env.SANDBOX_BWRAP?.trim() || '/usr/bin/bwrap',
    pythonPath,
    ...(toolbox ? { toolbox } : {}),
    extraReadOnlyPaths,
    limits: {
      wallTimeMs: int(env, 'SANDBOX_TIMEOUT_MS', DEFAULT_LIMITS.wallTimeMs, 100, 3_600_000),
      memoryBytes: int(env, 'SANDBOX_MEMORY_MB', DEFAULT_LIMITS.memoryBytes / MIB, 16, 1_048_576) * MIB,
      cpuSeconds: int(env, 'SANDBOX_CPU_SECONDS', DEFAULT_LIMITS.cpuSeconds, 1, 86_400),
      maxProcesses: int(env, 'SANDBOX_MAX_PROCESSES', DEFAULT_LIMITS.maxProcesses, 1, 100_000),
      maxFileBytes: int(env, 'SANDBOX_MAX_FILE_MB', DEFAULT_LIMITS.maxFileBytes / MIB, 1, 1_048_576) * MIB,
      maxOutputBytes: int(env, 'SANDBOX_MAX_OUTPUT_BYTES', DEFAULT_LIMITS.maxOutputBytes, 256, 64 * MIB),
    },
  };
}

/** "512 MiB" / "1.5 GiB". */
export function formatBytes(n: number): string {
  if (n >= 1024 * MIB) return `${+(n / (1024 * MIB)).toFixed(1)} GiB`;
  if (n >= MIB) return `${+(n / MIB).toFixed(1)} MiB`;
  return `${n} bytes`;
}
