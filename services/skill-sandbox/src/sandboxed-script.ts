import path from 'node:path';
import { describeLimit, SANDBOX_WORKSPACE, sandboxPath, type Sandbox } from '@agentloop/sandbox';
import type { ProcessResult, ScriptRun } from './runner.js';

/** Where the skill's folder is mounted, read-only, inside the bubblewrap sandbox (AGENT_SKILL_DIR). */
export const SKILL_IN_SANDBOX = '/skill';
/** The skill's `pip install --target` folder, read-only (after /skill on PYTHONPATH). */
export const PYTHON_DEPS_IN_SANDBOX = '/skill-deps/python';
/** The skill's installed node_modules, read-only (NODE_PATH). */
export const NODE_MODULES_IN_SANDBOX = '/skill-deps/node_modules';

export type SandboxedScriptRun = Omit<ScriptRun, 'capabilities'> & {
  /** Host folders the interpreter needs (PythonInfo.roots, Node's install folder); those outside /usr are mounted read-only at the same path. */
  interpreterRoots: readonly string[];
};

const isUnder = (p: string, root: string) => p === root || p.startsWith(`${root}/`);

/** The interpreter folders to mount: outside /usr (already mounted), not `/`, none inside another. */
function interpreterBinds(roots: readonly string[]): string[] {
  const wanted = [...new Set(roots.map((r) => path.resolve(r)))].filter((r) => r !== '/' && !isUnder(r, '/usr'));
  return wanted.filter((r) => !wanted.some((other) => other !== r && isUnder(r, other)));
}

/**
 * Runs one skill script in libs/sandbox's bubblewrap sandbox (README "Skills"), with the semantics
 * runScript documents: the workspace (the only writable host folder) as cwd and
 * AGENT_WORKSPACE_PATH, the skill's folder read-only at /skill and importable (PYTHONPATH
 * /skill then the installed dependencies, read-only too), argv and stdin as given. The skill is also
 * mounted at its host path, read-only, so the workspace's `skills/<id>` link resolves inside. The
 * interpreter's folders outside /usr (a venv such as /opt/skills-toolbox/python, pyenv) are mounted
 * read-only. HOME and TMPDIR are the sandbox's private /tmp, gone with the run.
 */
export async function runScriptInSandbox(sandbox: Sandbox, r: SandboxedScriptRun): Promise<ProcessResult> {
  const inSkill = (p: string) => path.posix.join(SKILL_IN_SANDBOX, ...path.relative(r.skillDir, p).split(path.sep));
  const binds: Array<[string, string]> = [
    [r.skillDir, SKILL_IN_SANDBOX],
    [r.skillDir, r.skillDir],
  ];
  for (const root of interpreterBinds(r.interpreterRoots)) binds.push([root, root]);
  if (r.pythonPath) binds.push([r.pythonPath, PYTHON_DEPS_IN_SANDBOX]);
  if (r.nodeModules) binds.push([r.nodeModules, NODE_MODULES_IN_SANDBOX]);
  const env: Record<string, string> = {
    PATH: sandboxPath(sandbox.config.toolbox, [path.dirname(r.interpreter), '/usr/local/bin', '/usr/bin', '/bin']),
    HOME: '/tmp',
    TMPDIR: '/tmp',
    AGENT_WORKSPACE_PATH: SANDBOX_WORKSPACE,
    AGENT_SKILL_DIR: SKILL_IN_SANDBOX,
  };
  const args: string[] = [];
  if (r.kind === 'python') {
    Object.assign(env, { PYTHONUNBUFFERED: '1', PYTHONIOENCODING: 'utf-8' });
    env.PYTHONPATH = [SKILL_IN_SANDBOX, ...(r.pythonPath ? [PYTHON_DEPS_IN_SANDBOX] : [])].join(':');
    if ('module' in r.target) args.push('-m', r.target.module);
    else args.push(inSkill(r.target.script));
  } else {
    // The toolbox is mounted by the sandbox at its host path (SandboxConfig.toolbox).
    const toolboxModules = sandbox.config.toolbox?.nodeModules;
    const nodePath = [...(r.nodeModules ? [NODE_MODULES_IN_SANDBOX] : []), ...(toolboxModules ? [toolboxModules] : [])];
    if (nodePath.length > 0) env.NODE_PATH = nodePath.join(':');
    if (r.limits.maxMemoryBytes > 0) args.push(`--max-old-space-size=${Math.max(32, Math.floor(r.limits.maxMemoryBytes / 2 / 1024 / 1024))}`);
    if (r.nodePermissions) {
      args.push('--experimental-permission', '--disable-warning=ExperimentalWarning', `--allow-fs-write=${SANDBOX_WORKSPACE}`);
      for (const root of [SANDBOX_WORKSPACE, SKILL_IN_SANDBOX, r.skillDir, ...nodePath]) args.push(`--allow-fs-read=${root}`);
    }
    if ('script' in r.target) args.push(inSkill(r.target.script));
  }
  const res = await sandbox.run({
    workspaceDir: r.workspace,
    argv: [r.interpreter, ...args, ...r.argv],
    env,
    stdin: r.input,
    readOnlyBinds: binds,
  });
  const stdout = capBytes(res.stdout, r.limits.maxOutputBytes);
  const stderr = capBytes(res.stderr, r.limits.maxOutputBytes);
  const limit = res.limitHit === 'time' ? undefined : describeLimit(res);
  return {
    exitCode: res.exitCode,
    signal: res.signal,
    stdout: stdout.text,
    stderr: stderr.text,
    timedOut: res.limitHit === 'time',
    // The sandbox's budget is shared by both streams (twice the per-stream cap): what it dropped was cut from one of them.
    stdoutTruncated: stdout.cut || res.droppedBytes > 0,
    stderrTruncated: stderr.cut || res.droppedBytes > 0,
    ...(limit ? { limit } : {}),
  };
}

/** The first `max` bytes of a stream (SKILL_SCRIPT_MAX_OUTPUT_BYTES is per stream). */
function capBytes(text: string, max: number): { text: string; cut: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return { text, cut: false };
  return { text: bytes.subarray(0, max).toString('utf8'), cut: true };
}
