import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sandboxPath, type Toolbox } from '@agentloop/sandbox';

/** Resource limits applied with prlimit(1) when it is installed; 0 leaves a limit off. */
export interface ResourceLimits {
  /** RLIMIT_CPU, seconds. */
  cpuSeconds: number;
  /** RLIMIT_AS, bytes. */
  addressSpaceBytes: number;
  /** RLIMIT_NPROC: processes (threads) of the real user id; the kernel ignores it for root. */
  processes: number;
  /** RLIMIT_FSIZE, bytes. */
  fileSizeBytes: number;
}

/** What this machine lets the sandbox enforce, probed once at start. */
export interface SandboxCapabilities {
  /** Absolute path of prlimit, when installed. Without it no resource limit applies. */
  prlimit: string | undefined;
  /** RLIMIT_NPROC is not enforced for root (uid 0) or a process with CAP_SYS_RESOURCE. */
  processLimitEnforced: boolean;
  /** This Node supports `--experimental-permission` (file and child-process restrictions). */
  nodePermissions: boolean;
  /**
   * unshare(1), when it can create user, network, PID and mount namespaces here: scripts then run
   * without network and without sight of this service's processes (e.g. /proc/<pid>/environ).
   */
  unshare: string | undefined;
}

/** The namespaces a script runs in: its own user (mapped to this uid), network (no interfaces up) and PID (fresh /proc). */
export const UNSHARE_ARGS = ['--user', '--map-root-user', '--net', '--pid', '--fork', '--mount-proc', '--kill-child'] as const;

const firstExisting = (names: string[]) => names.flatMap((n) => [`/usr/bin/${n}`, `/bin/${n}`, `/usr/sbin/${n}`, `/sbin/${n}`]).find((p) => existsSync(p));

export interface ProbeOptions {
  /** Probe unshare(1) (only SKILL_SCRIPT_ISOLATION=namespaces can use it). */
  namespaces: boolean;
  /** unshare(1) to probe (SKILL_UNSHARE); default: the first of /usr/bin, /bin, /usr/sbin, /sbin that has it. */
  unshare?: string;
}

/** Probes prlimit, Node's permission model and (by running it once) unshare. */
export async function probeCapabilities(opts: ProbeOptions = { namespaces: true }): Promise<SandboxCapabilities> {
  const prlimit = firstExisting(['prlimit']);
  const unshare = opts.namespaces ? (opts.unshare ?? firstExisting(['unshare'])) : undefined;
  let unshareWorks = false;
  if (unshare) {
    try {
      await promisify(execFile)(unshare, [...UNSHARE_ARGS, 'true'], { timeout: 10_000, env: { PATH: '/usr/bin:/bin' } });
      unshareWorks = true;
    } catch {
      unshareWorks = false;
    }
  }
  return {
    prlimit,
    processLimitEnforced: prlimit !== undefined && process.getuid?.() !== 0,
    nodePermissions: process.allowedNodeEnvironmentFlags.has('--experimental-permission'),
    unshare: unshareWorks ? unshare : undefined,
  };
}

export interface PythonInfo {
  /** The real interpreter (not a pyenv shim, which needs the parent's environment). */
  executable: string;
  /** "3.11": part of the dependency cache key (wheels are built per version). */
  version: string;
  /**
   * The folders the interpreter needs at run time: sys.prefix and sys.base_prefix (a venv and the
   * Python it was made from) and the folder of the resolved executable. The bubblewrap sandbox
   * mounts those outside /usr read-only.
   */
  roots: string[];
}

const PYTHON_PROBE = [
  'import os, sys',
  'print(sys.executable)',
  'print("%d.%d" % sys.version_info[:2])',
  'print(os.pathsep.join([sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))]))',
].join('\n');

/** Finds the real Python behind `command`; undefined when there is none. */
export async function probePython(command = 'python3'): Promise<PythonInfo | undefined> {
  try {
    const { stdout } = await promisify(execFile)(command, ['-c', PYTHON_PROBE], { timeout: 10_000 });
    const [executable, version, roots = ''] = stdout.trim().split('\n');
    if (!executable || !version) return undefined;
    return { executable: executable.trim(), version: version.trim(), roots: [...new Set(roots.trim().split(path.delimiter).filter(Boolean))] };
  } catch {
    return undefined;
  }
}

/** The real Python interpreter's path (see probePython). */
export async function resolvePython(command = 'python3'): Promise<string | undefined> {
  return (await probePython(command))?.executable;
}

export interface IsolatedProcess {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The complete environment: nothing of this process's environment is inherited. */
  env: Record<string, string>;
  /** Written to stdin, which is then closed. */
  input: string;
  timeoutMs: number;
  /** stdout and stderr are each kept up to this many bytes. */
  maxOutputBytes: number;
  limits?: ResourceLimits;
  prlimit?: string;
  /** Run inside new namespaces (UNSHARE_ARGS) with this unshare(1). */
  unshare?: string;
}

export interface ProcessResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** stdout went past maxOutputBytes (the rest was dropped). */
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** The process could not be started (e.g. the interpreter is missing). */
  spawnError?: string;
  /** The sandbox limit that stopped the script, when the bubblewrap sandbox knows it ("stopped: memory limit 1 GiB"). */
  limit?: string;
}

/**
 * Runs a command as the leader of its own process group (and session) with exactly `env`. At the
 * timeout the whole group is killed (SIGKILL), and so is whatever the command left running in its
 * group when it exits, so no child outlives the call. Output is drained continuously and capped.
 * Limits go through prlimit(1), which sets them and execs the next command in the same process;
 * with `unshare`, the command runs as PID 1 of a new PID namespace, whose every process the kernel
 * kills when it ends (even one that left the process group).
 */
export function runIsolated(p: IsolatedProcess): Promise<ProcessResult> {
  const limits = p.prlimit && p.limits ? [p.prlimit, ...prlimitArgs(p.limits), '--'] : [];
  const namespaces = p.unshare ? [p.unshare, ...UNSHARE_ARGS] : [];
  const argv = [...limits, ...namespaces, p.command, ...p.args];
  return new Promise<ProcessResult>((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: p.cwd, env: p.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const out = new CappedBuffer(p.maxOutputBytes);
    const err = new CappedBuffer(p.maxOutputBytes);
    let timedOut = false;
    let settled = false;
    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, p.timeoutMs);
    const finish = (r: ProcessResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.stdin.on('error', () => undefined);
    child.stdin.end(p.input);
    child.on('error', (e) => {
      finish({ exitCode: null, signal: null, stdout: '', stderr: '', timedOut: false, stdoutTruncated: false, stderrTruncated: false, spawnError: e.message });
    });
    // A background child still holding stdout open would delay 'close': it goes with the group.
    child.on('exit', killGroup);
    child.on('close', (code, signal) => {
      finish({
        exitCode: code,
        signal,
        stdout: out.text(),
        stderr: err.text(),
        timedOut,
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
      });
    });
  });
}

function prlimitArgs(l: ResourceLimits): string[] {
  const args = ['--core=0'];
  if (l.cpuSeconds > 0) args.push(`--cpu=${l.cpuSeconds}`);
  if (l.addressSpaceBytes > 0) args.push(`--as=${l.addressSpaceBytes}`);
  if (l.processes > 0) args.push(`--nproc=${l.processes}`);
  if (l.fileSizeBytes > 0) args.push(`--fsize=${l.fileSizeBytes}`);
  return args;
}

class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(d: Buffer): void {
    const room = this.max - this.size;
    if (d.length > room) this.truncated = true;
    if (room <= 0) return;
    const part = d.length > room ? d.subarray(0, room) : d;
    this.chunks.push(part);
    this.size += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

export interface ScriptLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  /** Address space (prlimit) and, for Node, twice the V8 old-space cap. 0: none. */
  maxMemoryBytes: number;
  maxProcesses: number;
  maxFileBytes: number;
}

export interface ScriptRun {
  kind: 'python' | 'node';
  /** Absolute path of the interpreter. */
  interpreter: string;
  /** What runs: a script file (real path), or a Python module of the skill (`python -m scripts.fill`). */
  target: { script: string } | { module: string };
  /** Command-line arguments after the script or module (`sys.argv[1:]`, `process.argv.slice(2)`). */
  argv: readonly string[];
  /** Real path of the skill's folder: importable (PYTHONPATH), so `from scripts import x` works. */
  skillDir: string;
  /** Real path of the thread's workspace: the cwd and AGENT_WORKSPACE_PATH. */
  workspace: string;
  /** Text for stdin (JSON of object arguments, else empty). */
  input: string;
  limits: ScriptLimits;
  capabilities: SandboxCapabilities;
  /** Python: the skill's installed dependencies (after the skill folder on PYTHONPATH). */
  pythonPath?: string;
  /** Node: the skill's installed node_modules (NODE_PATH, for require()). */
  nodeModules?: string;
  /** The skills toolbox: its bin first on PATH, its node_modules on NODE_PATH after the skill's own. */
  toolbox?: Toolbox;
  /**
   * Node: run under the permission model, reading only the workspace and these folders, writing only
   * the workspace, without child processes or workers.
   */
  nodePermissions?: { readRoots: readonly string[] };
}

export type ScriptResult = ProcessResult;

/**
 * Runs one skill script (seed 000 §3.7) as its author wrote it: `argv` on the command line, JSON
 * object arguments on stdin, the workspace as cwd (so `uploads/form.pdf` resolves), the skill's
 * folder and then its installed dependencies on PYTHONPATH (so `python -m scripts.x` and
 * `from scripts import y` work; a script run by path also imports its own folder, as Python does),
 * and an environment of PATH, LANG, HOME and TMPDIR (a fresh temp folder, removed afterwards),
 * AGENT_WORKSPACE_PATH, AGENT_SKILL_DIR and Python's no-bytecode / unbuffered switches. Nothing of this service's environment, secrets included, reaches the script.
 * See runIsolated for the process group, timeout and output cap.
 */
export async function runScript(r: ScriptRun): Promise<ScriptResult> {
  const home = await mkdtemp(path.join(tmpdir(), 'agentloop-skill-'));
  const env: Record<string, string> = {
    PATH: sandboxPath(r.toolbox, [path.dirname(r.interpreter), '/usr/local/bin', '/usr/bin', '/bin']),
    LANG: 'C.UTF-8',
    HOME: home,
    TMPDIR: home,
    AGENT_WORKSPACE_PATH: r.workspace,
    AGENT_SKILL_DIR: r.skillDir,
  };
  const args: string[] = [];
  if (r.kind === 'python') {
    Object.assign(env, { PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' });
    env.PYTHONPATH = [r.skillDir, ...(r.pythonPath ? [r.pythonPath] : [])].join(':');
    if ('module' in r.target) args.push('-m', r.target.module);
    else args.push(r.target.script);
  } else {
    const nodePath = [r.nodeModules, r.toolbox?.nodeModules].filter((p): p is string => p !== undefined);
    if (nodePath.length > 0) env.NODE_PATH = nodePath.join(':');
    if (r.limits.maxMemoryBytes > 0) args.push(`--max-old-space-size=${Math.max(32, Math.floor(r.limits.maxMemoryBytes / 2 / 1024 / 1024))}`);
    if (r.nodePermissions && r.capabilities.nodePermissions) {
      args.push('--experimental-permission', '--disable-warning=ExperimentalWarning', `--allow-fs-write=${r.workspace}`);
      const readRoots = [r.workspace, ...r.nodePermissions.readRoots, ...nodePath];
      for (const root of readRoots) args.push(`--allow-fs-read=${root}`);
    }
    // Node has no module form (script-call.ts only makes one for Python).
    if ('script' in r.target) args.push(r.target.script);
  }
  args.push(...r.argv);
  try {
    return await runIsolated({
      command: r.interpreter,
      args,
      cwd: r.workspace,
      env,
      input: r.input,
      timeoutMs: r.limits.timeoutMs,
      maxOutputBytes: r.limits.maxOutputBytes,
      prlimit: r.capabilities.prlimit,
      ...(r.capabilities.unshare ? { unshare: r.capabilities.unshare } : {}),
      limits: {
        // Inherited by every child: even one that left the process group (setsid) cannot spin for long.
        cpuSeconds: Math.ceil(r.limits.timeoutMs / 1000) + 1,
        addressSpaceBytes: r.limits.maxMemoryBytes,
        processes: r.limits.maxProcesses,
        fileSizeBytes: r.limits.maxFileBytes,
      },
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
