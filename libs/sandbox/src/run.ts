import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { bwrapArgs, prlimitArgs } from './bwrap-args.js';
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

/**
 * Runs programs in bubblewrap (bwrap-args.ts) under prlimit. bwrap is started in its own process
 * group: at the wall-time limit or an abort the group is killed, and because bwrap's PID namespace
 * init dies with it (--die-with-parent), the kernel kills every process left in the namespace —
 * background ones included. The same happens when the program exits normally: nothing outlives a run.
 */
export class Sandbox {
  constructor(readonly config: SandboxConfig) {}

  /** Why the sandbox cannot run here (disabled, bwrap or prlimit missing), or undefined when it can. */
  async unavailableReason(): Promise<string | undefined> {
    if (!this.config.enabled) return 'the code sandbox is disabled (SANDBOX_ENABLED=false)';
    for (const bin of [this.config.bwrapPath, '/usr/bin/prlimit']) {
      try {
        await access(bin, constants.X_OK);
      } catch {
        return `the code sandbox is not available: ${bin} is missing (install bubblewrap / util-linux)`;
      }
    }
    return undefined;
  }

  run(req: SandboxRequest): Promise<SandboxResult> {
    const limits = tighter(this.config.limits, req.limits);
    const args = [
      ...prlimitArgs(limits),
      '--',
      this.config.bwrapPath,
      ...bwrapArgs({ workspaceDir: req.workspaceDir, argv: req.argv, env: req.env, extraReadOnlyPaths: this.config.extraReadOnlyPaths }),
    ];
    return new Promise((resolve, reject) => {
      const child = spawn('/usr/bin/prlimit', args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'], env: {} });
      const output = new CappedOutput(limits.maxOutputBytes);
      let stoppedBy: LimitHit | undefined;
      const killTree = (why: LimitHit) => {
        stoppedBy ??= why;
        try {
          // The negative pid names the process group: prlimit/bwrap and everything they started outside the namespace.
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
        result.limitHit = stoppedBy ?? inferLimit(code, signal, stderr);
        resolve(result);
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
