import { createHash, randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { errorMessage, type Logger } from '@agentloop/core';
import type { Skill } from '@agentloop/skills';
import { installFailure, npmInstall, pipInstall, type CommandContext } from './dependency-commands.js';
import type { PythonInfo } from './runner.js';

/** Marks a complete install; a folder without it is never used. */
const DONE_MARKER = '.agentloop-installed';
/** A lock whose holder stopped refreshing it for this long (a crashed replica) is taken over. */
const LOCK_STALE_MS = 30_000;

export interface DependencyStatus {
  /** True as well when the skill declares no dependencies. */
  installed: boolean;
  /** `pip install --target` folder of requirements.txt (for PYTHONPATH), when there is one. */
  pythonDir?: string;
  /** `<prefix>/node_modules` of package.json (for NODE_PATH), when there is one. */
  nodeModules?: string;
  /** Friendly explanation when an install failed. */
  warning?: string;
}

export interface DependencyInstallerOptions {
  /** SKILLS_CACHE: `<cache>/<skill>@<version>-<hash>/{python,node}`. */
  cacheRoot: string;
  python: () => Promise<PythonInfo | undefined>;
  timeoutMs: number;
  /** pip --only-binary=:all: (no setup.py of a source package runs). */
  binaryOnly: boolean;
  logger: Logger;
  /** Where pip's and npm's settings (PIP_*, NPM_CONFIG_*, proxies, HOME's config files) come from. Default: process.env. */
  env?: NodeJS.ProcessEnv;
  /** Applied to every warning (they reach the model): pip names host paths. Default: none. */
  redact?: (text: string) => string;
}

/** What a skill declares: requirements.txt and/or package.json, read once per install check. */
interface Declared {
  requirements?: string;
  packageJson?: string;
  packageLock?: string;
}

/**
 * Installs a skill's dependencies (seed 000 §3.5) once per skill version: requirements.txt with
 * `pip install --target <cache>/<skill>@<version>-<hash>/python`, package.json with npm under
 * `.../node`, from the registries the operator configured for the service. The hash covers the
 * declared files and the Python version, so an edited requirements.txt without a version bump is
 * not served stale. Concurrency: calls in this process share one install; replicas on one cache
 * volume take a lock file (`<entry>.lock`, proper-lockfile's mkdir lock with mtime refresh, so a
 * crashed holder's lock goes stale) and the others wait for its result. A failure becomes a
 * warning, remembered until the next reload so a broken requirements.txt does not cost a pip run
 * on every call.
 */
export class DependencyInstaller {
  private readonly inflight = new Map<string, Promise<DependencyStatus>>();
  private readonly failures = new Map<string, DependencyStatus>();

  constructor(private readonly opts: DependencyInstallerOptions) {}

  /** Forgets remembered failures (on reload: the requirements or the index may have been fixed). */
  forgetFailures(): void {
    this.failures.clear();
  }

  /** The cache entry of a skill's dependencies (exported for tests and operators' tooling). */
  entryDir(skill: Skill, key: string): string {
    return path.join(this.opts.cacheRoot, `${skill.id}@${safeVersion(skill.version)}-${key.slice(0, 16)}`);
  }

  /** Makes sure the skill's dependencies are installed; never throws. Warnings are redacted (see `redact`). */
  async ensure(skill: Skill): Promise<DependencyStatus> {
    let status: DependencyStatus;
    try {
      status = await this.check(skill);
    } catch (err) {
      status = { installed: false, warning: `Dependencies of skill ${skill.id} could not be installed: ${errorMessage(err)}` };
    }
    const redact = this.opts.redact;
    return status.warning === undefined || !redact ? status : { ...status, warning: redact(status.warning) };
  }

  private async check(skill: Skill): Promise<DependencyStatus> {
    const declared = await readDeclared(skill);
    if (!declared.requirements && !declared.packageJson) return { installed: true };
    const python = declared.requirements ? await this.opts.python() : undefined;
    if (declared.requirements && !python) {
      return { installed: false, warning: `Dependencies of skill ${skill.id} were not installed: Python 3 is not available on the skill sandbox.` };
    }
    const key = createHash('sha256')
      .update(`python ${python?.version ?? '-'}\n`)
      .update(declared.requirements ?? '')
      .update('\0')
      .update(declared.packageJson ?? '')
      .update('\0')
      .update(declared.packageLock ?? '')
      .digest('hex');
    const entry = this.entryDir(skill, key);
    const done = await installedStatus(entry, declared);
    if (done) return done;
    const failed = this.failures.get(key);
    if (failed) return failed;
    let job = this.inflight.get(key);
    if (!job) {
      job = this.installLocked(skill, declared, python, entry, key).finally(() => this.inflight.delete(key));
      this.inflight.set(key, job);
    }
    return job;
  }

  /** Takes the entry's lock (waiting for another replica's install meanwhile), then installs what is missing. */
  private async installLocked(skill: Skill, declared: Declared, python: PythonInfo | undefined, entry: string, key: string): Promise<DependencyStatus> {
    await fs.mkdir(this.opts.cacheRoot, { recursive: true });
    const lockPath = `${entry}.lock`;
    const deadline = Date.now() + this.opts.timeoutMs + LOCK_STALE_MS;
    let release: (() => Promise<void>) | undefined;
    while (!release) {
      try {
        release = await lockfile.lock(entry, {
          realpath: false,
          lockfilePath: lockPath,
          stale: LOCK_STALE_MS,
          // The default throws from a timer (the process would crash): another replica may take over; say so.
          onCompromised: (err) =>
            this.opts.logger.warn({ skill: skill.id, err: errorMessage(err) }, 'dependency install lock lost; another replica may install too'),
        });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
        // Another replica installs this very entry: its result is ours once it is complete.
        const done = await installedStatus(entry, declared);
        if (done) return done;
        if (Date.now() > deadline) {
          return { installed: false, warning: `Dependencies of skill ${skill.id} are being installed by another replica; try again shortly.` };
        }
        await sleep(250);
      }
    }
    try {
      const done = await installedStatus(entry, declared);
      if (done) return done;
      const status = await this.install(skill, declared, python, entry);
      if (!status.installed) this.failures.set(key, status);
      return status;
    } finally {
      await release().catch(() => undefined);
    }
  }

  private async install(skill: Skill, declared: Declared, python: PythonInfo | undefined, entry: string): Promise<DependencyStatus> {
    const log = this.opts.logger.child({ skill: skill.id, version: skill.version, deps: path.basename(entry) });
    const home = await fs.mkdtemp(path.join(tmpdir(), 'agentloop-deps-'));
    const ctx: CommandContext = { home, timeoutMs: this.opts.timeoutMs, env: this.opts.env ?? process.env };
    const parts: Array<{ kind: 'python' | 'node'; run: (staging: string) => ReturnType<typeof pipInstall> }> = [];
    if (declared.requirements && python) {
      parts.push({ kind: 'python', run: (staging) => pipInstall(ctx, python, path.join(skill.dir, 'requirements.txt'), staging, this.opts.binaryOnly) });
    }
    if (declared.packageJson) parts.push({ kind: 'node', run: (staging) => npmInstall(ctx, skill.dir, staging) });
    try {
      await fs.mkdir(entry, { recursive: true });
      for (const part of parts) {
        const target = path.join(entry, part.kind);
        if (await isInstalled(target)) continue;
        const staging = path.join(entry, `.tmp-${part.kind}-${randomUUID()}`);
        log.info({ kind: part.kind }, 'installing skill dependencies');
        try {
          const res = await part.run(staging);
          const tool = part.kind === 'python' ? 'pip' : 'npm';
          if (res.timedOut || res.exitCode !== 0 || res.spawnError) {
            const why = installFailure(res, tool, this.opts.timeoutMs);
            log.warn({ kind: part.kind, reason: why }, 'skill dependencies could not be installed');
            const file = part.kind === 'python' ? 'requirements.txt' : 'package.json';
            return {
              installed: false,
              warning:
                `Dependencies of skill ${skill.id} (skills/${skill.id}/${file}) could not be installed: ${why}. ` +
                `The skill's document is available, but its scripts may fail with a missing module.`,
            };
          }
          await fs.writeFile(path.join(staging, DONE_MARKER), `${new Date().toISOString()}\n`);
          await fs.rm(target, { recursive: true, force: true });
          await fs.rename(staging, target);
          log.info({ kind: part.kind }, 'skill dependencies installed');
        } finally {
          await fs.rm(staging, { recursive: true, force: true });
        }
      }
      return (await installedStatus(entry, declared)) ?? { installed: false, warning: `Dependencies of skill ${skill.id} could not be installed` };
    } finally {
      await fs.rm(home, { recursive: true, force: true });
    }
  }
}

/** A version as a folder-name part: anything outside [A-Za-z0-9._-] becomes "_"; none: "unversioned". */
function safeVersion(version: string): string {
  return version ? version.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) : 'unversioned';
}

async function readDeclared(skill: Skill): Promise<Declared> {
  const read = (name: string) => fs.readFile(path.join(skill.dir, name), 'utf8').catch(() => undefined);
  const out: Declared = {};
  if (skill.hasRequirements) {
    const req = await read('requirements.txt');
    if (req !== undefined && hasRequirements(req)) out.requirements = req;
  }
  if (skill.hasPackageJson) {
    const pkg = await read('package.json');
    if (pkg !== undefined && hasNodeDependencies(pkg)) {
      out.packageJson = pkg;
      const lock = await read('package-lock.json');
      if (lock !== undefined) out.packageLock = lock;
    }
  }
  return out;
}

/** The status when every declared part is installed in `entry`, else undefined. */
async function installedStatus(entry: string, declared: Declared): Promise<DependencyStatus | undefined> {
  const pythonDir = path.join(entry, 'python');
  const nodeDir = path.join(entry, 'node');
  if (declared.requirements && !(await isInstalled(pythonDir))) return undefined;
  if (declared.packageJson && !(await isInstalled(nodeDir))) return undefined;
  return {
    installed: true,
    ...(declared.requirements ? { pythonDir } : {}),
    ...(declared.packageJson ? { nodeModules: path.join(nodeDir, 'node_modules') } : {}),
  };
}

/** A requirements file with at least one line that is neither blank nor a comment. */
function hasRequirements(content: string): boolean {
  return content.split(/\r?\n/).some((l) => l.trim() !== '' && !l.trim().startsWith('#'));
}

/** A package.json that declares at least one (production) dependency. */
function hasNodeDependencies(content: string): boolean {
  try {
    const pkg = JSON.parse(content) as { dependencies?: Record<string, unknown> };
    return Object.keys(pkg.dependencies ?? {}).length > 0;
  } catch {
    return false;
  }
}

async function isInstalled(dir: string): Promise<boolean> {
  return (await fs.lstat(path.join(dir, DONE_MARKER)).catch(() => undefined))?.isFile() === true;
}
