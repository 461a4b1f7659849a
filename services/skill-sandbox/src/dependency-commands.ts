import { existsSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { runIsolated, type ProcessResult, type PythonInfo } from './runner.js';

/** Proxy settings handed to pip and npm; their own settings pass by prefix (PIP_*, NPM_CONFIG_*). */
const PROXY_ENV = ['HTTP_PROXY', 'HTTPS_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'no_proxy'];

/** What one installer command needs besides its own arguments. */
export interface CommandContext {
  /** A fresh folder: HOME, TMPDIR and the cwd of the command. */
  home: string;
  timeoutMs: number;
  /** The service's environment: only the package managers' own settings are taken from it. */
  env: NodeJS.ProcessEnv;
}

/**
 * The environment of an installer: a clean PATH and HOME, plus the registries the operator
 * configured for the service — pip's and npm's own variables and config files (a user config in
 * the service's real home is pointed to explicitly, since HOME is a temp folder) and the proxies.
 */
export function installerEnv(ctx: CommandContext, binDir: string, kind: 'pip' | 'npm'): Record<string, string> {
  const env: Record<string, string> = {
    PATH: [...new Set([binDir, '/usr/local/bin', '/usr/bin', '/bin'])].join(':'),
    LANG: 'C.UTF-8',
    HOME: ctx.home,
    TMPDIR: ctx.home,
  };
  const prefix = kind === 'pip' ? /^PIP_/ : /^(NPM_CONFIG_|npm_config_)/;
  for (const [k, v] of Object.entries(ctx.env)) if (v !== undefined && (prefix.test(k) || PROXY_ENV.includes(k))) env[k] = v;
  const realHome = ctx.env.HOME ?? homedir();
  if (kind === 'pip') {
    env.PIP_NO_CACHE_DIR ??= '1';
    env.PIP_DISABLE_PIP_VERSION_CHECK = '1';
    const userConfig = [path.join(realHome, '.config', 'pip', 'pip.conf'), path.join(realHome, '.pip', 'pip.conf')].find((p) => existsSync(p));
    if (userConfig && !env.PIP_CONFIG_FILE) env.PIP_CONFIG_FILE = userConfig;
  } else {
    const npmrc = path.join(realHome, '.npmrc');
    if (existsSync(npmrc) && !env.NPM_CONFIG_USERCONFIG && !env.npm_config_userconfig) env.NPM_CONFIG_USERCONFIG = npmrc;
    env.NPM_CONFIG_UPDATE_NOTIFIER = 'false';
    env.NPM_CONFIG_FUND = 'false';
    env.NPM_CONFIG_AUDIT = 'false';
  }
  return env;
}

/** `pip install --target <target> -r requirements.txt`, wheels only unless `binaryOnly` is off. */
export function pipInstall(ctx: CommandContext, python: PythonInfo, requirements: string, target: string, binaryOnly: boolean): Promise<ProcessResult> {
  const args = ['-m', 'pip', 'install', '--no-input', '--no-warn-script-location', '--target', target, '-r', requirements];
  if (binaryOnly) args.push('--only-binary=:all:');
  return runIsolated({
    command: python.executable,
    args,
    cwd: ctx.home,
    env: installerEnv(ctx, path.dirname(python.executable), 'pip'),
    input: '',
    timeoutMs: ctx.timeoutMs,
    maxOutputBytes: 256 * 1024,
  });
}

/**
 * The skill's package.json (and lock file, when it ships one) installed under `prefix`
 * (`<prefix>/node_modules`): `npm ci` with a lock file, else `npm install`; production
 * dependencies only, and no install scripts (a package's own code does not run at install time).
 */
export async function npmInstall(ctx: CommandContext, skillDir: string, prefix: string): Promise<ProcessResult> {
  await fs.mkdir(prefix, { recursive: true });
  await fs.copyFile(path.join(skillDir, 'package.json'), path.join(prefix, 'package.json'));
  const lock = path.join(skillDir, 'package-lock.json');
  const hasLock = existsSync(lock);
  if (hasLock) await fs.copyFile(lock, path.join(prefix, 'package-lock.json'));
  const nodeBin = path.dirname(process.execPath);
  const npmCli = path.join(nodeBin, '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js');
  const [command, first] = existsSync(npmCli) ? [process.execPath, [npmCli]] : ['npm', []];
  return runIsolated({
    command,
    args: [...first, hasLock ? 'ci' : 'install', '--prefix', prefix, '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'],
    cwd: ctx.home,
    env: installerEnv(ctx, nodeBin, 'npm'),
    input: '',
    timeoutMs: ctx.timeoutMs,
    maxOutputBytes: 256 * 1024,
  });
}

/**
 * Why an install failed, in words an operator can act on: the package index unreachable (offline,
 * proxy), a package not found on it, or the tool's own last error lines.
 */
export function installFailure(res: ProcessResult, tool: 'pip' | 'npm', timeoutMs: number): string {
  if (res.spawnError) return `${tool} could not start: ${res.spawnError}`;
  if (res.timedOut) return `${tool} did not finish within ${Math.round(timeoutMs / 1000)} s`;
  const out = `${res.stderr}\n${res.stdout}`;
  const unreachable =
    /(Failed to establish a new connection|Temporary failure in name resolution|Network is unreachable|Connection refused|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|getaddrinfo)/i.test(
      out,
    );
  const detail = tail(out);
  const configure =
    tool === 'pip'
      ? 'configure the index for the skill sandbox (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, PIP_FIND_LINKS or a pip.conf)'
      : 'configure the registry for the skill sandbox (NPM_CONFIG_REGISTRY or an .npmrc)';
  if (unreachable) return `the package ${tool === 'pip' ? 'index' : 'registry'} cannot be reached (offline?); ${configure}: ${detail}`;
  if (/No matching distribution found|Could not find a version that satisfies|E404|404 Not Found/i.test(out)) {
    return `a package is not available from the configured ${tool === 'pip' ? 'index' : 'registry'}; ${configure}: ${detail}`;
  }
  return `${tool} exited ${res.exitCode ?? res.signal}${detail ? `: ${detail}` : ''}`;
}

function tail(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  // pip's and npm's last ERROR lines say what went wrong.
  const errors = lines.filter((l) => l.startsWith('ERROR:') || l.startsWith('npm error') || l.startsWith('npm ERR!'));
  return (errors.length > 0 ? errors : lines).slice(-3).join(' ').slice(0, 600);
}
