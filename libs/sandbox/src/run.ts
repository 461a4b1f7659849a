import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import type { HostLookup } from '@agentloop/net';
import { bwrapArgs, prlimitArgs } from './bwrap-args.js';
import { CgroupHost, type CgroupDirs } from './cgroup.js';
import { PROXY_SOCKET_IN_SANDBOX, proxyEnv, withForwarder } from './network-forwarder.js';
import { SandboxNetworkProxy } from './network-proxy.js';
import { formatBytes, type SandboxConfig, type SandboxLimits } from './limits.js';
import { CappedOutput } from './output.js';

/** Why a run was stopped or failed by the sandbox rather than by the code's own doing. */
export type LimitHit = 'time' | 'cpu' | 'memory' | 'processes' | 'file_size' | 'aborted';

export interface SandboxRequest {
  /** Host folder mounted read-write at /workspace: the thread's workspace. */
  workspaceDir: string;
  argv: readonly string[];
  env?: Readonly<Record<string, string>>;
  /** Written to the program's stdin, which is then closed. */
  stdin?: string;
  /** Aborting kills the whole process tree, as the time limit does. */
  signal?: AbortSignal;
  /** Tighter limits for this run (never looser than the configuration's). */
  limits?: Partial<SandboxLimits>;
  /** Host path → sandbox path, bound read-only for this run (a skill's folder, its installed dependencies, an interpreter). */
  readOnlyBinds?: ReadonlyArray<readonly [string, string]>;
}

export interface SandboxResult {
  /** Exit status of the program, or null when a signal ended it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Output bytes received beyond the budget and dropped. */
  droppedBytes: number;
  /** Set when a limit (or the caller's abort) is what stopped the program. */
  limitHit?: LimitHit;
  /** The limits the run had. */
  limits: SandboxLimits;
}

/** Messages Python, glibc and the shells print when a limit refuses memory or a process. */
const MEMORY_SIGNS = /\bMemoryError\b|Cannot allocate memory|std::bad_alloc|out of memory/i;
const PROCESS_SIGNS = /Resource temporarily unavailable|fork: retry|Cannot fork|can't fork/i;

function tighter(base: SandboxLimits, over: Partial<SandboxLimits> | undefined): SandboxLimits {
  const out = { ...base };
  for (const k of Object.keys(out) as Array<keyof SandboxLimits>) {
    const v = over?.[k];
    if (v !== undefined && v > 0 && v < out[k]) out[k] = v;
  }
  return out;
}

/** Joins every cgroup.procs file given, then execs the rest: nothing runs before the run is in its cgroup. */
const JOIN_CGROUP =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo "sandbox: cannot join cgroup $1" >&2; exit 125; }; shift; n=$((n-1)); done; exec "$@"';

/** What the sandbox can do here, for startup logs and status pages. */
export interface SandboxStatus {
  /** Undefined when runs can start; otherwise why not. */
  unavailable?: string;
  /** "cgroup v1 (pids, memory, cpu, freezer) + prlimit", or "prlimit only: <why no cgroup>". */
  limits: string;
  /** "none" or "HTTP(S) proxy to: <allow-list>". */
  network: string;
}

/**
 * Runs programs in bubblewrap (bwrap-args.ts) under prlimit, inside a cgroup of their own
 * (cgroup.ts) when one can be created: pids.max and the memory limit then hold for the whole run,
 * whatever it forks. bwrap is started in its own process group: at the wall-time limit or an abort
 * the cgroup (or, without one, the group) is killed, and because bwrap's PID namespace init dies with
 * it (--die-with-parent), the kernel kills every process left in the namespace — background ones
 * included. After every run the cgroup is emptied and removed: nothing outlives a run.
 */
export class Sandbox {
  private cgroupHost: Promise<CgroupHost | { reason: string }> | undefined;
  private readonly proxy: SandboxNetworkProxy | undefined;

  constructor(
    readonly config: SandboxConfig,
    opts: { lookup?: HostLookup } = {},
  ) {
    if (config.networkAllow.length > 0) this.proxy = new SandboxNetworkProxy({ allow: config.networkAllow, ...(opts.lookup ? { lookup: opts.lookup } : {}) });
  }

  private cgroups(): Promise<CgroupHost | { reason: string }> {
    this.cgroupHost ??= CgroupHost.detect({
      root: this.config.cgroupRoot,
      ...(this.config.cgroupParent !== undefined ? { parent: this.config.cgroupParent } : {}),
    });
    return this.cgroupHost;
  }

  /** Why the sandbox cannot run here (disabled, bwrap or prlimit missing, a required cgroup missing), or undefined. */
  async unavailableReason(): Promise<string | undefined> {
    if (!this.config.enabled) return 'the code sandbox is disabled (SANDBOX_ENABLED=false)';
    for (const bin of [this.config.bwrapPath, '/usr/bin/prlimit']) {
      try {
        await access(bin, constants.X_OK);
      } catch {
        return `the code sandbox is not available: ${bin} is missing (install bubblewrap / util-linux)`;
      }
    }
    const host = await this.cgroups();
    if (this.config.requireCgroup && !(host instanceof CgroupHost)) {
      return `the code sandbox requires a cgroup (SANDBOX_REQUIRE_CGROUP=true) but has none: ${host.reason}`;
    }
    return undefined;
  }

  async status(): Promise<SandboxStatus> {
    const unavailable = await this.unavailableReason();
    const host = this.config.enabled ? await this.cgroups() : undefined;
    const limits = host instanceof CgroupHost ? `${host.describe()} + prlimit` : `prlimit only: ${host?.reason ?? 'disabled'}`;
    const network = this.proxy ? `HTTP(S) proxy to: ${this.config.networkAllow.map((e) => e.text).join(', ')}` : 'none';
    return { ...(unavailable ? { unavailable } : {}), limits, network };
  }

  /** Stops the network proxy (when one was started). */
  async close(): Promise<void> {
    await this.proxy?.close();
  }

  async run(req: SandboxRequest): Promise<SandboxResult> {
    const limits = tighter(this.config.limits, req.limits);
    const host = await this.cgroups();
    if (this.config.requireCgroup && !(host instanceof CgroupHost))
      throw new Error(`the code sandbox requires a cgroup (SANDBOX_REQUIRE_CGROUP=true): ${host.reason}`);
    let argv = req.argv;
    let env = req.env;
    const readOnlyBinds: Array<readonly [string, string]> = [...(req.readOnlyBinds ?? [])];
    if (this.proxy) {
      readOnlyBinds.push([await this.proxy.socketPath(), PROXY_SOCKET_IN_SANDBOX]);
      argv = withForwarder(this.config.pythonPath, argv);
      env = { ...proxyEnv(), ...env };
    }
    const inner = [
      '/usr/bin/prlimit',
      ...prlimitArgs(limits),
      '--',
      this.config.bwrapPath,
      ...bwrapArgs({
        workspaceDir: req.workspaceDir,
        argv,
        env,
        extraReadOnlyPaths: this.config.extraReadOnlyPaths,
        ...(this.config.toolbox ? { toolbox: this.config.toolbox } : {}),
        readOnlyBinds,
      }),
    ];
    if (!(host instanceof CgroupHost)) return this.spawnRun(inner, req, limits, undefined);
    const cg = await host.create({ maxPids: limits.maxProcesses, memoryBytes: limits.memoryBytes, ...(this.config.cpus ? { cpus: this.config.cpus } : {}) });
    try {
      return await this.spawnRun(['/bin/sh', '-c', JOIN_CGROUP, 'sandbox-join', String(cg.procsFiles.length), ...cg.procsFiles, ...inner], req, limits, cg);
    } finally {
      await cg.remove();
    }
  }

  private spawnRun(command: string[], req: SandboxRequest, limits: SandboxLimits, cg: CgroupDirs | undefined): Promise<SandboxResult> {
    return new Promise((resolve, reject) => {
      const [file = '', ...args] = command;
      const child = spawn(file, args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: {} });
      const output = new CappedOutput(limits.maxOutputBytes);
      let stoppedBy: LimitHit | undefined;
      const killTree = (why: LimitHit) => {
        stoppedBy ??= why;
        // The cgroup holds every process of the run, inside the namespace or not.
        cg?.killAll().catch(() => undefined);
        try {
          // The negative pid names the process group: the wrapper, prlimit/bwrap and what they started outside the namespace.
          if (child.pid) process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      };
      const timer = setTimeout(() => killTree('time'), limits.wallTimeMs);
      const onAbort = () => killTree('aborted');
      if (req.signal?.aborted) onAbort();
      req.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (c: Buffer) => output.push('stdout', c));
      child.stderr.on('data', (c: Buffer) => output.push('stderr', c));
      child.stdin.on('error', () => {
        // The program may exit without reading its input.
      });
      child.stdin.end(req.stdin ?? '');
      child.on('error', (err) => {
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        reject(err);
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        req.signal?.removeEventListener('abort', onAbort);
        const stderr = output.text('stderr');
        const result: SandboxResult = { exitCode: code, signal, stdout: output.text('stdout'), stderr, droppedBytes: output.dropped, limits };
        const events = cg && code !== 0 ? cg.events() : Promise.resolve(undefined);
        events.then(
          (ev) => {
            // A refused fork or an OOM kill explains a failed run better than the timer that ended it.
            if (stoppedBy === 'aborted') result.limitHit = 'aborted';
            else if (ev?.pidsLimitHit) result.limitHit = 'processes';
            else if (ev?.oomKilled) result.limitHit = 'memory';
            else result.limitHit = stoppedBy ?? inferLimit(code, signal, stderr);
            resolve(result);
          },
          (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))),
        );
      });
    });
  }
}

/** The limit a program that ended on its own most likely hit (bwrap passes the program's status through). */
function inferLimit(code: number | null, signal: NodeJS.Signals | null, stderr: string): LimitHit | undefined {
  // RLIMIT_CPU: SIGXCPU at the soft limit (bwrap reports a signalled child as 128 + n).
  if (signal === 'SIGXCPU' || code === 128 + 24) return 'cpu';
  if (signal === 'SIGXFSZ' || code === 128 + 25 || /File too large/.test(stderr)) return 'file_size';
  if (code === 0) return undefined;
  if (MEMORY_SIGNS.test(stderr)) return 'memory';
  if (PROCESS_SIGNS.test(stderr)) return 'processes';
  return undefined;
}

/** "killed: memory limit 512 MiB" and the like, for a tool error; undefined when no limit was hit. */
export function describeLimit(result: Pick<SandboxResult, 'limitHit' | 'limits'>): string | undefined {
  const l = result.limits;
  switch (result.limitHit) {
    case 'time':
      return `killed: time limit ${l.wallTimeMs / 1000} s (every process of the run was stopped)`;
    case 'cpu':
      return `killed: CPU time limit ${l.cpuSeconds} s`;
    case 'memory':
      return `stopped: memory limit ${formatBytes(l.memoryBytes)}`;
    case 'processes':
      return `stopped: process limit ${l.maxProcesses}`;
    case 'file_size':
      return `stopped: file size limit ${formatBytes(l.maxFileBytes)}`;
    case 'aborted':
      return 'killed: the call was cancelled';
    default:
      return undefined;
  }
}
