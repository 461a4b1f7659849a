import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

export interface ScriptLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  /** Address-space limit for Python scripts (bytes), applied with prlimit when available. */
  maxMemoryBytes: number;
}

export interface ScriptResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
}

const PRLIMIT = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));

/** The real Python interpreter (not a pyenv shim, which needs the parent's environment). */
export async function resolvePython(command = 'python3'): Promise<string | undefined> {
  try {
    const { stdout } = await promisify(execFile)(command, ['-c', 'import sys; print(sys.executable)'], { timeout: 10_000 });
    const exe = stdout.trim();
    return exe !== '' ? exe : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs one skill script in its own process group: JSON arguments on stdin, the workspace as cwd, an
 * environment reduced to PATH, LANG, HOME (a fresh temp dir) and AGENT_WORKSPACE_PATH — nothing of
 * this service's environment (secrets) leaks in. The whole group is killed at the timeout; output is
 * capped. CPU time (and, for Python, address space) are limited with prlimit when it is installed.
 * Network access is NOT restricted (that needs namespaces this service does not assume).
 */
export async function runScript(opts: {
  interpreter: string;
  kind: 'python' | 'node';
  script: string;
  workspace: string;
  input: string;
  limits: ScriptLimits;
  extraEnv?: Record<string, string>;
}): Promise<ScriptResult> {
  const home = await mkdtemp(path.join(tmpdir(), 'agentloop-skill-'));
  const cpuSeconds = Math.max(1, Math.ceil(opts.limits.timeoutMs / 1000));
  const base = opts.kind === 'node' ? [opts.interpreter, '--max-old-space-size=512', opts.script] : [opts.interpreter, opts.script];
  const limits = PRLIMIT ? [PRLIMIT, `--cpu=${cpuSeconds}`, ...(opts.kind === 'python' ? [`--as=${opts.limits.maxMemoryBytes}`] : []), '--'] : [];
  const argv = [...limits, ...base];
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    HOME: home,
    AGENT_WORKSPACE_PATH: opts.workspace,
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONUNBUFFERED: '1',
    ...opts.extraEnv,
  };
  try {
    return await new Promise<ScriptResult>((resolve) => {
      const child = spawn(argv[0]!, argv.slice(1), { cwd: opts.workspace, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outSize = 0;
      let errSize = 0;
      let truncated = false;
      let timedOut = false;
      const killGroup = () => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, opts.limits.timeoutMs);
      const collect = (chunks: Buffer[], which: 'out' | 'err') => (d: Buffer) => {
        const size = which === 'out' ? outSize : errSize;
        const room = opts.limits.maxOutputBytes - size;
        if (room <= 0) {
          truncated = true;
          return;
        }
        const part = d.length > room ? d.subarray(0, room) : d;
        if (part.length < d.length) truncated = true;
        chunks.push(part);
        if (which === 'out') outSize += part.length;
        else errSize += part.length;
      };
      child.stdout.on('data', collect(out, 'out'));
      child.stderr.on('data', collect(err, 'err'));
      child.stdin.on('error', () => undefined);
      child.stdin.end(opts.input);
      child.on('error', (e) => {
        clearTimeout(timer);
        resolve({ exitCode: null, signal: null, stdout: '', stderr: `could not start the script: ${e.message}`, timedOut: false, truncated: false });
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        // Children the script left behind go with it.
        killGroup();
        resolve({ exitCode: code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut, truncated });
      });
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
