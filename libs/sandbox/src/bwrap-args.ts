import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SandboxLimits } from './limits.js';
import { sandboxPath, type Toolbox } from './toolbox.js';

/** Where the workspace is mounted inside the sandbox (also the working directory). */
export const SANDBOX_WORKSPACE = '/workspace';

/** The sandbox's user: not root, so nothing inside runs with a uid 0 even in its own namespace. */
const SANDBOX_UID = '1000';

/**
 * Pieces of /etc the tools need: Debian's /usr/bin symlinks point into /etc/alternatives, the
 * dynamic loader reads ld.so.cache, Python reads localtime and mime.types, matplotlib fontconfig.
 * Never the whole /etc (shadow, machine secrets, service configuration).
 */
const ETC_PIECES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/mime.types',
  '/etc/fonts',
  // Debian's LibreOffice links its registry and printer settings there (the skills toolbox's soffice).
  '/etc/libreoffice',
];

let identityDir: string | undefined;
/**
 * A passwd and group naming only the sandbox user, mounted over /etc/passwd and /etc/group: programs
 * that look their user up (LibreOffice aborts without an entry, Python's getpass, ssh) find one,
 * and the host's accounts stay out.
 *
 * Written once into one folder per user, `<tmpdir>/agentloop-sandbox-identity-<uid>`, shared by
 * that user's processes: a folder per process was left behind by every process killed by a signal
 * (no exit handler runs then). The shared folder is used only if it is a real directory (not a
 * link), owned by this user and closed to everyone else (mode 0700), so no other user can choose
 * what a sandbox sees as /etc/passwd; the files are checked and, if different, replaced atomically.
 * Otherwise a private folder of this process is used, removed when it exits.
 */
function identityFiles(): { passwd: string; group: string } {
  identityDir ??= sharedIdentityDir() ?? privateIdentityDir();
  const passwd = path.join(identityDir, 'passwd');
  const group = path.join(identityDir, 'group');
  ensureFile(passwd, `sandbox:x:${SANDBOX_UID}:${SANDBOX_UID}:sandbox:${SANDBOX_WORKSPACE}:/bin/sh\n`);
  ensureFile(group, `sandbox:x:${SANDBOX_UID}:\n`);
  return { passwd, group };
}

function sharedIdentityDir(): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  const dir = path.join(os.tmpdir(), `agentloop-sandbox-identity-${uid}`);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return undefined;
  }
  const st = lstatSync(dir);
  return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0 ? dir : undefined;
}

function privateIdentityDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'agentloop-sandbox-identity-'));
  // Removed when the process (or worker thread) exits normally.
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `file` holds exactly `content` as a regular file: written beside it and renamed over it if not. */
function ensureFile(file: string, content: string): void {
  try {
    if (lstatSync(file).isFile() && readFileSync(file, 'utf8') === content) return;
  } catch {
    // Missing: written below.
  }
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  writeFileSync(tmp, content, { mode: 0o644, flag: 'wx' });
  renameSync(tmp, file);
}

/** The top-level links of a merged-/usr system (Debian 12), recreated inside. */
const USR_LINKS: Array<[string, string]> = [
  ['usr/bin', '/bin'],
  ['usr/sbin', '/sbin'],
  ['usr/lib', '/lib'],
  ['usr/lib64', '/lib64'],
];

export interface BwrapPlan {
  /** The host folder mounted read-write at /workspace. */
  workspaceDir: string;
  /** Program and arguments run inside (resolved inside the sandbox). */
  argv: readonly string[];
  env?: Readonly<Record<string, string>>;
  extraReadOnlyPaths?: readonly string[];
  /** The skills toolbox: mounted read-only, its bin first on PATH, its node_modules on NODE_PATH (`env` may override both). */
  toolbox?: Toolbox;
  /** Host path → sandbox path, bound read-only (the network proxy's socket). */
  readOnlyBinds?: ReadonlyArray<readonly [string, string]>;
}

/**
 * bwrap's arguments: every namespace unshared (mount, PID, network, IPC, UTS, cgroup, user),
 * the sandbox user not root, all capabilities dropped, a new session (no terminal injection),
 * killed with its parent, /usr and a few /etc pieces read-only, private /tmp, /proc and /dev,
 * the workspace the only writable host folder, a clean environment.
 */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const args = [
    '--unshare-all',
    '--unshare-user',
    '--uid',
    SANDBOX_UID,
    '--gid',
    SANDBOX_UID,
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'sandbox',
    '--ro-bind',
    '/usr',
    '/usr',
  ];
  for (const [target, link] of USR_LINKS) if (existsSync(`/${target}`)) args.push('--symlink', target, link);
  for (const p of [...ETC_PIECES, ...(plan.extraReadOnlyPaths ?? [])]) if (existsSync(p)) args.push('--ro-bind', p, p);
  const identity = identityFiles();
  args.push('--ro-bind', identity.passwd, '/etc/passwd', '--ro-bind', identity.group, '/etc/group');
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--bind', plan.workspaceDir, SANDBOX_WORKSPACE);
  // After the private /tmp, so a toolbox kept under /tmp (tests, a developer's machine) is not hidden by it.
  if (plan.toolbox) args.push('--ro-bind', plan.toolbox.dir, plan.toolbox.dir);
  for (const [host, inside] of plan.readOnlyBinds ?? []) args.push('--ro-bind', host, inside);
  // The root bwrap builds is a tmpfs: read-only once everything is mounted, so /tmp and the workspace are the only writable places.
  args.push('--remount-ro', '/', '--chdir', SANDBOX_WORKSPACE);
  const env: Record<string, string> = {
    PATH: sandboxPath(plan.toolbox, ['/usr/local/bin', '/usr/bin', '/bin']),
    ...(plan.toolbox?.nodeModules ? { NODE_PATH: plan.toolbox.nodeModules } : {}),
    HOME: SANDBOX_WORKSPACE,
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
    // matplotlib needs a writable config folder and no display.
    MPLCONFIGDIR: '/tmp/matplotlib',
    MPLBACKEND: 'Agg',
    PYTHONDONTWRITEBYTECODE: '1',
    ...plan.env,
  };
  args.push('--clearenv');
  for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
  args.push('--', ...plan.argv);
  return args;
}

/** prlimit's options for the limits each process inside inherits. */
export function prlimitArgs(limits: SandboxLimits): string[] {
  return [
    `--as=${limits.memoryBytes}`,
    `--cpu=${limits.cpuSeconds}`,
    `--nproc=${limits.maxProcesses}`,
    `--fsize=${limits.maxFileBytes}`,
    '--core=0',
    '--nofile=1024',
  ];
}
