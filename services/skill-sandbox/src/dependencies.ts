import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { errorMessage, type Logger } from '@agentloop/core';
import type { Skill } from '@agentloop/skills';
import { runIsolated, type PythonInfo } from './runner.js';

/** Marks a complete install; a folder without it is never used. */
const DONE_MARKER = '.agentloop-installed';

/** Proxy and index settings of the service handed to pip (and nothing else of its environment). */
const PIP_ENV_PASSTHROUGH = [
  'PIP_INDEX_URL',
  'PIP_EXTRA_INDEX_URL',
  'PIP_TRUSTED_HOST',
  'PIP_FIND_LINKS',
  'PIP_CERT',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
];

export interface DependencyStatus {
  /** True as well when the skill has no requirements.txt. */
  installed: boolean;
  /** The installed packages (for PYTHONPATH), when there are any. */
  dir?: string;
  /** Friendly explanation when the install failed. */
  warning?: string;
}

export interface DependencyInstallerOptions {
  /** SKILLS_CACHE: `<cache>/<sha256>` per requirements content and Python version. */
  cacheRoot: string;
  python: () => Promise<PythonInfo | undefined>;
  timeoutMs: number;
  /** pip --only-binary=:all: (no setup.py of a source package runs). */
  binaryOnly: boolean;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  /**
   * Applied to every warning (they reach the model and the caller): pip's messages and file system
   * errors name the requirements file, the cache and temp folders by host path. Default: none.
   */
  redact?: (text: string) => string;
}

/**
 * Installs a skill's requirements.txt (seed 000 §3.5) with `pip install --target` into a cache
 * folder named by the hash of the file's content and the Python version, once: later loads of any
 * skill with the same requirements, on any replica sharing the cache volume, reuse it. Concurrent
 * loads in this process share one install; replicas race harmlessly (install to a temporary
 * folder, then rename). A failure becomes a warning, remembered until the next reload so a broken
 * requirements.txt does not cost a pip run on every call.
 */
export class DependencyInstaller {
  private readonly inflight = new Map<string, Promise<DependencyStatus>>();
  private readonly failures = new Map<string, DependencyStatus>();

  constructor(private readonly opts: DependencyInstallerOptions) {}

  /** Forgets remembered failures (on reload: the requirements or the index may have been fixed). */
  forgetFailures(): void {
    this.failures.clear();
  }

  /** Makes sure the skill's dependencies are installed; never throws. Warnings are redacted (see `redact`). */
  async ensure(skill: Skill): Promise<DependencyStatus> {
    const status = await this.check(skill);
    const redact = this.opts.redact;
    return status.warning === undefined || !redact ? status : { ...status, warning: redact(status.warning) };
  }

  private async check(skill: Skill): Promise<DependencyStatus> {
    if (!skill.hasRequirements) return { installed: true };
    const reqPath = path.join(skill.dir, 'requirements.txt');
    let content: string;
    try {
      content = await fs.readFile(reqPath, 'utf8');
    } catch (err) {
      return { installed: false, warning: `requirements.txt of skill ${skill.id} cannot be read: ${errorMessage(err)}` };
    }
    if (!hasRequirements(content)) return { installed: true };
    const python = await this.opts.python();
    if (!python) {
      return { installed: false, warning: `Dependencies of skill ${skill.id} were not installed: Python 3 is not available on the skill sandbox.` };
    }
    const key = createHash('sha256').update(`python ${python.version}\n`).update(content).digest('hex');
    const dir = path.join(this.opts.cacheRoot, key);
    if (await isInstalled(dir)) return { installed: true, dir };
    const failed = this.failures.get(key);
    if (failed) return failed;
    let job = this.inflight.get(key);
    if (!job) {
      job = this.install(skill, python, reqPath, key, dir).finally(() => this.inflight.delete(key));
      this.inflight.set(key, job);
    }
    return job;
  }

  private async install(skill: Skill, python: PythonInfo, reqPath: string, key: string, dir: string): Promise<DependencyStatus> {
    const log = this.opts.logger.child({ skill: skill.id, deps: key.slice(0, 12) });
    await fs.mkdir(this.opts.cacheRoot, { recursive: true });
    const staging = path.join(this.opts.cacheRoot, `.tmp-${key.slice(0, 16)}-${randomUUID()}`);
    const home = await fs.mkdtemp(path.join(tmpdir(), 'agentloop-pip-'));
    const env: Record<string, string> = {
      PATH: [...new Set([path.dirname(python.executable), '/usr/local/bin', '/usr/bin', '/bin'])].join(':'),
      LANG: 'C.UTF-8',
      HOME: home,
      TMPDIR: home,
      PIP_NO_CACHE_DIR: '1',
      PIP_DISABLE_PIP_VERSION_CHECK: '1',
    };
    const source = this.opts.env ?? process.env;
    for (const k of PIP_ENV_PASSTHROUGH) if (source[k]) env[k] = source[k];
    const args = ['-m', 'pip', 'install', '--no-input', '--no-warn-script-location', '--target', staging, '-r', reqPath];
    if (this.opts.binaryOnly) args.push('--only-binary=:all:');
    log.info('installing skill dependencies');
    try {
      const res = await runIsolated({
        command: python.executable,
        args,
        cwd: home,
        env,
        input: '',
        timeoutMs: this.opts.timeoutMs,
        maxOutputBytes: 256 * 1024,
      });
      if (res.timedOut || res.exitCode !== 0) {
        const why = res.timedOut
          ? `pip did not finish within ${Math.round(this.opts.timeoutMs / 1000)} s`
          : res.spawnError
            ? `pip could not start: ${res.spawnError}`
            : `pip exited ${res.exitCode ?? res.signal}`;
        const detail = tail(res.stderr || res.stdout);
        log.warn({ reason: why, detail }, 'skill dependencies could not be installed');
        const status: DependencyStatus = {
          installed: false,
          warning:
            `Dependencies of skill ${skill.id} (skills/${skill.id}/requirements.txt) could not be installed (${why})` +
            `${detail ? `: ${detail}` : ''}. The skill's document is available, but its Python scripts may fail with a missing module.`,
        };
        this.failures.set(key, status);
        return status;
      }
      await fs.writeFile(path.join(staging, DONE_MARKER), `${new Date().toISOString()}\n`);
      try {
        await fs.rename(staging, dir);
      } catch (err) {
        // Another replica finished first: its folder is as good as ours.
        if (!(await isInstalled(dir))) throw err;
      }
      log.info('skill dependencies installed');
      return { installed: true, dir };
    } catch (err) {
      const status: DependencyStatus = { installed: false, warning: `Dependencies of skill ${skill.id} could not be installed: ${errorMessage(err)}` };
      this.failures.set(key, status);
      return status;
    } finally {
      await fs.rm(staging, { recursive: true, force: true });
      await fs.rm(home, { recursive: true, force: true });
    }
  }
}

/** A requirements file with at least one line that is neither blank nor a comment. */
function hasRequirements(content: string): boolean {
  return content.split(/\r?\n/).some((l) => l.trim() !== '' && !l.trim().startsWith('#'));
}

async function isInstalled(dir: string): Promise<boolean> {
  return (await fs.lstat(path.join(dir, DONE_MARKER)).catch(() => undefined))?.isFile() === true;
}

function tail(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  // pip's last ERROR lines say what went wrong.
  const errors = lines.filter((l) => l.startsWith('ERROR:'));
  return (errors.length > 0 ? errors : lines).slice(-3).join(' ').slice(0, 600);
}
